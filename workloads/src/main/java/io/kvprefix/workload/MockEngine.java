package io.kvprefix.workload;

import io.kvprefix.KvEvent;
import io.kvprefix.Medium;
import io.kvprefix.Worker;
import it.unimi.dsi.fastutil.ints.Int2ObjectOpenHashMap;
import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.LongUnaryOperator;

/**
 * A mock inference engine with an LRU prefix cache of full KV blocks, behaving like vLLM with prefix
 * caching on, and emitting the KV events such an engine sends (docs/SPEC.md section 3). One engine per
 * worker. {@link #admit(TraceRequest)} pins the longest cached prefix of a request's full blocks,
 * evicts least recently freed blocks as needed and stores the rest; {@link #release(TraceRequest)}
 * unpins them tail first, as vLLM's free queue does. The model, its invariants
 * ({@link #checkInvariants()}), a request larger than the free room, the engine hashes
 * ({@link #engineHash}) and the CPU tier are this package's description, <em>The mock engine</em>.
 *
 * <p>Requests are identified by {@link TraceRequest#index()}: one request may be admitted once until it
 * is released.
 *
 * <p>Thread-safety: not thread-safe; one engine is driven by one thread at a time.
 */
public final class MockEngine {
    /** The blog's setting, and Dynamo's bench default: 16,384 blocks per mock engine. */
    public static final int DEFAULT_CAPACITY = 16_384;

    private static final long ROOT = 0x6A09E667F3BCC909L;
    private static final long ID_SALT = 0x5851F42D4C957F2DL;

    private final Worker worker;
    private final int capacity;
    private final int cpuCapacity;
    /** The CPU tier: engine hashes in LRU order (access order: the eldest is evicted first). */
    private final java.util.LinkedHashMap<Long, Boolean> cpu = new java.util.LinkedHashMap<>(16, 0.75f, true);

    private long lowerTierTotal;
    private final LongUnaryOperator localHash;
    private final int tokensPerBlock;
    private final Long2ObjectOpenHashMap<Block> blocks = new Long2ObjectOpenHashMap<>();
    private final Int2ObjectOpenHashMap<Block[]> running = new Int2ObjectOpenHashMap<>();
    /** Sentinel of the circular LRU queue of free blocks: {@code head.next} is evicted first. */
    private final Block queue = new Block(0, 0, null);

    private int freeCount;
    private int inUse;
    private long storedTotal;
    private long evictedTotal;
    private long hitTotal;

    private static final class Block {
        final long e;
        final long local;
        final Block parent;
        int refs;
        int children;
        Block prev;
        Block next;

        Block(long e, long local, Block parent) {
            this.e = e;
            this.local = local;
            this.parent = parent;
        }
    }

    /**
     * An empty engine.
     *
     * @param worker the worker whose events it emits
     * @param capacity the most blocks it caches, at least 1
     * @param hashes local hashes of the block ids (its block size is the engine's tokens per block)
     */
    public MockEngine(Worker worker, int capacity, LocalHashTable hashes) {
        this(worker, capacity, 0, hashes);
    }

    /**
     * An empty engine with a CPU tier of {@code cpuCapacity} blocks (0: none), see the class comment.
     *
     * @param worker the worker whose events it emits
     * @param capacity the most blocks its GPU caches, at least 1
     * @param cpuCapacity the most blocks its CPU tier holds, at least 0
     * @param hashes local hashes of the block ids (its block size is the engine's tokens per block)
     */
    public MockEngine(Worker worker, int capacity, int cpuCapacity, LocalHashTable hashes) {
        this(
                worker,
                capacity,
                cpuCapacity,
                Objects.requireNonNull(hashes, "hashes").tokensPerBlock(),
                hashes::localHash);
    }

    /**
     * An empty engine whose blocks are named by any ids, not only a trace's hash ids: {@code localHashOfId}
     * gives the local hash {@code L} of the block named {@code id}. With the identity, a block is named by
     * its own local hash, which is how an engine fed real token ids names its blocks.
     *
     * @param worker the worker whose events it emits
     * @param capacity the most blocks its GPU caches, at least 1
     * @param cpuCapacity the most blocks its CPU tier holds, at least 0
     * @param tokensPerBlock tokens per block, at least 1
     * @param localHashOfId the local hash of the block named by an id
     */
    public MockEngine(
            Worker worker, int capacity, int cpuCapacity, int tokensPerBlock, LongUnaryOperator localHashOfId) {
        if (cpuCapacity < 0) {
            throw new IllegalArgumentException("CPU capacity must be >= 0 blocks, got " + cpuCapacity);
        }
        this.cpuCapacity = cpuCapacity;
        this.worker = Objects.requireNonNull(worker, "worker");
        if (capacity < 1) {
            throw new IllegalArgumentException("cache capacity must be >= 1 block, got " + capacity);
        }
        if (tokensPerBlock < 1) {
            throw new IllegalArgumentException("tokens per block must be >= 1, got " + tokensPerBlock);
        }
        this.capacity = capacity;
        this.localHash = Objects.requireNonNull(localHashOfId, "localHashOfId");
        this.tokensPerBlock = tokensPerBlock;
        queue.prev = queue;
        queue.next = queue;
    }

    /**
     * The engine hash of a block named {@code id} after the block whose engine hash is {@code parent}
     * (ignored when {@code hasParent} is false): SplitMix64 of the rotated parent XOR the mixed id.
     */
    public static long engineHash(boolean hasParent, long parent, long id) {
        long p = hasParent ? Long.rotateLeft(parent, 23) : ROOT;
        return Rng.mix(p ^ Rng.mix(id ^ ID_SALT));
    }

    /** The engine hashes of {@code ids[0 .. count)} as one chain from position 0. */
    public static long[] engineHashes(long[] ids, int count) {
        long[] e = new long[count];
        for (int i = 0; i < count; i++) {
            e[i] = engineHash(i > 0, i > 0 ? e[i - 1] : 0, ids[i]);
        }
        return e;
    }

    /** The worker this engine is. */
    public Worker worker() {
        return worker;
    }

    /** Tokens per block of the cache. */
    public int tokensPerBlock() {
        return tokensPerBlock;
    }

    /** The most blocks the cache holds. */
    public int capacity() {
        return capacity;
    }

    /** Blocks cached now (in use and free). */
    public int blockCount() {
        return blocks.size();
    }

    /** Blocks pinned by running requests. */
    public int inUseBlocks() {
        return inUse;
    }

    /** Requests admitted and not yet released. */
    public int runningRequests() {
        return running.size();
    }

    /** Blocks stored since the engine started. */
    public long storedTotal() {
        return storedTotal;
    }

    /** Blocks evicted since the engine started. */
    public long evictedTotal() {
        return evictedTotal;
    }

    /** Full blocks found cached at admission, summed over every admission. */
    public long hitTotal() {
        return hitTotal;
    }

    /**
     * How many leading blocks of {@code ids[0 .. count)} are cached now, without touching the LRU order
     * (an oracle for tests and simulations: the depth an exact index should report for this worker).
     */
    public int cachedPrefix(long[] ids, int count) {
        long e = 0;
        for (int i = 0; i < count; i++) {
            e = engineHash(i > 0, e, ids[i]);
            if (!blocks.containsKey(e)) {
                return i;
            }
        }
        return count;
    }

    /** Full blocks loaded back from the CPU tier at admission, summed over every admission. */
    public long lowerTierTotal() {
        return lowerTierTotal;
    }

    /** Blocks on the CPU tier now. */
    public int cpuBlockCount() {
        return cpu.size();
    }

    /** As {@link #cachedPrefix}, counting a block the GPU or the CPU tier holds (the any-tier depth). */
    public int cachedPrefixAnyTier(long[] ids, int count) {
        long e = 0;
        for (int i = 0; i < count; i++) {
            e = engineHash(i > 0, e, ids[i]);
            if (!blocks.containsKey(e) && !cpu.containsKey(e)) {
                return i;
            }
        }
        return count;
    }

    /** Whether the engine holds a block with engine hash {@code e}. */
    public boolean holds(long e) {
        return blocks.containsKey(e);
    }

    /**
     * Admits {@code request}: pins its cached prefix, evicts what it must, caches its other full blocks
     * (those that fit) and returns the events (see the class comment).
     *
     * @throws IllegalStateException if this request (by index) is already running here
     */
    public AdmitResult admit(TraceRequest request) {
        if (running.containsKey(request.index())) {
            throw new IllegalStateException("request #" + request.index() + " is already running on worker " + worker);
        }
        long[] ids = request.hashIds();
        int n = request.fullBlocks(tokensPerBlock);
        long[] e = engineHashes(ids, n);
        Block[] pinned = new Block[n];
        int cached = 0;
        while (cached < n) {
            Block b = blocks.get(e[cached]);
            if (b == null) {
                break;
            }
            pin(b);
            pinned[cached++] = b;
        }
        hitTotal += cached;
        int lower = 0;
        while (cached + lower < n && cpu.get(e[cached + lower]) != null) { // get: most recently used now
            lower++;
        }
        int need = n - cached;
        int toStore = Math.min(need, capacity - inUse);
        lower = Math.min(lower, toStore);
        lowerTierTotal += lower;
        int evict = Math.max(0, blocks.size() + toStore - capacity);
        List<KvEvent> events = new ArrayList<>(2);
        if (evict > 0) {
            evict(evict, events);
        }
        if (toStore > 0) {
            store(request, e, cached, toStore, pinned, events);
        }
        running.put(request.index(), cached + toStore == n ? pinned : Arrays.copyOf(pinned, cached + toStore));
        return new AdmitResult(cached, toStore, need - toStore, evict, events, lower);
    }

    /** Evicts {@code evict} blocks from the head of the LRU queue (offloading them to the CPU tier, if any). */
    private void evict(int evict, List<KvEvent> events) {
        long[] removed = new long[evict];
        for (int k = 0; k < evict; k++) {
            removed[k] = evictHead();
        }
        if (cpuCapacity > 0) {
            offload(removed, events);
        }
        events.add(new KvEvent.Removed(worker, removed));
    }

    /**
     * Caches {@code request}'s blocks {@code [cached, cached + toStore)} (engine hashes {@code e}), pinned,
     * after the cached prefix, into {@code pinned}; their stored event goes to {@code events}.
     */
    private void store(TraceRequest request, long[] e, int cached, int toStore, Block[] pinned, List<KvEvent> events) {
        long[] ids = request.hashIds();
        Block parent = cached > 0 ? pinned[cached - 1] : null;
        long[] storedE = Arrays.copyOfRange(e, cached, cached + toStore);
        long[] storedL = new long[toStore];
        for (int i = 0; i < toStore; i++) {
            storedL[i] = localHash.applyAsLong(ids[cached + i]);
        }
        for (int i = 0; i < toStore; i++) {
            if (blocks.containsKey(storedE[i])) {
                throw new IllegalStateException("engine hash collision at block " + (cached + i) + " of request #"
                        + request.index() + " on worker " + worker);
            }
            Block b = new Block(storedE[i], storedL[i], parent);
            if (parent != null) {
                parent.children++;
            }
            b.refs = 1;
            inUse++;
            blocks.put(b.e, b);
            pinned[cached + i] = b;
            parent = b;
        }
        storedTotal += toStore;
        events.add(new KvEvent.Stored(
                worker, cached > 0 ? OptionalLong.of(pinned[cached - 1].e) : OptionalLong.empty(), storedE, storedL));
    }

    /**
     * The GPU evicted {@code removed}: they go to the CPU tier (a copy names the new ones), which
     * evicts its least recently used blocks beyond its capacity (a removal on the CPU).
     */
    private void offload(long[] removed, List<KvEvent> events) {
        long[] fresh = new long[removed.length];
        int k = 0;
        for (long e : removed) {
            if (cpu.put(e, Boolean.TRUE) == null) {
                fresh[k++] = e;
            }
        }
        if (k > 0) {
            events.add(new KvEvent.Copied(worker, Arrays.copyOf(fresh, k), Medium.CPU));
        }
        int over = cpu.size() - cpuCapacity;
        if (over > 0) {
            long[] gone = new long[over];
            var it = cpu.keySet().iterator();
            for (int i = 0; i < over; i++) {
                gone[i] = it.next();
                it.remove();
            }
            events.add(new KvEvent.Removed(worker, gone, Medium.CPU));
        }
    }

    /**
     * The request finished: unpins its blocks, last block first; blocks no running request uses become
     * evictable, in that order.
     *
     * @throws IllegalStateException if the request is not running here
     */
    public void release(TraceRequest request) {
        Block[] pinned = running.remove(request.index());
        if (pinned == null) {
            throw new IllegalStateException("request #" + request.index() + " is not running on worker " + worker);
        }
        for (int i = pinned.length - 1; i >= 0; i--) {
            Block b = pinned[i];
            if (--b.refs == 0) {
                inUse--;
                // append at the tail: evicted after everything freed before it
                b.prev = queue.prev;
                b.next = queue;
                queue.prev.next = b;
                queue.prev = b;
                freeCount++;
            }
        }
    }

    private void pin(Block b) {
        if (b.refs++ == 0) {
            unlink(b);
            inUse++;
        }
    }

    private void unlink(Block b) {
        b.prev.next = b.next;
        b.next.prev = b.prev;
        b.prev = null;
        b.next = null;
        freeCount--;
    }

    private long evictHead() {
        Block b = queue.next;
        if (b == queue) {
            throw new IllegalStateException(
                    "no evictable block on worker " + worker + " (bug: the room was miscounted)");
        }
        if (b.children != 0) {
            throw new IllegalStateException("bug: block " + Long.toUnsignedString(b.e) + " on worker " + worker
                    + " reached the head of the LRU queue with " + b.children + " cached children");
        }
        unlink(b);
        blocks.remove(b.e);
        if (b.parent != null) {
            b.parent.children--;
        }
        evictedTotal++;
        return b.e;
    }

    /**
     * Checks the engine's internal consistency and throws {@link IllegalStateException} naming the first
     * violation: at most {@code capacity} blocks; the free queue holds exactly the unpinned blocks, each
     * once, linked both ways; pin counts match the running requests; every cached block's parent is
     * cached; child counts are right; and in the free queue every block comes before its parent
     * (leaf-first eviction). Costs time linear in the cache size; for tests.
     */
    public void checkInvariants() {
        if (blocks.size() > capacity) {
            fail(blocks.size() + " blocks cached, capacity " + capacity);
        }
        if (cpu.size() > cpuCapacity) {
            fail(cpu.size() + " blocks on the CPU tier, capacity " + cpuCapacity);
        }
        Set<Block> seen = checkFreeQueue();
        IdentityHashMap<Block, int[]> pins = new IdentityHashMap<>();
        for (Block[] req : running.values()) {
            for (Block b : req) {
                pins.computeIfAbsent(b, k -> new int[1])[0]++;
            }
        }
        IdentityHashMap<Block, int[]> kids = new IdentityHashMap<>();
        int pinnedBlocks = 0;
        for (Block b : blocks.values()) {
            int expected = pins.containsKey(b) ? pins.get(b)[0] : 0;
            if (b.refs != expected) {
                fail("block " + Long.toUnsignedString(b.e) + " has " + b.refs + " pins, running requests hold "
                        + expected);
            }
            if (b.refs > 0) {
                pinnedBlocks++;
            } else if (!seen.contains(b)) {
                fail("free block " + Long.toUnsignedString(b.e) + " is not in the free queue");
            }
            if (b.parent != null) {
                if (blocks.get(b.parent.e) != b.parent) {
                    fail("block " + Long.toUnsignedString(b.e) + " is cached but its parent is not");
                }
                kids.computeIfAbsent(b.parent, k -> new int[1])[0]++;
            }
        }
        for (Block b : blocks.values()) {
            int expected = kids.containsKey(b) ? kids.get(b)[0] : 0;
            if (b.children != expected) {
                fail("block " + Long.toUnsignedString(b.e) + " counts " + b.children + " children, has " + expected);
            }
        }
        for (Block b : pins.keySet()) {
            if (blocks.get(b.e) != b) {
                fail("a running request pins block " + Long.toUnsignedString(b.e) + ", which is not cached");
            }
        }
        if (pinnedBlocks != inUse) {
            fail(pinnedBlocks + " blocks pinned, counter says " + inUse);
        }
    }

    /** Checks the free queue (links, pins, membership, each once, leaf before parent); the blocks in it. */
    private Set<Block> checkFreeQueue() {
        Set<Block> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        int queued = 0;
        for (Block b = queue.next; b != queue; b = b.next) {
            if (b.next.prev != b) {
                fail("free queue links broken at " + Long.toUnsignedString(b.e));
            }
            if (b.refs != 0) {
                fail("block " + Long.toUnsignedString(b.e) + " is queued as free with " + b.refs + " pins");
            }
            if (blocks.get(b.e) != b) {
                fail("queued block " + Long.toUnsignedString(b.e) + " is not cached");
            }
            if (!seen.add(b)) {
                fail("block " + Long.toUnsignedString(b.e) + " is queued twice");
            }
            if (b.parent != null && seen.contains(b.parent)) {
                fail("block " + Long.toUnsignedString(b.parent.e) + " would be evicted before its child "
                        + Long.toUnsignedString(b.e));
            }
            queued++;
        }
        if (queued != freeCount) {
            fail("free queue holds " + queued + " blocks, counter says " + freeCount);
        }
        return seen;
    }

    private void fail(String what) {
        throw new IllegalStateException("mock engine " + worker + ": " + what);
    }

    @Override
    public String toString() {
        return "MockEngine[" + worker + ", " + blocks.size() + "/" + capacity + " blocks, " + inUse + " in use, "
                + running.size() + " running]";
    }
}
