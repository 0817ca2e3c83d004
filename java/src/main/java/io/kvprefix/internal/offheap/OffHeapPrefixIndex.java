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

/**
 * The off-heap chain index, kvprefix's default {@link PrefixIndex}: a facade over one
 * {@link ChainState} that brackets each call with its gates and routes it to the room that owns it
 * ({@link Stores}, {@link Removals}, {@link TierViews}; a match's {@link MatchKernel} and
 * {@link MatchReport}; {@link ChainSnapshot}, {@link ChainExplainer}). The design and the table of
 * rights are in this package's {@code package-info.java}.
 *
 * <p>Locks: an event enters both gates ({@link Generations#enterWrite}) for the length of its
 * change; slots of removed workers are released, and the child table grown, after it left them; a
 * match enters the reader gate.
 *
 * <p>Thread-safety: {@link #match}, {@link #stats} and the other reads from any number of threads
 * at any time; {@link #apply} concurrently for events of different worker ids, never concurrently
 * for events of one worker id; {@link #close} from any thread.
 */
public final class OffHeapPrefixIndex implements PrefixIndex, IndexWriter {
    private static final MatchResults RESULTS = MatchResults.access();

    private final ChainState state;
    private final BlockHasher hasher;
    private final EventDecoder decoder;
    private final SaltedHashers hashers;
    private final Generations generations;
    private final Stores stores;
    private final Removals removals;
    private final TierViews tiers;
    private final MatchReport report;
    private final MatchKernel kernel;
    private final RunArena arena;
    private final int maxWorkers;
    private final ThreadLocal<ReadScratch> readScratch;
    private final ThreadLocal<WriteScratch> writeScratch;
    /** Test hook on every entry change (package-private: set only by this package's tests). */
    final ReachWatch watch;

    public OffHeapPrefixIndex(IndexConfig config) {
        this(ChainState.create(config));
    }

    /** The index over {@code state} (a fresh one, or a restore's before anybody else sees it). */
    private OffHeapPrefixIndex(ChainState state) {
        this.state = state;
        this.hasher = state.config.hasher();
        this.decoder = state.decoder;
        this.hashers = state.hashers;
        this.generations = state.generations;
        this.removals = new Removals(state);
        this.stores = new Stores(state, removals);
        this.tiers = new TierViews(state, stores, removals);
        this.report = new MatchReport(state);
        this.kernel = state.kernel;
        this.arena = state.arena;
        this.maxWorkers = state.config.maxWorkers();
        this.readScratch = state.readScratch;
        this.writeScratch = state.writeScratch;
        this.watch = state.watch;
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
            state.count(rejected);
            return rejected;
        }
        while (true) {
            EventStatus s = applyOnce(d, ws);
            if (s != null) {
                return s; // counted inside the gates, so a snapshot's counters agree with its state
            }
            if (!generations.growChildren(ws.needChildRecords)) {
                state.count(EventStatus.CAPACITY_EXCEEDED);
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
            BoundWriter w = ws.writer == null ? bind(ws) : (BoundWriter) ws.writer;
            w.index = this;
            s = d.applyTo(w); // stores and removals on ws, not looked up again
            if (s != null) {
                state.count(s);
            }
        } finally {
            if (ws.writer != null) {
                ((BoundWriter) ws.writer).index = null; // the scratch outlives the index: it must not keep it reachable
            }
            if (ws.heldDelta != 0) {
                state.heldPairs.add(ws.heldDelta); // one add per event, not per block
            }
            generations.exitWrite(token);
        }
        if (!ws.pendingRelease.isEmpty()) {
            releaseSlots(ws);
        }
        generations.reclaimer().maybeFlush();
        return s;
    }

    private static BoundWriter bind(WriteScratch ws) {
        BoundWriter w = new BoundWriter(ws);
        ws.writer = w;
        return w;
    }

    /**
     * The facade's writes with one thread's scratch passed on (the rare kinds go to the facade as
     * they are): {@code index} is set for the length of one event on that thread, null between.
     */
    private static final class BoundWriter implements IndexWriter {
        private final WriteScratch ws;
        OffHeapPrefixIndex index;

        BoundWriter(WriteScratch ws) {
            this.ws = ws;
        }

        @Override
        public EventStatus store(
                Worker worker,
                Medium medium,
                boolean hasParent,
                long parentHash,
                long[] engineHashes,
                long[] locals,
                int n) {
            return index.store(ws, worker, medium, hasParent, parentHash, engineHashes, locals, n);
        }

        @Override
        public EventStatus copy(Worker worker, Medium medium, long[] engineHashes) {
            return index.copy(worker, medium, engineHashes);
        }

        @Override
        public EventStatus remove(Worker worker, Medium medium, long[] engineHashes) {
            return index.remove(ws, worker, medium, engineHashes);
        }

        @Override
        public void clear(Worker worker) {
            index.clear(worker);
        }

        @Override
        public void removeWorker(long workerId) {
            index.removeWorker(workerId);
        }
    }

    /**
     * Rules 2 to 5 of a store (docs/SPEC.md section 3) on the GPU ({@link Stores}), mirrored to the
     * worker's any-tier view if it has one; a store on a lower tier goes to {@link TierViews} (section 3.1).
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
        return store(writeScratch.get(), worker, medium, hasParent, parentHash, blockHashes, locals, n);
    }

    /** {@link #store(Worker, Medium, boolean, long, long[], long[], int)} on the calling thread's {@code ws}. */
    EventStatus store(
            WriteScratch ws,
            Worker worker,
            Medium medium,
            boolean hasParent,
            long parentHash,
            long[] blockHashes,
            long[] locals,
            int n) {
        WorkerHoldings h = state.workers.get(worker);
        if (medium != Medium.GPU) {
            return tiers.storeLower(h, worker, medium, hasParent, parentHash, blockHashes, locals, n, ws);
        }
        EventStatus s = stores.store(h, worker, hasParent, parentHash, blockHashes, locals, n, ws);
        if (s == EventStatus.OK) {
            if (h == null) { // a first store made the worker's holdings (the worker's own thread: no one replaces
                // them meanwhile)
                h = state.workers.get(worker);
            }
            if (h.anyTier != null) {
                return tiers.mirrorStore(h, hasParent, parentHash, blockHashes, locals, n, ws);
            }
        }
        return s;
    }

    @Override
    public EventStatus copy(Worker worker, Medium medium, long[] hashes) {
        return tiers.copy(state.workers.get(worker), medium, hashes, writeScratch.get());
    }

    @Override
    public EventStatus remove(Worker worker, Medium medium, long[] hashes) {
        return remove(writeScratch.get(), worker, medium, hashes);
    }

    /** {@link #remove(Worker, Medium, long[])} on the calling thread's {@code ws}. */
    EventStatus remove(WriteScratch ws, Worker worker, Medium medium, long[] hashes) {
        WorkerHoldings h = state.workers.get(worker);
        if (medium != Medium.GPU) {
            return tiers.removeLower(h, medium, hashes, ws);
        }
        if (h == null) {
            return hashes.length == 0 ? EventStatus.OK : EventStatus.BLOCK_NOT_FOUND;
        }
        EventStatus s = removals.remove(h, hashes, ws);
        tiers.mirrorRemove(h, hashes, ws);
        return s;
    }

    @Override
    public void clear(Worker worker) {
        WorkerHoldings h = state.workers.get(worker);
        if (h == null) {
            return;
        }
        WriteScratch ws = writeScratch.get();
        tiers.drop(h, ws);
        state.heldPairs.add(-removals.clearWorker(h, ws));
    }

    /**
     * Forgets every dp rank of {@code workerId}. Their slots are released after the event, once the
     * readers that may have seen their entries have left; that wait happens outside the gates.
     */
    @Override
    public void removeWorker(long workerId) {
        WriteScratch ws = writeScratch.get();
        for (WorkerHoldings h : state.workers.values()) {
            if (h.worker.workerId() == workerId) {
                tiers.drop(h, ws);
                state.heldPairs.add(-removals.clear(h, ws));
                state.workers.remove(h.worker);
                ws.pendingRelease.add(h);
            }
        }
    }

    private void releaseSlots(WriteScratch ws) {
        generations.synchronizeReaders(); // a slot must not name another worker while a reader may read its old entries
        state.slots.release(ws.pendingRelease);
        ws.pendingRelease.clear();
    }

    // =================================================================== reads

    /** True if matches run in the native kernel (one downcall per request), false on the Java path. */
    public boolean nativeMatch() {
        return state.kernel.isNative();
    }

    @Override
    public void match(long[] localHashes, int offset, int length, MatchResult into) {
        Objects.checkFromIndexSize(offset, length, localHashes.length);
        Objects.requireNonNull(into, "into");
        ReadScratch s = readScratch.get();
        int token = generations.enterRead();
        try {
            checkOpen();
            s.ensure(length, maxWorkers);
            RESULTS.reset(into, length);
            if (length > 0) {
                report.report(
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
            s.ensure(blocks, maxWorkers);
            RESULTS.reset(into, blocks);
            if (blocks > 0) {
                report.report(
                        into,
                        s,
                        kernel.matchTokens(generations.children(), arena.runTable(), tokens, offset, length, h, s));
            }
        } finally {
            generations.exitRead(token);
        }
    }

    @Override
    public int match(int[] tokens, int offset, int length, BlockHasher h, MatchResult into, long[] localHashesOut) {
        Objects.checkFromIndexSize(offset, length, tokens.length);
        Objects.requireNonNull(into, "into");
        hashers.checkChainSeed(h);
        int blocks = h.blockCount(length);
        if (localHashesOut.length < blocks) {
            throw new IllegalArgumentException("localHashesOut has room for " + localHashesOut.length
                    + " hashes, the request has " + blocks + " blocks");
        }
        checkOpen();
        ReadScratch s = readScratch.get();
        int token = generations.enterRead();
        try {
            checkOpen();
            s.ensure(blocks, maxWorkers);
            RESULTS.reset(into, blocks);
            if (blocks > 0) {
                report.report(
                        into,
                        s,
                        kernel.matchTokensAll(
                                generations.children(),
                                arena.runTable(),
                                tokens,
                                offset,
                                length,
                                h,
                                localHashesOut,
                                s));
            }
        } finally {
            generations.exitRead(token);
        }
        return blocks;
    }

    private void checkOpen() {
        if (generations.closed()) {
            throw Generations.closedException();
        }
    }

    // =================================================================== snapshots

    /**
     * Writes the state to {@code file} (docs/SNAPSHOT.md) with every writer held out while it is
     * copied (readers go on); the file is forced to disk and renamed into place after writers resume.
     */
    @Override
    public void snapshot(Path file, Map<String, String> metadata) {
        ChainSnapshot.save(state, file, metadata);
    }

    @Override
    public Map<String, String> snapshotMetadata() {
        return state.restoredMetadata;
    }

    /** A new index holding the state of the snapshot {@code file} (docs/SNAPSHOT.md); see {@link PrefixIndex#restore}. */
    public static OffHeapPrefixIndex restore(Path file, IndexConfig config) {
        return new OffHeapPrefixIndex(ChainSnapshot.restore(file, config));
    }

    /**
     * As {@link #restore(Path, IndexConfig)}, in place ({@code inPlace}: the file's pages are the
     * index's memory, copy-on-write) or by copying (docs/SNAPSHOT.md section 7); for tests and
     * benchmarks that hold the two to each other.
     */
    public static OffHeapPrefixIndex restore(Path file, IndexConfig config, boolean inPlace) {
        return new OffHeapPrefixIndex(ChainSnapshot.restore(file, config, inPlace));
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
                generations.children(), state.arena.runTable(), List.copyOf(state.workers.values()), q, q.length));
    }

    // =================================================================== introspection

    @Override
    public long blockCount(Worker worker) {
        checkOpen();
        WorkerHoldings h = state.workers.get(worker);
        return h == null ? 0 : h.distinct;
    }

    @Override
    public List<Worker> workers() {
        checkOpen();
        List<Worker> out = new ArrayList<>(state.workers.keySet());
        out.sort(null);
        return List.copyOf(out);
    }

    @Override
    public long eventCount(EventStatus status) {
        return state.statusCounts[status.ordinal()].sum();
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
            for (WorkerHoldings h : state.workers.values()) {
                perWorker.put(h.worker, h.distinct);
                heap += h.heapBytes();
            }
            entries = state.arena.storedBlocks();
            capacity = generations.children().capacity;
            heap += state.arena.heapBytes();
        } finally {
            generations.exitRead(token);
        }
        Map<EventStatus, Long> events = new EnumMap<>(EventStatus.class);
        for (EventStatus st : EventStatus.values()) {
            events.put(st, state.statusCounts[st.ordinal()].sum());
        }
        return new IndexStats(
                perWorker.size(),
                state.heldPairs.sum(),
                entries,
                state.pool.used(),
                0,
                capacity,
                generations.rebuilds(),
                0,
                state.kernel.isNative(),
                perWorker,
                events,
                state.contention());
    }

    /** Off-heap bytes held now; 0 after close. */
    long bytesUsed() {
        return state.pool.used();
    }

    /** The memory pool and the run arena (package-private: for this package's tests, which exhaust them on purpose). */
    MemoryPool pool() {
        return state.pool;
    }

    RunArena arena() {
        return state.arena;
    }

    /** A worker's GPU view, or null (package-private: for this package's tests). */
    WorkerHoldings holdings(Worker worker) {
        return state.workers.get(worker);
    }

    /** Child-table rebuilds so far. */
    long rebuilds() {
        return generations.rebuilds();
    }

    /** How often the index grew under readers: child-table rebuilds, run moves and run-table growths. */
    long growths() {
        return generations.rebuilds() + state.arena.growths();
    }

    @Override
    public BlockHasher hasher() {
        return hasher;
    }

    @Override
    public IndexConfig config() {
        return state.config;
    }

    @Override
    public void close() {
        state.close();
    }
}
