package io.kvprefix.internal.offheap;

import static io.kvprefix.internal.offheap.TableLayout.STATE_BUSY;
import static io.kvprefix.internal.offheap.TableLayout.STATE_EMPTY;

import io.kvprefix.BlockHasher;
import io.kvprefix.EventStatus;
import io.kvprefix.Implementation;
import io.kvprefix.IndexConfig;
import io.kvprefix.IndexStats;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.internal.ffi.KvpBindings;
import io.kvprefix.internal.hash.PortableHashKernel;
import io.kvprefix.internal.hash.SaltedHashers;
import it.unimi.dsi.fastutil.ints.Int2IntOpenHashMap;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.ints.IntOpenHashSet;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import net.openhft.hashing.LongHashFunction;

/**
 * The off-heap positional prefix index, kvprefix's default {@link PrefixIndex}.
 *
 * <p><b>Data.</b> A positional table in off-heap memory ({@link PositionalTable}, records in
 * {@link TableLayout}): open addressing keyed by {@code (position, local hash)}, each entry holding
 * the chain hash kvprefix computed from the parent's (never the engine's hash), a link to the
 * parent entry, child links, and an inline bitset over dense worker slots. Per worker, an off-heap
 * {@link NameMap} from engine hash to entry; two rare side sets live on the heap (entries held
 * under more than one name, and held entries that are currently unreachable).
 *
 * <p><b>Reachable bits.</b> A worker's bit on an entry is set only while the worker holds that
 * block and every ancestor. Removing a block that has held descendants clears their bits deepest
 * first and keeps them as held-but-unreachable; storing the missing block again sets them back,
 * parents first. Every worker's bits are therefore prefix-closed at every moment, so jump search
 * by set intersection ({@code active ⊆ set(next)}) is exact, also for workers with holes, and a
 * match overlapping writes reads, per worker, a depth that held at some moment of the call or one
 * between two such depths (CONTRACT section 4).
 *
 * <p><b>Reads</b> ({@link #match}) take no lock and allocate nothing once their per-thread buffers
 * have grown: the caller's thread registers with a {@link ReadGate}, probes the current table
 * generation with acquire loads, computes the request's chain hashes only where a probed key
 * exists, and intersects bitsets.
 *
 * <p><b>Writes</b> ({@link #apply}) of different worker ids may run concurrently: they share a
 * read-write lock in shared mode, claim empty slots by CAS, push child links by CAS and change
 * bits with atomic or / and-not. Each worker's own state (names, side sets) is touched only by the
 * thread applying that worker's events. A store reserves table slots and name-map room before it
 * changes anything, so it applies whole or not at all; it then records all its name changes and
 * changes bits in two monotone phases (blocks that lost their last name first, deepest first; then
 * blocks that gained their first, parents first), so every intermediate state gives each worker a
 * depth between its depths before and after the event (IntermediateStatesTest checks every one).
 *
 * <p><b>Growth and reclamation.</b> When a store's reservation would pass the table's load limit,
 * or a new worker slot needs a wider bitset, the writer takes the lock exclusively and rebuilds:
 * live entries (named by some worker, or an ancestor of one) are copied into a new generation
 * sized for them, entries nobody holds are dropped, slot numbers in the workers' maps are
 * remapped, the new generation is published, and the old one is freed after every reader that
 * could be on it has left. A rebuild also shrinks the table after large removals. Every byte comes
 * from a {@link MemoryPool} with the configured budget; a store that would need more answers
 * {@link EventStatus#CAPACITY_EXCEEDED} and changes nothing.
 *
 * <p>Thread-safety: {@link #match}, {@link #stats} and the other reads from any number of threads
 * at any time; {@link #apply} concurrently for events of different worker ids, never concurrently
 * for events of one worker id; {@link #close} from any thread.
 */
public final class OffHeapPrefixIndex implements PrefixIndex {

    private final IndexConfig config;
    private final BlockHasher hasher;
    private final SaltedHashers hashers;
    private final long chainSeed;
    private final LongHashFunction chainFn;
    private final int jump;
    private final boolean nativeMatch;
    private final MemoryPool pool;
    private final ReadGate gate = new ReadGate();
    private final ReentrantReadWriteLock writeLock = new ReentrantReadWriteLock();

    private volatile PositionalTable table;
    private volatile boolean closed;

    private final ConcurrentHashMap<Worker, WorkerState> workers = new ConcurrentHashMap<>();
    /** Worker of each slot; written before the slot's first bit is set, kept until the slot is reused. */
    private final Worker[] slotWorkers;
    private final Object slotLock = new Object();
    private final java.util.BitSet usedSlots = new java.util.BitSet();
    private final AtomicLong heldPairs = new AtomicLong();
    private final AtomicLong rebuilds = new AtomicLong();
    private final LongAdder[] statusCounts = new LongAdder[EventStatus.values().length];

    private final ThreadLocal<ReadScratch> readScratch = ThreadLocal.withInitial(ReadScratch::new);
    private final ThreadLocal<WriteScratch> writeScratch = ThreadLocal.withInitial(WriteScratch::new);

    /**
     * Initial (and smallest) size of a worker's side sets: fastutil shrinks a set on removal down to
     * its initial size, so a small one would shrink and regrow (allocating) on every hole cycle.
     */
    private static final int SIDE_SET_SIZE = 256;

    /** One worker's state, owned by the thread applying its events. */
    private static final class WorkerState {
        final Worker worker;
        final int slot;
        NameMap names;
        /** Entries held under more than one name: slot to (names - 1). */
        Int2IntOpenHashMap extraNames;
        /** Held entries whose ancestors are not all held (their bit is clear). */
        IntOpenHashSet unreachable;
        long distinct;

        WorkerState(Worker worker, int slot, NameMap names) {
            this.worker = worker;
            this.slot = slot;
            this.names = names;
        }

        boolean hasUnreachable() {
            return unreachable != null && !unreachable.isEmpty();
        }
    }

    /** Called after every change of a worker bit; tests use it to check every intermediate state. */
    interface BitObserver {
        void afterBitChange();
    }

    /** Null outside tests. Package-private: the only way to set it is from this package's tests. */
    volatile BitObserver bitObserver;

    private void observeBit() {
        BitObserver o = bitObserver;
        if (o != null) {
            o.afterBitChange();
        }
    }

    /** Per-thread read buffers (grown as needed, never shrunk), with their segment views for native calls. */
    private static final class ReadScratch {
        long[] chain = new long[64];
        long[] active = new long[1];
        long[] locals = new long[64];
        final long[] pair = new long[2];
        int computedAfterProbe;
        long sink;
        int[] outSlots = new int[64];
        int[] outDepths = new int[64];
        final int[] hashed = new int[1];
        MemorySegment chainSeg = MemorySegment.ofArray(chain);
        MemorySegment localsSeg = MemorySegment.ofArray(locals);
        MemorySegment slotsSeg = MemorySegment.ofArray(outSlots);
        MemorySegment depthsSeg = MemorySegment.ofArray(outDepths);
        final MemorySegment hashedSeg = MemorySegment.ofArray(hashed);

        /** Room for a request of {@code blocks} blocks and results over {@code words} bitset words. */
        void ensure(int blocks, int words) {
            if (chain.length < blocks) {
                chain = new long[Math.max(blocks, chain.length * 2)];
                chainSeg = MemorySegment.ofArray(chain);
            }
            if (locals.length < blocks) {
                locals = new long[Math.max(blocks, locals.length * 2)];
                localsSeg = MemorySegment.ofArray(locals);
            }
            if (outSlots.length < words * 64) {
                outSlots = new int[words * 64];
                outDepths = new int[words * 64];
                slotsSeg = MemorySegment.ofArray(outSlots);
                depthsSeg = MemorySegment.ofArray(outDepths);
            }
            if (active.length < words) {
                active = new long[words];
            }
        }
    }

    /** Per-thread write buffers. */
    private static final class WriteScratch {
        final long[] pair = new long[2];
        final IntArrayList stack = new IntArrayList();
        final IntArrayList order = new IntArrayList();
        final it.unimi.dsi.fastutil.longs.LongOpenHashSet dedupe = new it.unimi.dsi.fastutil.longs.LongOpenHashSet();
        /** Net change of each block's name count during a store. */
        final Int2IntOpenHashMap delta = new Int2IntOpenHashMap(64);
        /** Blocks a store gave their first name, with their name count. */
        final Int2IntOpenHashMap gained = new Int2IntOpenHashMap(64);
        private int[] slots = new int[64];
        /** For each block of a store, the block its name meant before (-1 if none). */
        private int[] olds = new int[64];
        /** Sort keys (position, slot) for deepestFirst(). */
        private long[] keys = new long[64];
        /** Workers removed by remove_worker whose slots wait for the readers to leave. */
        final List<WorkerState> pendingRelease = new ArrayList<>();

        int[] slots(int n) {
            if (slots.length < n) {
                slots = new int[Math.max(n, slots.length * 2)];
            }
            return slots;
        }

        int[] olds(int n) {
            if (olds.length < n) {
                olds = new int[Math.max(n, olds.length * 2)];
            }
            return olds;
        }

        long[] keys(int n) {
            if (keys.length < n) {
                keys = new long[Math.max(n, keys.length * 2)];
            }
            return keys;
        }

        void clearDelta() {
            if (delta.size() > 4096) {
                delta.clear();
                delta.trim(64);
            } else {
                delta.clear();
            }
        }
        int inserted;
        /** Change of the held (worker, block) pairs during the current event, published once at its end. */
        long heldDelta;
        /** Keeps prefetching loads alive (their values are never used). */
        long sink;
        /** Why a store asked for a rebuild: slots needed, and bitset words needed. */
        int needSlots;
        int needWords;
    }

    /** Status-like outcome of one attempt: a status, or a request to rebuild and try again. */
    private static final EventStatus RETRY = null;

    public OffHeapPrefixIndex(IndexConfig config) {
        this.config = Objects.requireNonNull(config, "config");
        this.hasher = config.hasher();
        this.hashers = new SaltedHashers(config);
        this.chainSeed = config.chainSeed();
        this.chainFn = new PortableHashKernel(config.seed(), config.chainSeed()).chainFunction();
        this.jump = config.jumpSize();
        this.nativeMatch = config.implementation().resolve() == Implementation.NATIVE;
        this.pool = new MemoryPool(config.memoryBudgetBytes());
        this.slotWorkers = new Worker[config.maxWorkers()];
        for (int i = 0; i < statusCounts.length; i++) {
            statusCounts[i] = new LongAdder();
        }
        PositionalTable t = PositionalTable.allocate(pool, PositionalTable.initialCapacity(config.expectedBlocks()), 1,
                nativeMatch);
        if (t == null && config.expectedBlocks() > 0) {
            t = PositionalTable.allocate(pool, PositionalTable.MIN_CAPACITY, 1, nativeMatch); // the hint did not fit the budget
        }
        if (t == null) {
            throw new IllegalArgumentException("memory budget " + config.memoryBudgetBytes()
                    + " bytes is too small for an empty table of " + PositionalTable.bytesFor(PositionalTable.MIN_CAPACITY, 1) + " bytes");
        }
        this.table = t;
    }

    private static IllegalStateException closedException() {
        return new IllegalStateException("index closed");
    }

    // =================================================================== writes

    @Override
    public EventStatus apply(KvEvent event) {
        Objects.requireNonNull(event, "event");
        WriteScratch ws = writeScratch.get();
        while (true) {
            EventStatus s;
            var shared = writeLock.readLock();
            shared.lock();
            try {
                if (closed) {
                    throw closedException();
                }
                ws.needSlots = 0;
                ws.needWords = 0;
                ws.heldDelta = 0;
                s = applyOnce(event, ws);
            } finally {
                if (ws.heldDelta != 0) {
                    heldPairs.addAndGet(ws.heldDelta); // one atomic add per event, not per block
                }
                shared.unlock();
                if (!ws.pendingRelease.isEmpty()) {
                    releaseSlots(ws);
                }
            }
            if (s != RETRY) {
                statusCounts[s.ordinal()].increment();
                if (event instanceof KvEvent.Cleared || event instanceof KvEvent.RemoveWorker
                        || event instanceof KvEvent.Removed) {
                    maybeShrink();
                }
                return s;
            }
            if (!rebuild(ws.needSlots, ws.needWords)) {
                statusCounts[EventStatus.CAPACITY_EXCEEDED.ordinal()].increment();
                return EventStatus.CAPACITY_EXCEEDED;
            }
        }
    }

    private EventStatus applyOnce(KvEvent event, WriteScratch scratch) {
        return switch (event) {
            case KvEvent.Stored s -> s.blockHashes().length != s.localHashes().length ? EventStatus.INVALID_INPUT
                    : store(s.worker(), s.parentHash().isPresent(), s.parentHash().orElse(0L), s.blockHashes(),
                    s.localHashes(), scratch);
            case KvEvent.StoredTokens t -> {
                if (t.blockSize() < 1 || t.blockHashes().length != t.tokenIds().length / t.blockSize()) {
                    yield EventStatus.INVALID_INPUT;
                }
                long[] locals = hashers.get(t.blockSize(), t.loraName(), t.cacheNamespace()).localHashes(t.tokenIds());
                yield store(t.worker(), t.parentHash().isPresent(), t.parentHash().orElse(0L), t.blockHashes(), locals,
                        scratch);
            }
            case KvEvent.Removed r -> remove(r.worker(), r.blockHashes(), scratch);
            case KvEvent.Cleared c -> {
                WorkerState w = workers.get(c.worker());
                if (w != null) {
                    clear(w, true, scratch);
                }
                yield EventStatus.OK;
            }
            case KvEvent.RemoveWorker rw -> {
                removeWorker(rw.workerId(), scratch);
                yield EventStatus.OK;
            }
        };
    }



    private boolean hasDuplicate(long[] hashes, boolean hasParent, long parent, WriteScratch scratch) {
        int n = hashes.length;
        if (n <= 16) {
            for (int i = 0; i < n; i++) {
                if (hasParent && hashes[i] == parent) {
                    return true;
                }
                for (int j = i + 1; j < n; j++) {
                    if (hashes[i] == hashes[j]) {
                        return true;
                    }
                }
            }
            return false;
        }
        var seen = scratch.dedupe;
        seen.clear();
        for (long h : hashes) {
            if (!seen.add(h)) {
                return true;
            }
        }
        boolean dup = hasParent && seen.contains(parent);
        if (seen.size() > 4096) {
            seen.trim(64);
        }
        return dup;
    }

    private EventStatus store(Worker worker, boolean hasParent, long parentHash, long[] blockHashes, long[] locals,
                              WriteScratch scratch) {
        int n = blockHashes.length;
        // Rule 1: a repeated engine hash, or the parent among the blocks.
        if (hasDuplicate(blockHashes, hasParent, parentHash, scratch)) {
            return EventStatus.INVALID_BLOCK_SEQUENCE;
        }
        WorkerState w = workers.get(worker);
        // Rule 2: the parent must be held by this worker.
        if (hasParent && (w == null || w.names.get(parentHash) < 0)) {
            return EventStatus.PARENT_BLOCK_NOT_FOUND;
        }
        // Rule 5: room in the table (may ask for a rebuild), a worker slot, room in the name map.
        PositionalTable t = table;
        if (!t.tryReserve(n)) {
            scratch.needSlots = n;
            return RETRY;
        }
        boolean created = false;
        try {
            if (w == null) {
                int slot = claimSlot(worker, t.words);
                if (slot == -2) {
                    scratch.needWords = (slotCandidate() >>> 6) + 1;
                    t.unreserve(n);
                    return RETRY;
                }
                if (slot < 0) {
                    t.unreserve(n);
                    return EventStatus.CAPACITY_EXCEEDED;
                }
                NameMap names = NameMap.create(pool, n);
                if (names == null) {
                    releaseUnusedSlot(slot);
                    t.unreserve(n);
                    return EventStatus.CAPACITY_EXCEEDED;
                }
                w = new WorkerState(worker, slot, names);
                created = true;
            } else if (!w.names.ensureRoomFor(n)) {
                t.unreserve(n);
                return EventStatus.CAPACITY_EXCEEDED;
            }
        } catch (RuntimeException e) {
            t.unreserve(n);
            throw e;
        }
        if (created) {
            workers.put(worker, w);
        }
        // Rule 3: positions follow the parent; chain hashes come from the parent's chain hash.
        MemorySegment hot = t.hot;
        int prev = -1;
        long prevChain = 0;
        int pos = 0;
        if (hasParent) {
            prev = w.names.get(parentHash);
            long pb = prev * t.stride;
            prevChain = TableLayout.chain(hot, pb);
            pos = TableLayout.stateAcquire(hot, pb); // live state is position + 1
        }
        scratch.inserted = 0;
        // Touch every block's home slot and name-map slot first: these loads do not depend on each
        // other, so their cache misses overlap instead of waiting one by one behind the locked
        // instructions of each insert.
        if (n > 1) {
            long sink = 0;
            for (int i = 0; i < n; i++) {
                sink += TableLayout.stateAcquire(hot, TableLayout.home(pos + i, locals[i], t.mask) * t.stride);
                sink += w.names.touch(blockHashes[i]);
            }
            scratch.sink += sink;
        }
        int[] slots = scratch.slots(n);
        int[] olds = scratch.olds(n);
        boolean renamed = false;
        for (int i = 0; i < n; i++, pos++) {
            long local = locals[i];
            long chain = prev < 0 ? local : PortableHashKernel.chainStep(chainFn, prevChain, local, scratch.pair);
            int slot = findOrInsert(t, pos, local, chain, prev, scratch);
            slots[i] = slot;
            // Rule 4: the name now means this block; the block it named before loses a name.
            int old = w.names.put(blockHashes[i], slot);
            olds[i] = old;
            renamed |= old >= 0 && old != slot;
            prev = slot;
            prevChain = chain;
        }
        if (renamed) {
            applyNameChanges(t, w, slots, olds, n, scratch);
        } else {
            addNames(t, w, slots, olds, n, scratch);
        }
        t.unreserve(n - scratch.inserted);
        return EventStatus.OK;
    }

    /**
     * Applies a store's net name changes ({@code scratch.delta}: block to change of its name count)
     * to the worker's bits, in an order that keeps a concurrent match between the worker's depths
     * before and after the event (CONTRACT section 4): first every block that lost its last name is
     * dropped, its held descendants' bits cleared deepest first; then every block that gained its
     * first name is added, in the event's order (parents first), its bit set only under a reachable
     * parent. Dropping only clears bits the final state does not have, adding only sets bits the
     * final state has, so the bits move monotonically from the old state through their intersection
     * to the new one.
     */
    private void applyNameChanges(PositionalTable t, WorkerState w, int[] slots, int[] olds, int n,
                                  WriteScratch scratch) {
        var delta = scratch.delta;
        for (int i = 0; i < n; i++) {
            if (olds[i] != slots[i]) {
                delta.addTo(slots[i], 1);
                if (olds[i] >= 0) {
                    delta.addTo(olds[i], -1);
                }
            }
        }
        var gained = scratch.gained;
        // Every changed block once (remove() hands over its net change; 0 means absent or unchanged).
        for (int i = 0; i < 2 * n; i++) {
            int slot = (i & 1) == 0 ? olds[i >> 1] : slots[i >> 1];
            int change = slot < 0 ? 0 : delta.remove(slot);
            if (change == 0) {
                continue;
            }
            int before = nameCount(t, w, slot);
            int after = before + change;
            if (after == 0) {
                if (before > 0) {
                    lose(t, w, slot, scratch);
                }
            } else if (before > 0) {
                setExtraNames(w, slot, after - 1);
            } else {
                gained.put(slot, after);
            }
        }
        scratch.clearDelta();
        for (int i = 0; i < n && !gained.isEmpty(); i++) {
            int names = gained.remove(slots[i]);
            if (names > 0) {
                setExtraNames(w, slots[i], names - 1);
                gain(t, w, slots[i], scratch);
            }
        }
        gained.clear();
    }

    /**
     * The common store: no name moved from one block to another, so every block either gains a
     * name or keeps the one it had. Only bits are set, parents first, so the bits move monotonically
     * to the new state; this is what {@link #applyNameChanges} does in that case, without its maps.
     */
    private void addNames(PositionalTable t, WorkerState w, int[] slots, int[] olds, int n, WriteScratch scratch) {
        for (int i = 0; i < n; i++) {
            int slot = slots[i];
            if (olds[i] == slot) {
                continue; // the name already meant this block
            }
            int before = nameCount(t, w, slot);
            if (before > 0) {
                setExtraNames(w, slot, before); // one more name for a block it holds
            } else {
                gain(t, w, slot, scratch);
            }
        }
    }

    /**
     * A free worker slot for {@code worker} (recorded as taken), -1 if every slot is taken, or -2 if
     * the lowest free slot needs more bitset words than the table has ({@code words}).
     */
    private int claimSlot(Worker worker, int words) {
        synchronized (slotLock) {
            int slot = usedSlots.nextClearBit(0);
            if (slot >= slotWorkers.length) {
                return -1;
            }
            if ((slot >>> 6) >= words) {
                return -2;
            }
            usedSlots.set(slot);
            slotWorkers[slot] = worker;
            return slot;
        }
    }

    private int slotCandidate() {
        synchronized (slotLock) {
            return usedSlots.nextClearBit(0);
        }
    }

    /** Gives back a slot no bit was ever set for (so no reader can have seen it). */
    private void releaseUnusedSlot(int slot) {
        synchronized (slotLock) {
            usedSlots.clear(slot);
        }
    }

    /** The slot of {@code (pos, local, chain)}, inserting it (with its parent link) if absent. */
    private int findOrInsert(PositionalTable t, int pos, long local, long chain, int parent, WriteScratch scratch) {
        MemorySegment hot = t.hot;
        long stride = t.stride;
        int mask = t.mask;
        int want = pos + 1;
        int i = TableLayout.home(pos, local, mask);
        while (true) {
            long base = i * stride;
            int st = TableLayout.stateAcquire(hot, base);
            if (st == STATE_EMPTY) {
                if (!TableLayout.claim(hot, base)) {
                    continue; // lost the race for this slot: look at it again
                }
                TableLayout.writeKey(hot, base, local, chain, parent);
                if (parent >= 0) {
                    // Link before publishing: a writer that finds this entry must find it among the children.
                    MemorySegment cold = t.cold;
                    long pc = parent * TableLayout.COLD_STRIDE;
                    long cb = i * TableLayout.COLD_STRIDE;
                    while (true) {
                        int head = TableLayout.firstChild(cold, pc);
                        TableLayout.setNextSibling(cold, cb, head);
                        if (TableLayout.casFirstChild(cold, pc, head, i)) {
                            break;
                        }
                    }
                }
                TableLayout.publish(hot, base, pos);
                scratch.inserted++;
                return i;
            }
            if (st == STATE_BUSY) {
                Thread.onSpinWait(); // another writer is filling this slot: wait to compare its key
                continue;
            }
            if (st == want && TableLayout.local(hot, base) == local && TableLayout.chain(hot, base) == chain) {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    private boolean holds(PositionalTable t, WorkerState w, int slot) {
        return TableLayout.hasBit(t.hot, slot * t.stride, w.slot) || (w.hasUnreachable() && w.unreachable.contains(slot));
    }

    /** How many of the worker's names mean {@code slot} (0 if it does not hold it). */
    private int nameCount(PositionalTable t, WorkerState w, int slot) {
        if (!holds(t, w, slot)) {
            return 0;
        }
        return 1 + (w.extraNames == null ? 0 : w.extraNames.get(slot));
    }

    private void setExtraNames(WorkerState w, int slot, int extra) {
        if (extra > 0) {
            if (w.extraNames == null) {
                w.extraNames = new Int2IntOpenHashMap(SIDE_SET_SIZE);
            }
            w.extraNames.put(slot, extra);
        } else if (w.extraNames != null) {
            w.extraNames.remove(slot);
        }
    }

    /** The worker now holds {@code slot} (it did not): its bit is set if its parent's is. */
    private void gain(PositionalTable t, WorkerState w, int slot, WriteScratch scratch) {
        w.distinct++;
        scratch.heldDelta++;
        int parent = TableLayout.parent(t.hot, slot * t.stride);
        if (parent < 0 || TableLayout.hasBit(t.hot, parent * t.stride, w.slot)) {
            makeReachable(t, w, slot);
        } else {
            if (w.unreachable == null) {
                w.unreachable = new IntOpenHashSet(SIDE_SET_SIZE);
            }
            w.unreachable.add(slot);
        }
    }

    /** Sets the worker's bit on {@code slot}, then on its held-but-unreachable descendants, parents first. */
    private void makeReachable(PositionalTable t, WorkerState w, int slot) {
        TableLayout.setBit(t.hot, slot * t.stride, w.slot);
        observeBit();
        if (!w.hasUnreachable()) {
            return;
        }
        IntArrayList stack = writeScratch.get().stack;
        stack.clear();
        stack.add(slot);
        while (!stack.isEmpty()) {
            int p = stack.popInt();
            for (int c = TableLayout.firstChild(t.cold, p * TableLayout.COLD_STRIDE); c >= 0;
                 c = TableLayout.nextSibling(t.cold, c * TableLayout.COLD_STRIDE)) {
                if (w.unreachable.remove(c)) {
                    TableLayout.setBit(t.hot, c * t.stride, w.slot);
                    observeBit();
                    stack.add(c);
                }
            }
        }
    }

    /** One of the worker's names for {@code slot} is gone: the block is dropped if it was the last. */
    private void dropName(PositionalTable t, WorkerState w, int slot, WriteScratch scratch) {
        int names = nameCount(t, w, slot);
        if (names > 1) {
            setExtraNames(w, slot, names - 2);
        } else {
            lose(t, w, slot, scratch);
        }
    }

    /** The worker no longer holds {@code slot}; its held descendants become unreachable. */
    private void lose(PositionalTable t, WorkerState w, int slot, WriteScratch scratch) {
        w.distinct--;
        scratch.heldDelta--;
        setExtraNames(w, slot, 0);
        long base = slot * t.stride;
        if (TableLayout.hasBit(t.hot, base, w.slot)) {
            // Held descendants become unreachable: clear their bits deepest first (post-order).
            IntArrayList stack = scratch.stack;
            IntArrayList order = scratch.order;
            stack.clear();
            order.clear();
            stack.add(slot);
            while (!stack.isEmpty()) {
                int p = stack.popInt();
                order.add(p);
                for (int c = TableLayout.firstChild(t.cold, p * TableLayout.COLD_STRIDE); c >= 0;
                     c = TableLayout.nextSibling(t.cold, c * TableLayout.COLD_STRIDE)) {
                    if (TableLayout.hasBit(t.hot, c * t.stride, w.slot)) {
                        stack.add(c);
                    }
                }
            }
            if (order.size() > 1 && w.unreachable == null) {
                w.unreachable = new IntOpenHashSet(SIDE_SET_SIZE);
            }
            for (int k = order.size() - 1; k >= 1; k--) {
                int d = order.getInt(k);
                TableLayout.clearBit(t.hot, d * t.stride, w.slot);
                observeBit();
                w.unreachable.add(d);
            }
            TableLayout.clearBit(t.hot, base, w.slot);
            observeBit();
        } else if (w.unreachable != null) {
            w.unreachable.remove(slot);
        }
    }

    private EventStatus remove(Worker worker, long[] hashes, WriteScratch scratch) {
        WorkerState w = workers.get(worker);
        if (w == null) {
            return hashes.length == 0 ? EventStatus.OK : EventStatus.BLOCK_NOT_FOUND;
        }
        PositionalTable t = table;
        EventStatus status = EventStatus.OK;
        int[] slots = scratch.slots(hashes.length);
        int m = 0;
        for (long h : hashes) {
            int slot = w.names.remove(h);
            if (slot < 0) {
                status = EventStatus.BLOCK_NOT_FOUND;
                continue;
            }
            slots[m++] = slot;
        }
        deepestFirst(t, slots, m, scratch);
        for (int i = 0; i < m; i++) {
            dropName(t, w, slots[i], scratch);
        }
        return status;
    }

    /**
     * Orders {@code slots[0..m)} deepest position first (ties in any order). A {@code removed} event
     * ends in the same state in every order, but a block dropped before its held descendants first
     * moves them all to the unreachable set (and the later drops take them out again), while dropped
     * after them it moves nothing: parent-first chains, as engines often send them, cost O(n) set
     * operations otherwise. {@link #clear} needs this order to keep the bits prefix-closed.
     */
    private static void deepestFirst(PositionalTable t, int[] slots, int m, WriteScratch scratch) {
        if (m < 2) {
            return;
        }
        boolean ascending = true, descending = true;
        int prev = TableLayout.stateAcquire(t.hot, slots[0] * t.stride);
        for (int i = 1; i < m; i++) {
            int state = TableLayout.stateAcquire(t.hot, slots[i] * t.stride);
            ascending &= state >= prev;
            descending &= state <= prev;
            prev = state;
        }
        if (descending) {
            return;
        }
        if (ascending) {
            for (int i = 0, j = m - 1; i < j; i++, j--) {
                int x = slots[i];
                slots[i] = slots[j];
                slots[j] = x;
            }
            return;
        }
        long[] keys = scratch.keys(m); // (state << 32 | slot), sorted ascending, read back reversed
        for (int i = 0; i < m; i++) {
            keys[i] = ((long) TableLayout.stateAcquire(t.hot, slots[i] * t.stride) << 32) | slots[i];
        }
        Arrays.sort(keys, 0, m);
        for (int i = 0; i < m; i++) {
            slots[i] = (int) keys[m - 1 - i];
        }
    }

    /**
     * Drops everything {@code w} holds, its bits cleared deepest position first, so they stay
     * prefix-closed while they go (a concurrent match never jumps over a cleared ancestor to a still
     * set descendant). With {@code keepNames} the worker stays known with a fresh minimal name map;
     * without, the caller frees its map.
     */
    private void clear(WorkerState w, boolean keepNames, WriteScratch scratch) {
        PositionalTable t = table;
        MemorySegment hot = t.hot;
        long stride = t.stride;
        int s = w.slot;
        int[] slots = scratch.slots(w.names.size());
        int k = w.names.slots(slots);
        deepestFirst(t, slots, k, scratch);
        for (int i = 0; i < k; i++) {
            TableLayout.clearBit(hot, slots[i] * stride, s);
            observeBit();
        }
        heldPairs.addAndGet(-w.distinct);
        w.distinct = 0;
        w.extraNames = null;
        w.unreachable = null;
        if (!keepNames) {
            return;
        }
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
     * Forgets every dp rank of {@code workerId}. Their slots are released later, by
     * {@link #releaseSlots}, once the readers that may have seen their bits have left; that wait
     * happens outside the writers' lock.
     */
    private void removeWorker(long workerId, WriteScratch scratch) {
        for (WorkerState w : workers.values()) {
            if (w.worker.workerId() == workerId) {
                clear(w, false, scratch);
                workers.remove(w.worker);
                scratch.pendingRelease.add(w);
            }
        }
    }

    /** Waits for every reader that may have seen the removed workers' bits, then frees their slots and maps. */
    private void releaseSlots(WriteScratch scratch) {
        gate.synchronize(); // a slot must not name another worker while a reader may still read its old bits
        synchronized (slotLock) {
            for (WorkerState w : scratch.pendingRelease) {
                usedSlots.clear(w.slot);
                w.names.free();
            }
        }
        scratch.pendingRelease.clear();
    }

    // =================================================================== rebuild

    /**
     * Rebuilds the table with room for {@code needSlots} more entries and at least {@code needWords}
     * bitset words, dropping entries nobody holds. False if the budget does not allow it.
     */
    private boolean rebuild(int needSlots, int needWords) {
        PositionalTable old;
        PositionalTable fresh;
        var exclusive = writeLock.writeLock();
        exclusive.lock();
        try {
            if (closed) {
                throw closedException();
            }
            old = table;
            boolean roomy = old.occupied.get() + needSlots <= old.maxOccupied;
            if (roomy && needWords <= old.words) {
                return true; // another writer rebuilt meanwhile
            }
            fresh = copyLive(old, needSlots, Math.max(old.words, needWords), Integer.MAX_VALUE);
            if (fresh == null) {
                return false;
            }
            table = fresh;
            rebuilds.incrementAndGet();
        } finally {
            exclusive.unlock();
        }
        gate.synchronize();
        old.free();
        return true;
    }

    /** Held pairs when a shrink last found nothing to gain (live entries, kept ancestors included, still filled the table). */
    private volatile long futileShrinkPairs = Long.MAX_VALUE;

    /** Shrinks the table after large removals. */
    private void maybeShrink() {
        PositionalTable t = table;
        long pairs = heldPairs.get();
        if (t.capacity > PositionalTable.MIN_CAPACITY && pairs * 100 < (long) t.capacity * 4
                && pairs < futileShrinkPairs / 2) {
            PositionalTable old;
            var exclusive = writeLock.writeLock();
            exclusive.lock();
            try {
                if (closed || table != t) {
                    return;
                }
                PositionalTable fresh = copyLive(t, 0, t.words, t.capacity);
                if (fresh == null) {
                    // Entries nobody names but that are ancestors of held ones (engines evicting prefixes
                    // and keeping tails) still need the room: do not try again until pairs halve.
                    futileShrinkPairs = pairs;
                    return;
                }
                futileShrinkPairs = Long.MAX_VALUE;
                table = fresh;
                rebuilds.incrementAndGet();
                old = t;
            } finally {
                exclusive.unlock();
            }
            gate.synchronize();
            old.free();
        }
    }

    /**
     * Copies the live entries of {@code old} into a new generation (every writer is held out); null if
     * the budget does not allow it or its capacity would not be below {@code capacityBelow}.
     */
    private PositionalTable copyLive(PositionalTable old, int extra, int words, int capacityBelow) {
        final int unmarked = -1, live = -2;
        int[] remap = new int[old.capacity];
        Arrays.fill(remap, unmarked);
        MemorySegment oh = old.hot;
        long os = old.stride;
        // Live: every block some worker holds, and its ancestors. A held block has its bit set unless
        // it is in its worker's unreachable set, and bits are prefix-closed (a set bit's ancestors have
        // it too), so one sequential pass over the bits finds all but the unreachable blocks and their
        // ancestors, which a walk up from each adds. (Walking up from every name instead reads the
        // table in random order: most of a rebuild's time under churn.)
        long liveCount = 0;
        for (int i = 0; i < old.capacity; i++) {
            long ob = i * os;
            if (TableLayout.stateAcquire(oh, ob) > 0 && anyBit(oh, ob, old.words)) {
                remap[i] = live;
                liveCount++;
            }
        }
        for (WorkerState w : workers.values()) {
            if (w.unreachable == null) {
                continue;
            }
            for (int slot : w.unreachable) {
                int s = slot;
                while (s >= 0 && remap[s] == unmarked) {
                    remap[s] = live;
                    liveCount++;
                    s = TableLayout.parent(oh, s * os);
                }
            }
        }
        int cap = PositionalTable.capacityFor(liveCount + extra);
        if (cap < 0 || cap >= capacityBelow) {
            return null;
        }
        PositionalTable nt = PositionalTable.allocate(pool, cap, words, nativeMatch);
        if (nt == null) {
            return null;
        }
        MemorySegment nh = nt.hot;
        long ns = nt.stride;
        for (int i = 0; i < old.capacity; i++) {
            if (remap[i] != live) {
                continue;
            }
            long ob = i * os;
            int state = TableLayout.stateAcquire(oh, ob);
            long local = TableLayout.local(oh, ob);
            int j = TableLayout.home(state - 1, local, nt.mask);
            while (TableLayout.stateAcquire(nh, j * ns) != STATE_EMPTY) {
                j = (j + 1) & nt.mask;
            }
            long nb = j * ns;
            TableLayout.writeKey(nh, nb, local, TableLayout.chain(oh, ob), TableLayout.parent(oh, ob));
            for (int k = 0; k < old.words; k++) {
                TableLayout.putBitsPlain(nh, nb, k, TableLayout.bitsAcquire(oh, ob, k));
            }
            TableLayout.publish(nh, nb, state - 1);
            remap[i] = j;
        }
        // Parent slots and child lists in the new numbering.
        for (int i = 0; i < old.capacity; i++) {
            int j = remap[i];
            if (j < 0) {
                continue;
            }
            long nb = j * ns;
            int p = TableLayout.parent(nh, nb);
            if (p >= 0) {
                int np = remap[p];
                TableLayout.setParent(nh, nb, np);
                long pc = np * TableLayout.COLD_STRIDE;
                TableLayout.setNextSibling(nt.cold, j * TableLayout.COLD_STRIDE, TableLayout.firstChild(nt.cold, pc));
                TableLayout.setFirstChildPlain(nt.cold, pc, j);
            }
        }
        for (WorkerState w : workers.values()) {
            w.names.remapValues(remap);
            if (w.extraNames != null) {
                Int2IntOpenHashMap m = new Int2IntOpenHashMap(Math.max(SIDE_SET_SIZE, w.extraNames.size()));
                for (var e : w.extraNames.int2IntEntrySet()) {
                    m.put(remap[e.getIntKey()], e.getIntValue());
                }
                w.extraNames = m;
            }
            if (w.unreachable != null) {
                IntOpenHashSet u = new IntOpenHashSet(Math.max(SIDE_SET_SIZE, w.unreachable.size()));
                for (int s : w.unreachable) {
                    u.add(remap[s]);
                }
                w.unreachable = u;
            }
        }
        nt.occupied.set(liveCount);
        return nt;
    }

    private static boolean anyBit(MemorySegment hot, long base, int words) {
        for (int k = 0; k < words; k++) {
            if (TableLayout.bitsAcquire(hot, base, k) != 0) {
                return true;
            }
        }
        return false;
    }

    // =================================================================== reads

    /** True if matches run in the native kernel (one downcall per request), false on the Java path. */
    public boolean nativeMatch() {
        return nativeMatch;
    }

    @Override
    public void match(long[] localHashes, int offset, int length, MatchResult into) {
        Objects.checkFromIndexSize(offset, length, localHashes.length);
        Objects.requireNonNull(into, "into");
        ReadScratch s = readScratch.get();
        int token = gate.enter();
        try {
            if (closed) {
                throw closedException();
            }
            PositionalTable t = table;
            s.ensure(length, t.words);
            if (nativeMatch) {
                into.reset(length);
                if (length > 0) {
                    int n = offset == 0
                            ? KvpBindings.matchHashes(t.hotView, t.mask, t.words, jump, chainSeed, localHashes, length,
                                    s.chainSeg, s.slotsSeg, s.depthsSeg)
                            : KvpBindings.matchHashes(t.hotView, t.mask, t.words, jump, chainSeed,
                                    MemorySegment.ofArray(localHashes).asSlice(offset * 8L), length, s.chainSeg, s.slotsSeg,
                                    s.depthsSeg);
                    reportAll(into, s, n);
                }
            } else {
                matchIn(t, localHashes, offset, length, into, s);
            }
        } finally {
            gate.exit(token);
        }
    }

    @Override
    public void match(int[] tokens, int offset, int length, BlockHasher h, MatchResult into) {
        Objects.checkFromIndexSize(offset, length, tokens.length);
        Objects.requireNonNull(into, "into");
        hashers.checkChainSeed(h);
        if (closed) {
            throw closedException();
        }
        ReadScratch s = readScratch.get();
        int blocks = h.blockCount(length);
        if (nativeMatch) {
            // Hash and match in one downcall: blocks are hashed only as far as the search needs.
            int token = gate.enter();
            try {
                if (closed) {
                    throw closedException();
                }
                PositionalTable t = table;
                s.ensure(blocks, t.words);
                into.reset(blocks);
                if (blocks > 0) {
                    int n = offset == 0
                            ? KvpBindings.matchTokens(t.hotView, t.mask, t.words, jump, tokens, length, h.blockSize(),
                                    h.seed(), chainSeed, s.localsSeg, s.chainSeg, s.hashedSeg, s.slotsSeg, s.depthsSeg)
                            : KvpBindings.matchTokens(t.hotView, t.mask, t.words, jump,
                                    MemorySegment.ofArray(tokens).asSlice(offset * 4L), length, h.blockSize(), h.seed(),
                                    chainSeed, s.localsSeg, s.chainSeg, s.hashedSeg, s.slotsSeg, s.depthsSeg);
                    reportAll(into, s, n);
                }
            } finally {
                gate.exit(token);
            }
            return;
        }
        s.ensure(blocks, 1);
        h.localHashes(tokens, offset, length, s.locals, 0);
        int token = gate.enter();
        try {
            if (closed) {
                throw closedException();
            }
            PositionalTable t = table;
            s.ensure(blocks, t.words);
            matchIn(t, s.locals, 0, blocks, into, s);
        } finally {
            gate.exit(token);
        }
    }

    private void reportAll(MatchResult into, ReadScratch s, int n) {
        int[] slots = s.outSlots;
        int[] depths = s.outDepths;
        for (int i = 0; i < n; i++) {
            report(into, slots[i], depths[i]);
        }
    }

    private void matchIn(PositionalTable t, long[] q, int off, int len, MatchResult into, ReadScratch s) {
        into.reset(len);
        if (len == 0) {
            return;
        }
        MemorySegment hot = t.hot;
        int mask = t.mask;
        long stride = t.stride;
        int words = t.words;
        long[] chain = s.chain;
        long[] active = s.active;
        chain[0] = q[off];
        int computed = 0; // chain[0..computed] are valid
        // Touch the home slots of the next PREFETCH_AHEAD jump targets before they are probed, so their
        // cache misses overlap; a sliding window, so a very long request does not flood the caches.
        int touched = 0; // jump targets up to here have been touched
        long sink = 0;
        for (int p = jump; p < len && p <= PREFETCH_AHEAD * jump; p += jump) {
            sink += touch(hot, mask, stride, Math.min(p, len - 1), q, off);
            touched = p;
        }

        int e0 = probe(hot, mask, stride, 0, q[off], q[off]);
        if (e0 < 0) {
            return;
        }
        boolean any = false;
        long b0 = e0 * stride;
        for (int w = 0; w < words; w++) {
            active[w] = TableLayout.bitsAcquire(hot, b0, w);
            any |= active[w] != 0;
        }
        int cur = 0;
        while (any && cur < len - 1) {
            int nxt = Math.min(cur + jump, len - 1);
            if (touched < len - 1) {
                touched += jump;
                sink += touch(hot, mask, stride, Math.min(touched, len - 1), q, off);
            }
            // Probe the jump target; its chain hash is computed only if its key exists.
            int slot = probeLazy(hot, mask, stride, nxt, q, off, chain, computed, s);
            computed = Math.max(computed, s.computedAfterProbe);
            if (slot >= 0 && covers(hot, slot * stride, active, words)) {
                cur = nxt;
                continue;
            }
            for (int p = cur + 1; p <= nxt && any; p++) {
                int e = probeLazy(hot, mask, stride, p, q, off, chain, computed, s);
                computed = Math.max(computed, s.computedAfterProbe);
                any = false;
                long eb = e * stride;
                for (int w = 0; w < words; w++) {
                    long held = e < 0 ? 0L : TableLayout.bitsAcquire(hot, eb, w);
                    long dropped = active[w] & ~held;
                    while (dropped != 0) {
                        int bit = Long.numberOfTrailingZeros(dropped);
                        dropped &= dropped - 1;
                        report(into, (w << 6) + bit, p);
                    }
                    active[w] &= held;
                    any |= active[w] != 0;
                }
            }
            cur = nxt;
        }
        for (int w = 0; w < words; w++) {
            long a = active[w];
            while (a != 0) {
                int bit = Long.numberOfTrailingZeros(a);
                a &= a - 1;
                report(into, (w << 6) + bit, len);
            }
        }
        s.sink += sink;
    }

    /** Jump targets whose home slots are touched ahead of the search. */
    private static final int PREFETCH_AHEAD = 8;

    /** Loads the home slot of position {@code p} (to start its cache miss); the value means nothing. */
    private static long touch(MemorySegment hot, int mask, long stride, int p, long[] q, int off) {
        return TableLayout.local(hot, TableLayout.home(p, q[off + p], mask) * stride);
    }

    private void report(MatchResult into, int slot, int depth) {
        Worker w = slotWorkers[slot];
        if (w != null) {
            into.add(w, depth);
        }
    }

    private static boolean covers(MemorySegment hot, long base, long[] active, int words) {
        for (int w = 0; w < words; w++) {
            if ((active[w] & ~TableLayout.bitsAcquire(hot, base, w)) != 0) {
                return false;
            }
        }
        return true;
    }

    /** The slot of {@code (pos, local, chain)} or -1 (chain known). */
    private static int probe(MemorySegment hot, int mask, long stride, int pos, long local, long chain) {
        int want = pos + 1;
        int i = TableLayout.home(pos, local, mask);
        for (int n = 0; n <= mask; n++) {
            long base = i * stride;
            int st = TableLayout.stateAcquire(hot, base);
            if (st == STATE_EMPTY) {
                return -1;
            }
            if (st == want && TableLayout.local(hot, base) == local && TableLayout.chain(hot, base) == chain) {
                return i;
            }
            i = (i + 1) & mask;
        }
        return -1;
    }

    /**
     * The slot of {@code (pos, q[pos], chain[pos])} or -1, extending the request's chain hashes up to
     * {@code pos} only when an entry with that position and local hash exists. Leaves the new number
     * of valid chain hashes in {@code s.computedAfterProbe}.
     */
    private int probeLazy(MemorySegment hot, int mask, long stride, int pos, long[] q, int off, long[] chain,
                          int computed, ReadScratch s) {
        long local = q[off + pos];
        int want = pos + 1;
        int i = TableLayout.home(pos, local, mask);
        s.computedAfterProbe = computed;
        for (int n = 0; n <= mask; n++) {
            long base = i * stride;
            int st = TableLayout.stateAcquire(hot, base);
            if (st == STATE_EMPTY) {
                return -1;
            }
            if (st == want && TableLayout.local(hot, base) == local) {
                if (s.computedAfterProbe < pos) {
                    for (int k = s.computedAfterProbe + 1; k <= pos; k++) {
                        chain[k] = PortableHashKernel.chainStep(chainFn, chain[k - 1], q[off + k], s.pair);
                    }
                    s.computedAfterProbe = pos;
                }
                if (TableLayout.chain(hot, base) == chain[pos]) {
                    return i;
                }
            }
            i = (i + 1) & mask;
        }
        return -1;
    }

    // =================================================================== introspection

    @Override
    public long blockCount(Worker worker) {
        if (closed) {
            throw closedException();
        }
        WorkerState w = workers.get(worker);
        return w == null ? 0 : w.distinct;
    }

    @Override
    public List<Worker> workers() {
        if (closed) {
            throw closedException();
        }
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
        if (closed) {
            throw closedException();
        }
        Map<Worker, Long> perWorker = new TreeMap<>();
        for (WorkerState w : workers.values()) {
            perWorker.put(w.worker, w.distinct);
        }
        Map<EventStatus, Long> events = new EnumMap<>(EventStatus.class);
        for (EventStatus st : EventStatus.values()) {
            events.put(st, statusCounts[st.ordinal()].sum());
        }
        return new IndexStats(perWorker.size(), heldPairs.get(), table.occupied.get(), pool.used(), perWorker, events);
    }

    /** True if off-heap memory comes from libc (calloc/free), false with the shared-arena fallback. */
    public boolean usesLibcMemory() {
        return pool.usesLibc();
    }

    /** Off-heap bytes held now (tables and name maps). */
    public long bytesUsed() {
        return pool.used();
    }

    /** Current table capacity in slots (for tests and diagnostics). */
    public int tableCapacity() {
        return table.capacity;
    }

    /** Table rebuilds so far (growth, widening, shrinking). */
    public long rebuilds() {
        return rebuilds.get();
    }

    /** Current bitset width in 64-bit words (for tests and diagnostics). */
    public int bitsetWords() {
        return table.words;
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
        var exclusive = writeLock.writeLock();
        exclusive.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
        } finally {
            exclusive.unlock();
        }
        gate.synchronize();
        table.free();
        for (WorkerState w : workers.values()) {
            w.names.free();
        }
        workers.clear();
    }
}
