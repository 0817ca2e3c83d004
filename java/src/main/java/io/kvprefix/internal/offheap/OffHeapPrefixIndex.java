package io.kvprefix.internal.offheap;

import io.kvprefix.BlockHasher;
import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.IndexStats;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchExplanation;
import io.kvprefix.MatchResult;
import io.kvprefix.Medium;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.internal.Explanations;
import io.kvprefix.internal.MatchResults;
import io.kvprefix.internal.event.DecodedEvent;
import io.kvprefix.internal.event.EventDecoder;
import io.kvprefix.internal.event.IndexWriter;
import io.kvprefix.internal.hash.SaltedHashers;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The off-heap chain index, kvprefix's default {@link PrefixIndex}: it coordinates the runs
 * ({@link RunArena}), the child table and the gates ({@link Generations}), the workers' holdings
 * ({@link WorkerHoldings}, changed by {@link ChainWriter} and {@link Reach}), their slots
 * ({@link WorkerSlots}) and a match kernel ({@link MatchKernel}). The design is described in this
 * package's {@code package-info.java}.
 *
 * <p>Thread-safety: {@link #match}, {@link #stats} and the other reads from any number of threads
 * at any time; {@link #apply} concurrently for events of different worker ids, never concurrently
 * for events of one worker id; {@link #close} from any thread.
 */
public final class OffHeapPrefixIndex implements PrefixIndex, IndexWriter {
    private static final MatchResults RESULTS = MatchResults.access();

    final IndexConfig config;
    private final BlockHasher hasher;
    private final EventDecoder decoder;
    final SaltedHashers hashers;
    private final MatchKernel kernel;
    final MemoryPool pool;
    final Generations generations;
    final RunArena arena;
    private final Reach reach;
    private final ChainWriter writer;
    final WorkerSlots slots;
    final TierViews tiers;
    final ConcurrentHashMap<Worker, WorkerHoldings> workers = new ConcurrentHashMap<>();
    /** Striped: every event adds to it, and one shared counter would pass its cache line between the writers' cores. */
    final LongAdder heldPairs = new LongAdder();

    final LongAdder[] statusCounts = new LongAdder[EventStatus.values().length];
    volatile Map<String, String> restoredMetadata = Map.of();
    /** Test hook on every entry change (package-private: set only by this package's tests). */
    final ReachWatch watch;

    private final ThreadLocal<ReadScratch> readScratch = ThreadLocal.withInitial(ReadScratch::new);
    private final ThreadLocal<WriteScratch> writeScratch = ThreadLocal.withInitial(WriteScratch::new);

    public OffHeapPrefixIndex(IndexConfig config) {
        // runs hold up to 64 blocks; on real streams about 20
        this(config, config.expectedBlocks() / 32, (int) Math.min(1 << 24, config.expectedBlocks() / 32));
    }

    /** An empty index sized for {@code childRecords} child records and run ids below {@code runIds}. */
    private OffHeapPrefixIndex(IndexConfig config, long childRecords, int runIds) {
        this.config = Objects.requireNonNull(config, "config");
        this.hasher = config.hasher();
        this.decoder = new EventDecoder(config);
        this.hashers = decoder.hashers();
        this.kernel = MatchKernel.of(config);
        this.pool = new MemoryPool(config.memoryBudgetBytes());
        this.generations = new Generations(pool, childRecords);
        this.arena = new RunArena(pool, generations.reclaimer(), runIds);
        generations.reclaimer().attach(arena);
        this.reach = new Reach(arena, generations, generations.reclaimer());
        this.watch = reach.watch;
        this.writer = new ChainWriter(arena, generations, reach);
        this.slots = new WorkerSlots(config.maxWorkers());
        this.tiers = new TierViews(this, writer, reach, arena, slots, pool);
        for (int i = 0; i < statusCounts.length; i++) {
            statusCounts[i] = new LongAdder();
        }
    }

    // =================================================================== writes

    @Override
    public EventStatus apply(KvEvent event) {
        Objects.requireNonNull(event, "event");
        if (generations.closed()) {
            throw Generations.closedException();
        }
        WriteScratch ws = writeScratch.get();
        DecodedEvent d = ws.decoded;
        EventStatus rejected = decoder.decode(event, d);
        if (rejected != null) {
            statusCounts[rejected.ordinal()].increment();
            return rejected;
        }
        while (true) {
            EventStatus s = applyOnce(d, ws);
            if (s != null) {
                return s; // counted inside the gates, so a snapshot's counters agree with its state
            }
            if (!generations.growChildren(ws.needChildRecords)) {
                statusCounts[EventStatus.CAPACITY_EXCEEDED.ordinal()].increment();
                return EventStatus.CAPACITY_EXCEEDED;
            }
        }
    }

    /** One attempt inside the gates: a status, or null to grow the child table ({@code ws.needChildRecords}) and try again. */
    private EventStatus applyOnce(DecodedEvent d, WriteScratch ws) {
        EventStatus s;
        long token = generations.enterWrite();
        try {
            if (generations.closed()) {
                throw Generations.closedException();
            }
            ws.needChildRecords = 0;
            ws.heldDelta = 0;
            s = d.applyTo(this);
            if (s != null) {
                statusCounts[s.ordinal()].increment();
            }
        } finally {
            if (ws.heldDelta != 0) {
                heldPairs.add(ws.heldDelta); // one add per event, not per block
            }
            generations.exitWrite(token);
        }
        if (!ws.pendingRelease.isEmpty()) {
            releaseSlots(ws);
        }
        generations.reclaimer().maybeFlush();
        return s;
    }

    /**
     * Rules 2 to 5 of a store (docs/SPEC.md section 3) on the GPU, mirrored to the worker's any-tier
     * view if it has one; a store on a lower tier goes to {@link TierViews} (section 3.1).
     */
    @Override
    public EventStatus store(
            Worker worker,
            Medium medium,
            boolean hasParent,
            long parentHash,
            long[] blockHashes,
            long[] locals,
            int n) {
        WriteScratch ws = writeScratch.get();
        WorkerHoldings h = workers.get(worker);
        if (medium != Medium.GPU) {
            return tiers.storeLower(h, worker, medium, hasParent, parentHash, blockHashes, locals, n, ws);
        }
        int parent = -1;
        if (hasParent) {
            parent = h == null ? -1 : h.names.get(parentHash);
            if (parent < 0) {
                return EventStatus.PARENT_BLOCK_NOT_FOUND;
            }
        }
        EventStatus s = storeOn(h, worker, parent, blockHashes, locals, n);
        if (s == EventStatus.OK && (h = workers.get(worker)).anyTier != null) {
            return tiers.mirrorStore(h, hasParent, parentHash, blockHashes, locals, n, ws);
        }
        return s;
    }

    /**
     * Stores on {@code h} (null: a new worker, which gets a slot) after block {@code parent} (-1: a
     * new chain): room is reserved in the child table, the run arena and the name map before
     * anything changes, so a store applies whole or not at all. Null to retry after the child table
     * grew ({@code needChildRecords}).
     */
    EventStatus storeOn(WorkerHoldings h, Worker worker, int parent, long[] blockHashes, long[] locals, int n) {
        WriteScratch ws = writeScratch.get();
        ChildTable ct = generations.children();
        int records = ChainWriter.childRecordsFor(n);
        if (!ct.reserve(records, ws)) {
            ws.needChildRecords = records;
            return null;
        }
        ws.childRecords = 0;
        try {
            if (!arena.ensureHeadroom(ChainWriter.bytesFor(n))) {
                return EventStatus.CAPACITY_EXCEEDED;
            }
            if (h == null) {
                h = newWorker(worker, blockHashes, n);
                if (h == null) {
                    return EventStatus.CAPACITY_EXCEEDED;
                }
            } else if (!h.names.ensureRoomFor(blockHashes, n)) {
                return EventStatus.CAPACITY_EXCEEDED;
            }
            return writer.store(h, parent, blockHashes, locals, n, ws);
        } finally {
            ct.release(records - ws.childRecords, ws);
        }
    }

    /**
     * A slot and a name map with room for the names {@code names0[0..n)} for a worker's first store
     * (none for a lower tier's), or null if there is no room for either.
     */
    WorkerHoldings newWorker(Worker worker, long[] names0, int n) {
        int slot = slots.claim(worker);
        if (slot == WorkerSlots.FULL) {
            return null;
        }
        // Sized for the worker's expected share up front (if the config says and the budget allows), then this store.
        NameMap names = NameMap.create(pool, (int) Math.min(1 << 26, config.expectedBlocksPerWorker()));
        if (names == null) {
            names = NameMap.create(pool, 0); // the share does not fit the budget: start small
        }
        if (names != null && !names.ensureRoomFor(names0, n)) {
            names.free();
            names = null;
        }
        if (names == null) {
            slots.releaseUnused(slot);
            return null;
        }
        WorkerHoldings h = new WorkerHoldings(worker, slot, names);
        workers.put(worker, h);
        return h;
    }

    @Override
    public EventStatus copy(Worker worker, Medium medium, long[] hashes) {
        return tiers.copy(workers.get(worker), medium, hashes, writeScratch.get());
    }

    @Override
    public EventStatus remove(Worker worker, Medium medium, long[] hashes) {
        WorkerHoldings h = workers.get(worker);
        WriteScratch ws = writeScratch.get();
        if (medium != Medium.GPU) {
            return tiers.removeLower(h, medium, hashes, ws);
        }
        if (h == null) {
            return hashes.length == 0 ? EventStatus.OK : EventStatus.BLOCK_NOT_FOUND;
        }
        EventStatus s = writer.remove(h, hashes, ws);
        tiers.mirrorRemove(h, hashes, ws);
        return s;
    }

    @Override
    public void clear(Worker worker) {
        WorkerHoldings h = workers.get(worker);
        if (h == null) {
            return;
        }
        tiers.drop(h, writeScratch.get());
        heldPairs.add(-writer.clear(h, writeScratch.get()));
        // Give the memory back: a fresh minimal map, or (if even that does not fit) the old one emptied.
        NameMap fresh = h.names.capacity() > NameMap.MIN_CAPACITY ? NameMap.create(pool, 0) : null;
        if (fresh != null) {
            h.names.free();
            h.names = fresh;
        } else {
            h.names.clear();
        }
    }

    /**
     * Forgets every dp rank of {@code workerId}. Their slots are released after the event, once the
     * readers that may have seen their entries have left; that wait happens outside the gates.
     */
    @Override
    public void removeWorker(long workerId) {
        WriteScratch ws = writeScratch.get();
        for (WorkerHoldings h : workers.values()) {
            if (h.worker.workerId() == workerId) {
                tiers.drop(h, ws);
                heldPairs.add(-writer.clear(h, ws));
                workers.remove(h.worker);
                ws.pendingRelease.add(h);
            }
        }
    }

    private void releaseSlots(WriteScratch ws) {
        generations.synchronizeReaders(); // a slot must not name another worker while a reader may read its old entries
        slots.release(ws.pendingRelease);
        ws.pendingRelease.clear();
    }

    // =================================================================== reads

    /** True if matches run in the native kernel (one downcall per request), false on the Java path. */
    public boolean nativeMatch() {
        return kernel.isNative();
    }

    @Override
    public void match(long[] localHashes, int offset, int length, MatchResult into) {
        Objects.checkFromIndexSize(offset, length, localHashes.length);
        Objects.requireNonNull(into, "into");
        ReadScratch s = readScratch.get();
        int token = generations.enterRead();
        try {
            checkOpen();
            s.ensure(length, config.maxWorkers());
            RESULTS.reset(into, length);
            if (length > 0) {
                report(
                        into,
                        s,
                        kernel.matchHashes(generations.children(), arena.runTable(), localHashes, offset, length, s));
            }
        } finally {
            generations.exitRead(token);
        }
    }

    @Override
    public void match(int[] tokens, int offset, int length, BlockHasher h, MatchResult into) {
        Objects.checkFromIndexSize(offset, length, tokens.length);
        Objects.requireNonNull(into, "into");
        hashers.checkChainSeed(h);
        checkOpen();
        ReadScratch s = readScratch.get();
        int blocks = h.blockCount(length);
        int token = generations.enterRead();
        try {
            checkOpen();
            s.ensure(blocks, config.maxWorkers());
            RESULTS.reset(into, blocks);
            if (blocks > 0) {
                report(
                        into,
                        s,
                        kernel.matchTokens(generations.children(), arena.runTable(), tokens, offset, length, h, s));
            }
        } finally {
            generations.exitRead(token);
        }
    }

    private void checkOpen() {
        if (generations.closed()) {
            throw Generations.closedException();
        }
    }

    private void report(MatchResult into, ReadScratch s, int n) {
        if (tiers.count() == 0) {
            for (int i = 0; i < n; i++) {
                Worker w = slots.worker(s.outSlots[i]);
                if (w != null) {
                    RESULTS.add(into, w, s.outDepths[i]);
                }
            }
            return;
        }
        reportTiered(into, s, n);
    }

    /**
     * Pairs each worker's two slots (docs/SPEC.md section 3.1): a GPU slot gives the GPU depth, an
     * any-tier slot the any-tier depth; a worker whose view reports more than its GPU slot, or only
     * a view, gets both. While writes run the any-tier depth is reported as at least the GPU depth.
     */
    private void reportTiered(MatchResult into, ReadScratch s, int n) {
        for (int i = 0; i < n; i++) {
            int slot = s.outSlots[i];
            Worker w = slots.worker(slot);
            if (w != null && slots.gpuSlotOf(slot) < 0) {
                RESULTS.add(into, w, s.outDepths[i], s.outDepths[i]);
                s.resultAt[slot] = into.size();
            }
        }
        for (int i = 0; i < n; i++) {
            int slot = s.outSlots[i];
            int gpu = slots.gpuSlotOf(slot);
            Worker w = slots.worker(slot);
            if (w != null && gpu >= 0) {
                int at = s.resultAt[gpu];
                if (at > 0) {
                    RESULTS.raiseAnyTier(into, at - 1, s.outDepths[i]);
                } else {
                    RESULTS.add(into, w, 0, s.outDepths[i]);
                }
            }
        }
        for (int i = 0; i < n; i++) {
            s.resultAt[s.outSlots[i]] = 0;
        }
    }

    // =================================================================== snapshots

    /**
     * Writes the state to {@code file} (docs/SNAPSHOT.md) with every writer held out while it is
     * copied (readers go on); the file is forced to disk and renamed into place after writers resume.
     */
    @Override
    public void snapshot(Path file, Map<String, String> metadata) {
        ChainSnapshot.save(this, file, metadata);
    }

    @Override
    public Map<String, String> snapshotMetadata() {
        return restoredMetadata;
    }

    /** A new index holding the state of the snapshot {@code file} (docs/SNAPSHOT.md); see {@link PrefixIndex#restore}. */
    public static OffHeapPrefixIndex restore(Path file, IndexConfig config) {
        return ChainSnapshot.restore(file, config);
    }

    /** A restore's empty index, sized for the snapshot's runs. */
    static OffHeapPrefixIndex forRestore(IndexConfig config, long childRecords, int runIds) {
        return new OffHeapPrefixIndex(config, childRecords, runIds);
    }

    // =================================================================== explain

    @Override
    public MatchExplanation explain(long[] localHashes, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, localHashes.length);
        long[] q = Arrays.copyOfRange(localHashes, offset, offset + length);
        return Explanations.of(length, probe(q));
    }

    @Override
    public MatchExplanation explain(int[] tokens, int offset, int length, BlockHasher h) {
        Objects.requireNonNull(h, "hasher");
        hashers.checkChainSeed(h);
        checkOpen();
        return Explanations.ofTokens(this, hashers.salts(), tokens, offset, length, h, this::probe);
    }

    /** Every known worker's walk over {@code q}, with the writers held out (see {@link ChainExplainer}). */
    private List<Explanations.Probe> probe(long[] q) {
        checkOpen();
        return generations.withWritersHeldOut(() -> ChainExplainer.probe(
                generations.children(), arena.runTable(), List.copyOf(workers.values()), q, q.length));
    }

    // =================================================================== introspection

    @Override
    public long blockCount(Worker worker) {
        checkOpen();
        WorkerHoldings h = workers.get(worker);
        return h == null ? 0 : h.distinct;
    }

    @Override
    public List<Worker> workers() {
        checkOpen();
        List<Worker> out = new ArrayList<>(workers.keySet());
        out.sort(null);
        return List.copyOf(out);
    }

    @Override
    public long eventCount(EventStatus status) {
        return statusCounts[status.ordinal()].sum();
    }

    @Override
    public IndexStats stats() {
        Map<Worker, Long> perWorker = new TreeMap<>();
        long heap = 0;
        long entries;
        int capacity;
        int token = generations.enterRead();
        try {
            checkOpen();
            for (WorkerHoldings h : workers.values()) {
                perWorker.put(h.worker, h.distinct);
                heap += h.heapBytes();
            }
            entries = storedBlocks();
            capacity = generations.children().capacity;
            heap += arena.heapBytes();
        } finally {
            generations.exitRead(token);
        }
        Map<EventStatus, Long> events = new EnumMap<>(EventStatus.class);
        for (EventStatus st : EventStatus.values()) {
            events.put(st, statusCounts[st.ordinal()].sum());
        }
        return new IndexStats(
                perWorker.size(),
                heldPairs.sum(),
                entries,
                pool.used(),
                0,
                capacity,
                generations.rebuilds(),
                0,
                kernel.isNative(),
                perWorker,
                events);
    }

    /** Blocks stored in live runs (a reader's walk over the run table; dead runs waiting to be recycled do not count). */
    private long storedBlocks() {
        RunArena.RunTable t = arena.runTable();
        long n = 0;
        for (int r = 0; r < t.capacity(); r++) {
            long a = t.address(r);
            if (a != 0
                    && (Mem.getIntAcquire(a + ChainLayout.RUN_LOCK) & (ChainLayout.LOCK_DEAD | ChainLayout.LOCK_MOVED))
                            == 0) {
                n += Runs.length(a);
            }
        }
        return n;
    }

    /** Off-heap bytes held now; 0 after close. */
    long bytesUsed() {
        return pool.used();
    }

    /** The memory pool and the run arena (package-private: for this package's tests, which exhaust them on purpose). */
    MemoryPool pool() {
        return pool;
    }

    RunArena arena() {
        return arena;
    }

    /** Child-table rebuilds so far. */
    long rebuilds() {
        return generations.rebuilds();
    }

    /** How often the index grew under readers: child-table rebuilds, run moves and run-table growths. */
    long growths() {
        return generations.rebuilds() + arena.growths();
    }

    @Override
    public BlockHasher hasher() {
        return hasher;
    }

    @Override
    public IndexConfig config() {
        return config;
    }

    @Override
    public void close() {
        if (generations.close(() -> {
            for (WorkerHoldings h : workers.values()) {
                h.names.free();
                if (h.anyTier != null) {
                    h.anyTier.names.free();
                }
            }
            arena.free();
        })) {
            workers.clear();
        }
    }
}
