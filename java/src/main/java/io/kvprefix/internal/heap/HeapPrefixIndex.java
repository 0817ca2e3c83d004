package io.kvprefix.internal.heap;

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
import io.kvprefix.internal.hash.PortableHashKernel;
import io.kvprefix.internal.hash.SaltedHashers;
import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.StampedLock;
import net.openhft.hashing.LongHashFunction;

/**
 * The positional prefix index on the Java heap: the benchmarks' baseline and the differential tests'
 * second implementation, carrying every feature (its role and how it differs from the off-heap
 * index: docs/SPEC.md section 12; its design: this package's {@code package-info.java}).
 *
 * <p>Thread-safety: a {@link StampedLock} guards everything; {@link #apply} takes it exclusively (one
 * writer at a time, whatever the worker), {@link #match} takes it shared.
 */
public final class HeapPrefixIndex implements PrefixIndex, IndexWriter {
    private static final MatchResults RESULTS = MatchResults.access();

    /** Rough per-object sizes for {@link IndexStats#bytesUsed()} and the memory budget. */
    static final long ENTRY_BYTES = 120;

    static final long PAIR_BYTES = 64;

    final IndexConfig config;
    private final BlockHasher hasher;
    private final EventDecoder decoder;
    final SaltedHashers hashers;
    private final DecodedEvent decoded = new DecodedEvent(); // used under the write lock only
    final LongHashFunction chainFn;
    private final HeapMatcher matcher;
    private final long chainSeed;
    final StampedLock lock = new StampedLock();

    final Long2ObjectOpenHashMap<HeapEntry> table;
    final Map<Worker, WorkerState> workers = new HashMap<>();
    final Worker[] slotWorkers;
    /** Per slot: -1 for a GPU view, the worker's GPU slot for an any-tier view. */
    final int[] gpuSlotOf;

    final HeapTiers tiers = new HeapTiers(this);
    final BitSet usedSlots = new BitSet();
    int bitWords; // words needed for the highest slot in use (>= 1)
    long entryCount;
    long pairCount;
    final LongAdder[] statusCounts = new LongAdder[EventStatus.values().length];
    private final long[] writeScratch = new long[2];
    private volatile boolean closed;
    volatile Map<String, String> restoredMetadata = Map.of(); // a restored index's (HeapSnapshot)

    private final ThreadLocal<HeapMatcher.Scratch> readScratch = ThreadLocal.withInitial(HeapMatcher.Scratch::new);

    public HeapPrefixIndex(IndexConfig config) {
        this.config = Objects.requireNonNull(config, "config");
        this.hasher = config.hasher();
        this.decoder = new EventDecoder(config);
        this.hashers = decoder.hashers();
        this.chainSeed = config.chainSeed();
        this.chainFn = new PortableHashKernel(config.seed(), config.chainSeed()).chainFunction();
        this.matcher = new HeapMatcher(config.jumpSize(), chainFn);
        this.slotWorkers = new Worker[config.maxWorkers()];
        this.gpuSlotOf = new int[config.maxWorkers()];
        Arrays.fill(gpuSlotOf, -1);
        this.table = new Long2ObjectOpenHashMap<>((int) Math.max(16, config.expectedBlocks()));
        this.bitWords = 1;
        for (int i = 0; i < statusCounts.length; i++) {
            statusCounts[i] = new LongAdder();
        }
    }

    void checkOpen() {
        if (closed) {
            throw new IllegalStateException("index closed");
        }
    }

    // ------------------------------------------------------------------ writes

    @Override
    public EventStatus apply(KvEvent event) {
        Objects.requireNonNull(event, "event");
        long stamp = lock.writeLock();
        try {
            checkOpen();
            EventStatus s = decoder.decode(event, decoded);
            if (s == null) {
                s = decoded.applyTo(this);
            }
            statusCounts[s.ordinal()].increment();
            return s;
        } finally {
            lock.unlockWrite(stamp);
        }
    }

    @Override
    public void clear(Worker worker) {
        WorkerState ws = workers.get(worker);
        if (ws != null) {
            tiers.drop(ws);
            clear(ws);
        }
    }

    @Override
    public void removeWorker(long workerId) {
        List<WorkerState> victims = new ArrayList<>();
        for (WorkerState ws : workers.values()) {
            if (ws.worker.workerId() == workerId) {
                victims.add(ws);
            }
        }
        for (WorkerState ws : victims) {
            tiers.drop(ws);
            clear(ws);
            workers.remove(ws.worker);
            freeSlot(ws.slot);
        }
    }

    @Override
    public EventStatus store(
            Worker worker,
            Medium medium,
            boolean hasParent,
            long parentHash,
            long[] blockHashes,
            long[] locals,
            int n) {
        WorkerState ws = workers.get(worker);
        if (medium != Medium.GPU) {
            return tiers.storeLower(ws, worker, medium, hasParent, parentHash, blockHashes, locals, n);
        }
        // Rule 2: the parent must be held by this worker.
        HeapEntry parent = null;
        if (hasParent) {
            parent = ws == null ? null : ws.names.get(parentHash);
            if (parent == null) {
                return EventStatus.PARENT_BLOCK_NOT_FOUND;
            }
        }
        // Rule 5: capacity (worker slots, memory budget), checked before anything changes.
        if (ws == null && freeSlots() < 1 || !budgetAllows(n)) {
            return EventStatus.CAPACITY_EXCEEDED;
        }
        if (ws == null) {
            ws = newWorker(worker);
        }
        HeapEntry[] chain = ws.anyTier == null ? null : new HeapEntry[n];
        // Rule 3: positions follow the parent; chain hashes are computed here from the parent's chain.
        HeapEntry prev = parent;
        int pos = parent == null ? 0 : parent.pos + 1;
        for (int i = 0; i < n; i++, pos++) {
            HeapEntry e = place(pos, locals[i], prev);
            bindName(ws, blockHashes[i], e);
            if (chain != null) {
                chain[i] = e;
            }
            prev = e;
        }
        if (chain != null) {
            tiers.mirrorStore(ws, blockHashes, chain, n);
        }
        return EventStatus.OK;
    }

    /** The entry at {@code pos} with {@code local} after {@code prev} (null: a chain's start), made if new. */
    HeapEntry place(int pos, long local, HeapEntry prev) {
        long chain = prev == null ? local : PortableHashKernel.chainStep(chainFn, prev.chain, local, writeScratch);
        return findOrCreate(pos, local, chain, prev);
    }

    boolean budgetAllows(int n) {
        return config.memoryBudgetBytes() == IndexConfig.UNLIMITED
                || estimatedBytes() + n * (ENTRY_BYTES + PAIR_BYTES) <= config.memoryBudgetBytes();
    }

    int freeSlots() {
        return slotWorkers.length - usedSlots.cardinality();
    }

    /** A new worker's GPU view in a free slot (the caller checked there is one). */
    WorkerState newWorker(Worker worker) {
        WorkerState ws = new WorkerState(
                worker, claimSlot(worker, -1), (int) Math.min(1 << 26, config.expectedBlocksPerWorker()), false);
        workers.put(worker, ws);
        return ws;
    }

    /** Takes a free slot for {@code worker}'s GPU view ({@code gpu} -1) or its any-tier view (its GPU slot). */
    int claimSlot(Worker worker, int gpu) {
        int slot = usedSlots.nextClearBit(0);
        usedSlots.set(slot);
        bitWords = Math.max(bitWords, (slot >>> 6) + 1);
        slotWorkers[slot] = worker;
        gpuSlotOf[slot] = gpu;
        return slot;
    }

    void freeSlot(int slot) {
        slotWorkers[slot] = null;
        gpuSlotOf[slot] = -1;
        usedSlots.clear(slot);
        bitWords = Math.max(1, (usedSlots.length() + 63) >>> 6);
    }

    @Override
    public EventStatus copy(Worker worker, Medium medium, long[] hashes) {
        return tiers.copy(workers.get(worker), medium, hashes);
    }

    HeapEntry findOrCreate(int pos, long local, long chain, HeapEntry parent) {
        long k = HeapMatcher.key(pos, local);
        HeapEntry head = table.get(k);
        HeapEntry found = HeapMatcher.inChain(head, pos, local, chain);
        if (found != null) {
            return found;
        }
        HeapEntry e = new HeapEntry(pos, local, chain, parent);
        e.nextSameKey = head;
        table.put(k, e);
        if (parent != null) {
            e.nextSibling = parent.firstChild;
            if (parent.firstChild != null) {
                parent.firstChild.prevSibling = e;
            }
            parent.firstChild = e;
            parent.childCount++;
        }
        entryCount++;
        return e;
    }

    /** Rule 4: the name {@code hash} now means {@code e}; the block it named before loses a name. */
    void bindName(WorkerState ws, long hash, HeapEntry e) {
        HeapEntry old = ws.names.put(hash, e);
        if (old == e) {
            return;
        }
        addHold(ws, e);
        if (old != null) {
            dropHold(ws, old);
        }
    }

    private void addHold(WorkerState ws, HeapEntry e) {
        int names = ws.held.addTo(e, 1);
        if (names > 0) {
            return; // already held under another name
        }
        e.holders++;
        pairCount += ws.view ? 0 : 1;
        if (e.parent == null || e.parent.reaches(ws.slot)) {
            makeReachable(ws, e);
        } else {
            ws.unreachable.add(e);
        }
    }

    /** Sets the worker's bit on {@code e}, then on every held-but-unreachable descendant, parents first. */
    private void makeReachable(WorkerState ws, HeapEntry e) {
        e.setReach(ws.slot);
        if (ws.unreachable.isEmpty()) {
            return;
        }
        ArrayDeque<HeapEntry> todo = new ArrayDeque<>();
        todo.push(e);
        while (!todo.isEmpty()) {
            HeapEntry p = todo.pop();
            for (HeapEntry c = p.firstChild; c != null; c = c.nextSibling) {
                if (ws.unreachable.remove(c)) {
                    c.setReach(ws.slot);
                    todo.push(c);
                }
            }
        }
    }

    private void dropHold(WorkerState ws, HeapEntry e) {
        int names = ws.held.getInt(e);
        if (names > 1) {
            ws.held.put(e, names - 1);
            return;
        }
        ws.held.removeInt(e);
        e.holders--;
        pairCount -= ws.view ? 0 : 1;
        if (e.reaches(ws.slot) && e.firstChild == null) {
            e.clearReach(ws.slot); // a leaf (removed events drop deepest first): nothing below to walk
        } else if (e.reaches(ws.slot)) {
            // Descendants the worker still holds become unreachable: clear their bits deepest first.
            List<HeapEntry> order = new ArrayList<>();
            ArrayDeque<HeapEntry> todo = new ArrayDeque<>();
            todo.push(e);
            while (!todo.isEmpty()) {
                HeapEntry p = todo.pop();
                order.add(p);
                for (HeapEntry c = p.firstChild; c != null; c = c.nextSibling) {
                    if (c.reaches(ws.slot)) {
                        todo.push(c);
                    }
                }
            }
            for (int i = order.size() - 1; i >= 1; i--) {
                HeapEntry d = order.get(i);
                d.clearReach(ws.slot);
                ws.unreachable.add(d);
            }
            e.clearReach(ws.slot);
        } else {
            ws.unreachable.remove(e);
        }
        collect(e);
    }

    /**
     * Drops {@code e} and then its ancestors while nobody holds them and they have no children. An
     * entry already dropped is left alone: {@link #clear} calls this for every entry the worker held,
     * and an earlier call may already have dropped an ancestor on its way up.
     */
    void collect(HeapEntry e) {
        while (e != null && !e.collected && e.holders == 0 && e.childCount == 0) {
            e.collected = true;
            long k = HeapMatcher.key(e.pos, e.local);
            HeapEntry head = table.get(k);
            if (head == e) {
                if (e.nextSameKey == null) {
                    table.remove(k);
                } else {
                    table.put(k, e.nextSameKey);
                }
            } else {
                HeapEntry p = head;
                while (p.nextSameKey != e) {
                    p = p.nextSameKey;
                }
                p.nextSameKey = e.nextSameKey;
            }
            entryCount--;
            HeapEntry parent = e.parent;
            if (parent != null) {
                if (e.prevSibling != null) {
                    e.prevSibling.nextSibling = e.nextSibling;
                } else {
                    parent.firstChild = e.nextSibling;
                }
                if (e.nextSibling != null) {
                    e.nextSibling.prevSibling = e.prevSibling;
                }
                parent.childCount--;
            }
            e = parent;
        }
    }

    @Override
    public EventStatus remove(Worker worker, Medium medium, long[] hashes) {
        WorkerState ws = workers.get(worker);
        if (medium != Medium.GPU) {
            return tiers.removeLower(ws, medium, hashes);
        }
        EventStatus s = removeNames(ws, hashes);
        if (ws != null && ws.anyTier != null) {
            tiers.takeTier(ws.anyTier, Medium.GPU.bit(), hashes);
        }
        return s;
    }

    /** Section 3's removal on one view: names in order, dropped deepest first. */
    EventStatus removeNames(WorkerState ws, long[] hashes) {
        EventStatus status = EventStatus.OK;
        HeapEntry[] drop = new HeapEntry[hashes.length];
        int m = 0;
        for (long h : hashes) {
            HeapEntry e = ws == null ? null : ws.names.remove(h);
            if (e == null) {
                status = EventStatus.BLOCK_NOT_FOUND;
                continue;
            }
            drop[m++] = e;
        }
        // Deepest first (the off-heap index does the same): every order ends in the same state, but a
        // block dropped before its held descendants first moves them all to the unreachable set.
        if (m > 1) {
            Arrays.sort(drop, 0, m, DEEPEST_FIRST); // linear for a chain in either order
        }
        for (int i = 0; i < m; i++) {
            dropHold(ws, drop[i]);
        }
        return status;
    }

    private static final Comparator<HeapEntry> DEEPEST_FIRST = (a, b) -> Integer.compare(b.pos, a.pos);

    void clear(WorkerState ws) {
        List<HeapEntry> heldEntries = new ArrayList<>(ws.held.keySet());
        ws.names.clear();
        ws.held.clear();
        ws.unreachable.clear();
        for (HeapEntry e : heldEntries) {
            e.clearReach(ws.slot);
            e.holders--;
            pairCount -= ws.view ? 0 : 1;
        }
        for (HeapEntry e : heldEntries) {
            collect(e); // skips entries an earlier collect() already dropped along with a descendant
        }
    }

    long estimatedBytes() {
        return entryCount * ENTRY_BYTES + pairCount * PAIR_BYTES;
    }

    // ------------------------------------------------------------------ reads

    @Override
    public void match(long[] localHashes, int offset, int length, MatchResult into) {
        Objects.checkFromIndexSize(offset, length, localHashes.length);
        Objects.requireNonNull(into, "into");
        long stamp = lock.readLock();
        try {
            checkOpen();
            matchLocked(localHashes, offset, length, into, readScratch.get());
        } finally {
            lock.unlockRead(stamp);
        }
    }

    @Override
    public void match(int[] tokens, int offset, int length, BlockHasher hasher, MatchResult into) {
        Objects.checkFromIndexSize(offset, length, tokens.length);
        Objects.requireNonNull(into, "into");
        hashers.checkChainSeed(hasher);
        checkOpen();
        HeapMatcher.Scratch s = readScratch.get();
        int blocks = hasher.blockCount(length);
        if (s.locals.length < blocks) {
            s.locals = new long[Math.max(blocks, s.locals.length * 2)];
        }
        hasher.localHashes(tokens, offset, length, s.locals, 0);
        long stamp = lock.readLock();
        try {
            checkOpen();
            matchLocked(s.locals, 0, blocks, into, s);
        } finally {
            lock.unlockRead(stamp);
        }
    }

    private void matchLocked(long[] q, int off, int len, MatchResult into, HeapMatcher.Scratch s) {
        matcher.match(table, bitWords, slotWorkers, tiers.views > 0 ? gpuSlotOf : null, q, off, len, into, s);
    }

    @Override
    public MatchExplanation explain(long[] localHashes, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, localHashes.length);
        return Explanations.of(
                length, HeapExplainer.probeLocked(this, Arrays.copyOfRange(localHashes, offset, offset + length)));
    }

    @Override
    public MatchExplanation explain(int[] tokens, int offset, int length, BlockHasher h) {
        Objects.requireNonNull(h, "hasher");
        hashers.checkChainSeed(h);
        checkOpen();
        return Explanations.ofTokens(
                this, hashers.salts(), tokens, offset, length, h, q -> HeapExplainer.probeLocked(this, q));
    }

    @Override
    public void snapshot(Path file, Map<String, String> metadata) {
        HeapSnapshot.save(this, file, metadata); // docs/SNAPSHOT.md, under the read lock
    }

    @Override
    public Map<String, String> snapshotMetadata() {
        return restoredMetadata;
    }

    // ------------------------------------------------------------------ introspection

    @Override
    public long blockCount(Worker worker) {
        long stamp = lock.readLock();
        try {
            checkOpen();
            WorkerState ws = workers.get(worker);
            return ws == null ? 0 : ws.held.size();
        } finally {
            lock.unlockRead(stamp);
        }
    }

    @Override
    public List<Worker> workers() {
        long stamp = lock.readLock();
        try {
            checkOpen();
            List<Worker> out = new ArrayList<>(workers.keySet());
            out.sort(null);
            return List.copyOf(out);
        } finally {
            lock.unlockRead(stamp);
        }
    }

    @Override
    public long eventCount(EventStatus status) {
        return statusCounts[status.ordinal()].sum();
    }

    @Override
    public IndexStats stats() {
        long stamp = lock.readLock();
        try {
            checkOpen();
            Map<Worker, Long> perWorker = new TreeMap<>();
            for (WorkerState ws : workers.values()) {
                perWorker.put(ws.worker, (long) ws.held.size());
            }
            Map<EventStatus, Long> events = new EnumMap<>(EventStatus.class);
            for (EventStatus st : EventStatus.values()) {
                events.put(st, statusCounts[st.ordinal()].sum());
            }
            return new IndexStats(
                    workers.size(),
                    pairCount,
                    entryCount,
                    0,
                    estimatedBytes(),
                    entryCount,
                    0,
                    bitWords,
                    false,
                    perWorker,
                    events);
        } finally {
            lock.unlockRead(stamp);
        }
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
        long stamp = lock.writeLock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            table.clear();
            workers.clear();
            Arrays.fill(slotWorkers, null);
        } finally {
            lock.unlockWrite(stamp);
        }
    }
}
