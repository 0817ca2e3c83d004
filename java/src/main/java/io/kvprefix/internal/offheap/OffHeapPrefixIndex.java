package io.kvprefix.internal.offheap;

import io.kvprefix.BlockHasher;
import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.IndexStats;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.internal.MatchResults;
import io.kvprefix.internal.event.DecodedEvent;
import io.kvprefix.internal.event.EventDecoder;
import io.kvprefix.internal.event.IndexWriter;
import io.kvprefix.internal.hash.PortableHashKernel;
import io.kvprefix.internal.hash.SaltedHashers;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import net.openhft.hashing.LongHashFunction;

/**
 * The off-heap positional prefix index, kvprefix's default {@link PrefixIndex}: it coordinates the
 * table generations ({@link Generations}), the workers' holdings ({@link WorkerHoldings}), their
 * slots ({@link WorkerSlots}) and a match kernel ({@link MatchKernel}). The design is described in
 * this package's {@code package-info.java}.
 *
 * <p>Thread-safety: {@link #match}, {@link #stats} and the other reads from any number of threads
 * at any time; {@link #apply} concurrently for events of different worker ids, never concurrently
 * for events of one worker id; {@link #close} from any thread.
 */
public final class OffHeapPrefixIndex implements PrefixIndex, IndexWriter {
    private static final MatchResults RESULTS = MatchResults.access();

    private final IndexConfig config;
    private final BlockHasher hasher;
    private final EventDecoder decoder;
    private final SaltedHashers hashers;
    private final LongHashFunction chainFn;
    private final MatchKernel kernel;
    private final MemoryPool pool;
    private final Generations generations;
    private final WorkerSlots slots;
    private final ConcurrentHashMap<Worker, WorkerHoldings> workers = new ConcurrentHashMap<>();
    private final AtomicLong heldPairs = new AtomicLong();
    private final LongAdder[] statusCounts = new LongAdder[EventStatus.values().length];
    /** Test hook on every bit change (package-private: set only by this package's tests). */
    final BitWatch bitWatch = new BitWatch();

    private final ThreadLocal<ReadScratch> readScratch = ThreadLocal.withInitial(ReadScratch::new);
    private final ThreadLocal<WriteScratch> writeScratch = ThreadLocal.withInitial(WriteScratch::new);

    public OffHeapPrefixIndex(IndexConfig config) {
        this.config = Objects.requireNonNull(config, "config");
        this.hasher = config.hasher();
        this.decoder = new EventDecoder(config);
        this.hashers = decoder.hashers();
        this.chainFn = new PortableHashKernel(config.seed(), config.chainSeed()).chainFunction();
        this.kernel = MatchKernel.of(config);
        this.pool = new MemoryPool(config.memoryBudgetBytes());
        this.generations = new Generations(config, pool, kernel.isNative());
        this.slots = new WorkerSlots(config.maxWorkers());
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
                statusCounts[s.ordinal()].increment();
                if (d.kind() != DecodedEvent.Kind.STORE) {
                    generations.maybeShrink(heldPairs.get(), workers.values());
                }
                return s;
            }
            if (!generations.grow(ws.needSlots, ws.needWords, workers.values())) {
                statusCounts[EventStatus.CAPACITY_EXCEEDED.ordinal()].increment();
                return EventStatus.CAPACITY_EXCEEDED;
            }
        }
    }

    /** One attempt under the shared lock: a status, or null to rebuild ({@code ws.need*}) and try again. */
    private EventStatus applyOnce(DecodedEvent d, WriteScratch ws) {
        EventStatus s;
        generations.lockShared();
        try {
            if (generations.closed()) {
                throw Generations.closedException();
            }
            ws.needSlots = 0;
            ws.needWords = 0;
            ws.heldDelta = 0;
            s = d.applyTo(this);
        } finally {
            if (ws.heldDelta != 0) {
                heldPairs.addAndGet(ws.heldDelta); // one atomic add per event, not per block
            }
            generations.unlockShared();
            if (!ws.pendingRelease.isEmpty()) {
                releaseSlots(ws);
            }
        }
        return s;
    }

    /**
     * Rules 2 to 5 of a store (docs/SPEC.md section 3): the parent must be held; room is reserved in
     * the table, the worker's slot and its name map before anything changes (so a store applies whole
     * or not at all); then the blocks are found or inserted and the names applied.
     */
    @Override
    public EventStatus store(
            Worker worker, boolean hasParent, long parentHash, long[] blockHashes, long[] locals, int n) {
        WriteScratch scratch = writeScratch.get();
        WorkerHoldings w = workers.get(worker);
        if (hasParent && (w == null || w.names.get(parentHash) < 0)) {
            return EventStatus.PARENT_BLOCK_NOT_FOUND;
        }
        PositionalTable t = generations.current();
        if (!t.tryReserve(n)) {
            scratch.needSlots = n;
            return null;
        }
        if (w == null) {
            EventStatus s = newWorker(worker, t, n, scratch);
            if (s != EventStatus.OK) {
                t.unreserve(n);
                return s;
            }
            w = workers.get(worker);
        } else if (!w.names.ensureRoomFor(n)) {
            t.unreserve(n);
            return EventStatus.CAPACITY_EXCEEDED;
        }
        insertChain(t, w, hasParent, parentHash, blockHashes, locals, n, scratch);
        t.unreserve(n - scratch.inserted);
        return EventStatus.OK;
    }

    /** A slot and a name map for a worker's first store; OK, CAPACITY_EXCEEDED, or null to widen the table. */
    private EventStatus newWorker(Worker worker, PositionalTable t, int n, WriteScratch scratch) {
        int slot = slots.claim(worker, t.words);
        if (slot == WorkerSlots.NEEDS_WIDER) {
            scratch.needWords = slots.wordsForNextClaim();
            return null;
        }
        if (slot == WorkerSlots.FULL) {
            return EventStatus.CAPACITY_EXCEEDED;
        }
        NameMap names = NameMap.create(pool, n);
        if (names == null) {
            slots.releaseUnused(slot);
            return EventStatus.CAPACITY_EXCEEDED;
        }
        workers.put(worker, new WorkerHoldings(worker, slot, names, bitWatch));
        return EventStatus.OK;
    }

    /** Rules 3 and 4 over reserved room: positions follow the parent, chain hashes come from its chain hash. */
    private void insertChain(
            PositionalTable t,
            WorkerHoldings w,
            boolean hasParent,
            long parentHash,
            long[] blockHashes,
            long[] locals,
            int n,
            WriteScratch scratch) {
        int prev = -1;
        long prevChain = 0;
        int pos = 0;
        if (hasParent) {
            prev = w.names.get(parentHash);
            prevChain = t.chain(prev);
            pos = t.state(prev); // live state is position + 1
        }
        scratch.inserted = 0;
        // Touch every block's home slot and name-map slot first: these loads do not depend on each
        // other, so their cache misses overlap instead of waiting one by one behind the locked
        // instructions of each insert.
        if (n > 1) {
            long sink = 0;
            for (int i = 0; i < n; i++) {
                sink += t.touchState(pos + i, locals[i]);
                sink += w.names.touch(blockHashes[i]);
            }
            scratch.sink += sink;
        }
        int[] entries = scratch.slots(n);
        int[] olds = scratch.olds(n);
        boolean renamed = false;
        for (int i = 0; i < n; i++, pos++) {
            long local = locals[i];
            long chain = prev < 0 ? local : PortableHashKernel.chainStep(chainFn, prevChain, local, scratch.pair);
            int r = t.findOrInsert(pos, local, chain, prev);
            int entry = r < 0 ? ~r : r;
            if (r < 0) {
                scratch.inserted++;
            }
            entries[i] = entry;
            int old = w.names.put(blockHashes[i], entry); // rule 4: the name now means this block
            olds[i] = old;
            renamed |= old >= 0 && old != entry;
            prev = entry;
            prevChain = chain;
        }
        if (renamed) {
            w.applyNameChanges(t, entries, olds, n, scratch);
        } else {
            w.addNames(t, entries, olds, n, scratch);
        }
    }

    @Override
    public EventStatus remove(Worker worker, long[] hashes) {
        WorkerHoldings w = workers.get(worker);
        if (w == null) {
            return hashes.length == 0 ? EventStatus.OK : EventStatus.BLOCK_NOT_FOUND;
        }
        WriteScratch scratch = writeScratch.get();
        PositionalTable t = generations.current();
        EventStatus status = EventStatus.OK;
        int[] entries = scratch.slots(hashes.length);
        int m = 0;
        for (long h : hashes) {
            int entry = w.names.remove(h);
            if (entry < 0) {
                status = EventStatus.BLOCK_NOT_FOUND;
                continue;
            }
            entries[m++] = entry;
        }
        // Deepest first: every order ends in the same state, but a block dropped before its held
        // descendants first moves them all to the unreachable set (and the later drops take them out again).
        t.sortDeepestFirst(entries, m, scratch.keys(m));
        for (int i = 0; i < m; i++) {
            w.dropName(t, entries[i], scratch);
        }
        return status;
    }

    @Override
    public void clear(Worker worker) {
        WorkerHoldings w = workers.get(worker);
        if (w == null) {
            return;
        }
        heldPairs.addAndGet(-w.clearAll(generations.current(), writeScratch.get()));
        // Give the memory back: a fresh minimal map, or (if even that does not fit) the old one emptied.
        NameMap fresh = w.names.capacity() > NameMap.MIN_CAPACITY ? NameMap.create(pool, 0) : null;
        if (fresh != null) {
            w.names.free();
            w.names = fresh;
        } else {
            w.names.clear();
        }
    }

    /**
     * Forgets every dp rank of {@code workerId}. Their slots are released after the event, once the
     * readers that may have seen their bits have left; that wait happens outside the writers' lock.
     */
    @Override
    public void removeWorker(long workerId) {
        WriteScratch scratch = writeScratch.get();
        PositionalTable t = generations.current();
        for (WorkerHoldings w : workers.values()) {
            if (w.worker.workerId() == workerId) {
                heldPairs.addAndGet(-w.clearAll(t, scratch));
                workers.remove(w.worker);
                scratch.pendingRelease.add(w);
            }
        }
    }

    private void releaseSlots(WriteScratch scratch) {
        generations.synchronizeReaders(); // a slot must not name another worker while a reader may read its old bits
        slots.release(scratch.pendingRelease);
        scratch.pendingRelease.clear();
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
            PositionalTable t = current();
            s.ensure(length, t.words);
            RESULTS.reset(into, length);
            if (length > 0) {
                report(into, s, kernel.matchHashes(t, localHashes, offset, length, s));
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
        if (generations.closed()) {
            throw Generations.closedException();
        }
        ReadScratch s = readScratch.get();
        int blocks = h.blockCount(length);
        int token = generations.enterRead();
        try {
            PositionalTable t = current();
            s.ensure(blocks, t.words);
            RESULTS.reset(into, blocks);
            if (blocks > 0) {
                report(into, s, kernel.matchTokens(t, tokens, offset, length, h, s));
            }
        } finally {
            generations.exitRead(token);
        }
    }

    /** The current generation, for a reader inside the gate; fails if the index is closed. */
    private PositionalTable current() {
        if (generations.closed()) {
            throw Generations.closedException();
        }
        return generations.current();
    }

    private void report(MatchResult into, ReadScratch s, int n) {
        for (int i = 0; i < n; i++) {
            Worker w = slots.worker(s.outSlots[i]);
            if (w != null) {
                RESULTS.add(into, w, s.outDepths[i]);
            }
        }
    }

    // =================================================================== introspection

    @Override
    public long blockCount(Worker worker) {
        current();
        WorkerHoldings w = workers.get(worker);
        return w == null ? 0 : w.distinct;
    }

    @Override
    public List<Worker> workers() {
        current();
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
        PositionalTable t = current();
        Map<Worker, Long> perWorker = new TreeMap<>();
        for (WorkerHoldings w : workers.values()) {
            perWorker.put(w.worker, w.distinct);
        }
        Map<EventStatus, Long> events = new EnumMap<>(EventStatus.class);
        for (EventStatus st : EventStatus.values()) {
            events.put(st, statusCounts[st.ordinal()].sum());
        }
        return new IndexStats(
                perWorker.size(),
                heldPairs.get(),
                t.occupied.get(),
                pool.used(),
                0,
                t.capacity,
                generations.rebuilds(),
                t.words,
                kernel.isNative(),
                perWorker,
                events);
    }

    /** True if off-heap memory comes from libc (calloc/free), false with the shared-arena fallback. */
    boolean usesLibcMemory() {
        return pool.usesLibc();
    }

    /** Off-heap bytes held now (tables and name maps); 0 after close. */
    long bytesUsed() {
        return pool.used();
    }

    /** Table rebuilds so far (growth, widening, shrinking). */
    long rebuilds() {
        return generations.rebuilds();
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
        if (generations.close(workers.values())) {
            workers.clear();
        }
    }
}
