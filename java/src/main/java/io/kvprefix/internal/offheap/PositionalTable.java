package io.kvprefix.internal.offheap;

import static io.kvprefix.internal.offheap.TableLayout.STATE_BUSY;
import static io.kvprefix.internal.offheap.TableLayout.STATE_EMPTY;

import io.kvprefix.internal.ffi.Libc;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One generation of the off-heap positional table (records in {@link TableLayout}): a power-of-two
 * number of slots keyed by {@code (position, local hash)}, a hot segment readers probe and a cold
 * segment of tree links. The only code that turns a slot into a record address.
 *
 * <p>A generation never moves or deletes a live slot; a rebuild ({@link Generations}) copies the
 * live slots into a new generation. Slots are reserved before a store inserts into them, so the
 * table never fills past its load limit and every probe ends at an empty slot.
 *
 * <p>Thread-safety: readers may probe from any thread; writers of different workers may insert
 * concurrently (slots are claimed by CAS, children are pushed by CAS); copying into a new
 * generation happens while every writer is held out.
 */
final class PositionalTable {
    /** Most slots (live, dead or reserved) a generation may hold, as a fraction of its capacity. */
    static final int MAX_LOAD_PERCENT = 70;
    /**
     * Highest load a rebuild leaves (the smallest power of two at or under it is chosen), so a table
     * runs between about 35% and 70% full: memory per entry stays low, probes stay short.
     */
    static final int TARGET_LOAD_PERCENT = 50;

    static final int MIN_CAPACITY = 1 << 10;

    private final MemoryPool.Block hotBlock;
    private final MemoryPool.Block coldBlock;
    private final MemorySegment hot;
    private final MemorySegment cold;
    /**
     * The hot segment seen as global-scope memory, passed to the native kernel (null on the Java
     * path). Native calls on it skip the shared arena's liveness check; the {@link ReadGate} is what
     * keeps the memory alive during a call.
     */
    final MemorySegment hotView;

    final int capacity;
    final int mask;
    final int words;
    private final long stride;
    final long maxOccupied;
    /** Occupied slots plus slots reserved by stores in progress. */
    final AtomicLong occupied = new AtomicLong();

    private PositionalTable(
            MemoryPool.Block hotBlock, MemoryPool.Block coldBlock, int capacity, int words, boolean nativeView) {
        this.hotBlock = hotBlock;
        this.coldBlock = coldBlock;
        this.hot = hotBlock.segment;
        this.cold = coldBlock.segment;
        this.hotView = nativeView ? Libc.segment(hot.address(), hot.byteSize()) : null;
        this.capacity = capacity;
        this.mask = capacity - 1;
        this.words = words;
        this.stride = TableLayout.hotStride(words);
        this.maxOccupied = (long) capacity * MAX_LOAD_PERCENT / 100;
    }

    // ------------------------------------------------------------------ sizing and lifetime

    /** Bytes a table of this shape takes. */
    static long bytesFor(int capacity, int words) {
        return (long) capacity * (TableLayout.hotStride(words) + TableLayout.COLD_STRIDE);
    }

    /** The capacity a rebuild picks for {@code entries} entries: the smallest power of two they fill at most half of. */
    static int capacityFor(long entries) {
        long need = Math.max(MIN_CAPACITY, (entries * 100 + TARGET_LOAD_PERCENT - 1) / TARGET_LOAD_PERCENT);
        if (need > (1 << 30)) {
            return -1;
        }
        return need <= 1 ? 1 : Integer.highestOneBit((int) need - 1) << 1;
    }

    /** The capacity of a first table meant to hold {@code expected} entries (half full when they are all there). */
    static int initialCapacity(long expected) {
        if (expected <= 0) {
            return MIN_CAPACITY;
        }
        int cap = capacityFor(expected);
        return cap < 0 ? (1 << 30) : cap;
    }

    /**
     * A new empty generation, or null if the budget does not allow it; {@code nativeView} adds the
     * view the native kernel reads.
     */
    static PositionalTable allocate(MemoryPool pool, int capacity, int words, boolean nativeView) {
        long hotBytes = (long) capacity * TableLayout.hotStride(words);
        long coldBytes = (long) capacity * TableLayout.COLD_STRIDE;
        if (!pool.fits(hotBytes + coldBytes)) {
            return null;
        }
        MemoryPool.Block h = pool.allocate(hotBytes);
        if (h == null) {
            return null;
        }
        MemoryPool.Block c = pool.allocate(coldBytes);
        if (c == null) {
            h.free();
            return null;
        }
        return new PositionalTable(h, c, capacity, words, nativeView);
    }

    /** Reserves room for {@code n} new slots; false if that would pass the load limit. */
    boolean tryReserve(int n) {
        long after = occupied.addAndGet(n);
        if (after <= maxOccupied) {
            return true;
        }
        occupied.addAndGet(-n);
        return false;
    }

    /** Gives back reserved slots a store did not use. */
    void unreserve(int n) {
        if (n != 0) {
            occupied.addAndGet(-n);
        }
    }

    long bytes() {
        return hotBlock.bytes() + coldBlock.bytes();
    }

    void free() {
        hotBlock.free();
        coldBlock.free();
    }

    // ------------------------------------------------------------------ records

    private long hotBase(int slot) {
        return slot * stride;
    }

    private static long coldBase(int slot) {
        return slot * TableLayout.COLD_STRIDE;
    }

    /** The home slot of {@code (position, local)}. */
    int home(int position, long local) {
        return TableLayout.home(position, local, mask);
    }

    /** The state of {@code slot} (acquire): empty, busy, or {@code position + 1}. */
    int state(int slot) {
        return TableLayout.stateAcquire(hot, hotBase(slot));
    }

    long local(int slot) {
        return TableLayout.local(hot, hotBase(slot));
    }

    long chain(int slot) {
        return TableLayout.chain(hot, hotBase(slot));
    }

    /** The parent slot, or -1 at position 0. */
    int parent(int slot) {
        return TableLayout.parent(hot, hotBase(slot));
    }

    /** Word {@code word} of the reach bits of {@code slot} (acquire). */
    long bits(int slot, int word) {
        return TableLayout.bitsAcquire(hot, hotBase(slot), word);
    }

    boolean hasBit(int slot, int workerSlot) {
        return TableLayout.hasBit(hot, hotBase(slot), workerSlot);
    }

    void setBit(int slot, int workerSlot) {
        TableLayout.setBit(hot, hotBase(slot), workerSlot);
    }

    void clearBit(int slot, int workerSlot) {
        TableLayout.clearBit(hot, hotBase(slot), workerSlot);
    }

    boolean anyBit(int slot) {
        for (int k = 0; k < words; k++) {
            if (bits(slot, k) != 0) {
                return true;
            }
        }
        return false;
    }

    /** True if every worker in {@code active} is in the reach bits of {@code slot}. */
    boolean covers(int slot, long[] active) {
        for (int w = 0; w < words; w++) {
            if ((active[w] & ~bits(slot, w)) != 0) {
                return false;
            }
        }
        return true;
    }

    /** First child slot, or -1. */
    int firstChild(int slot) {
        return TableLayout.firstChild(cold, coldBase(slot));
    }

    /** Next sibling slot, or -1. */
    int nextSibling(int slot) {
        return TableLayout.nextSibling(cold, coldBase(slot));
    }

    /** Loads the record at the home of {@code (position, local)} to start its cache miss; the value means nothing. */
    long touch(int position, long local) {
        return TableLayout.local(hot, hotBase(home(position, local)));
    }

    /** As {@link #touch}, loading the state word (what a writer's probe reads first). */
    int touchState(int position, long local) {
        return state(home(position, local));
    }

    // ------------------------------------------------------------------ probing

    /** The slot of {@code (pos, local, chain)}, or -1. */
    int probe(int pos, long local, long chain) {
        int want = pos + 1;
        int i = home(pos, local);
        for (int n = 0; n <= mask; n++) {
            int st = state(i);
            if (st == STATE_EMPTY) {
                return -1;
            }
            if (st == want && local(i) == local && chain(i) == chain) {
                return i;
            }
            i = (i + 1) & mask;
        }
        return -1;
    }

    /**
     * The slot of {@code (pos, local, chain)}, inserting it with its parent link if absent (the
     * caller reserved room). Returns the slot if it was there, or {@code ~slot} (negative) if it was
     * inserted now.
     */
    int findOrInsert(int pos, long local, long chain, int parent) {
        int want = pos + 1;
        int i = home(pos, local);
        while (true) {
            long base = hotBase(i);
            int st = TableLayout.stateAcquire(hot, base);
            if (st == STATE_EMPTY) {
                if (!TableLayout.claim(hot, base)) {
                    continue; // lost the race for this slot: look at it again
                }
                TableLayout.writeKey(hot, base, local, chain, parent);
                if (parent >= 0) {
                    linkChild(
                            parent,
                            i); // before publishing: a writer that finds this entry must find it among the children
                }
                TableLayout.publish(hot, base, pos);
                return ~i;
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

    private void linkChild(int parent, int child) {
        long pc = coldBase(parent);
        long cb = coldBase(child);
        while (true) {
            int head = TableLayout.firstChild(cold, pc);
            TableLayout.setNextSibling(cold, cb, head);
            if (TableLayout.casFirstChild(cold, pc, head, child)) {
                return;
            }
        }
    }

    /**
     * Orders {@code slots[0..m)} deepest position first (ties in any order), using {@code keys} (room
     * for {@code m}) when the slots are neither ascending nor descending already.
     */
    void sortDeepestFirst(int[] slots, int m, long[] keys) {
        if (m < 2) {
            return;
        }
        boolean ascending = true, descending = true;
        int prev = state(slots[0]);
        for (int i = 1; i < m; i++) {
            int st = state(slots[i]);
            ascending &= st >= prev;
            descending &= st <= prev;
            prev = st;
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
        for (int i = 0; i < m; i++) { // (state << 32 | slot), sorted ascending, read back reversed
            keys[i] = ((long) state(slots[i]) << 32) | slots[i];
        }
        Arrays.sort(keys, 0, m);
        for (int i = 0; i < m; i++) {
            slots[i] = (int) keys[m - 1 - i];
        }
    }

    // ------------------------------------------------------------------ copying into a new generation

    /** In a rebuild's slot map: not (yet) known to be live. */
    static final int UNMARKED = -1;
    /** In a rebuild's slot map: live, not yet copied. */
    static final int LIVE = -2;

    /** A slot map for a rebuild of this generation: every slot {@link #UNMARKED}. */
    int[] newSlotMap() {
        int[] map = new int[capacity];
        Arrays.fill(map, UNMARKED);
        return map;
    }

    /**
     * Marks {@link #LIVE} in {@code map} every live slot whose reach bits are not all clear, in one
     * sequential pass; returns how many it marked.
     */
    long markReached(int[] map) {
        long count = 0;
        for (int i = 0; i < capacity; i++) {
            if (state(i) > 0 && anyBit(i)) {
                map[i] = LIVE;
                count++;
            }
        }
        return count;
    }

    /** Marks {@code slot} and its unmarked ancestors {@link #LIVE}; returns how many it marked. */
    long markWithAncestors(int slot, int[] map) {
        long count = 0;
        for (int s = slot; s >= 0 && map[s] == UNMARKED; s = parent(s)) {
            map[s] = LIVE;
            count++;
        }
        return count;
    }

    /**
     * Copies every slot of {@code old} marked {@link #LIVE} in {@code map} into this (empty)
     * generation, with its reach bits, and links parents and children in the new numbering. On
     * return {@code map} maps each old slot to its new slot (negative for slots not copied).
     */
    void copyFrom(PositionalTable old, int[] map) {
        for (int i = 0; i < old.capacity; i++) {
            if (map[i] != LIVE) {
                continue;
            }
            long ob = old.hotBase(i);
            int state = TableLayout.stateAcquire(old.hot, ob);
            long local = TableLayout.local(old.hot, ob);
            int j = home(state - 1, local);
            while (state(j) != STATE_EMPTY) {
                j = (j + 1) & mask;
            }
            long nb = hotBase(j);
            TableLayout.writeKey(hot, nb, local, TableLayout.chain(old.hot, ob), TableLayout.parent(old.hot, ob));
            for (int k = 0; k < old.words; k++) {
                TableLayout.putBitsPlain(hot, nb, k, TableLayout.bitsAcquire(old.hot, ob, k));
            }
            TableLayout.publish(hot, nb, state - 1);
            map[i] = j;
        }
        for (int i = 0; i < old.capacity; i++) { // parent slots and child lists in the new numbering
            int j = map[i];
            if (j < 0) {
                continue;
            }
            long nb = hotBase(j);
            int p = TableLayout.parent(hot, nb);
            if (p >= 0) {
                int np = map[p];
                TableLayout.setParent(hot, nb, np);
                long pc = coldBase(np);
                TableLayout.setNextSibling(cold, coldBase(j), TableLayout.firstChild(cold, pc));
                TableLayout.setFirstChildPlain(cold, pc, j);
            }
        }
    }
}
