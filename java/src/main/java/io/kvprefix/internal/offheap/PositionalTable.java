package io.kvprefix.internal.offheap;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One generation of the off-heap positional table (record layout in {@link TableLayout}): a
 * power-of-two number of slots, a hot segment readers probe and a cold segment of tree links.
 *
 * <p>A generation never moves or deletes a live slot; a rebuild copies the live slots into a new
 * generation and the old one is freed once no reader can be on it. Slots are reserved before a
 * store inserts into them, so the table never fills past its load limit and every probe ends at an
 * empty slot.
 *
 * <p>Thread-safety: readers may probe from any thread; writers of different workers may insert
 * concurrently (slots are claimed by CAS, children are pushed by CAS); the rebuild owns the table
 * exclusively.
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

    final MemoryPool.Block hotBlock;
    final MemoryPool.Block coldBlock;
    final MemorySegment hot;
    final MemorySegment cold;
    /**
     * The hot segment seen as global-scope memory, passed to the native kernel (null on the Java
     * path). Native calls on it skip the shared arena's liveness check; the {@link ReadGate} is what
     * keeps the memory alive during a call.
     */
    final MemorySegment hotView;
    final int capacity;
    final int mask;
    final int words;
    final long stride;
    final long maxOccupied;
    /** Occupied slots plus slots reserved by stores in progress. */
    final AtomicLong occupied = new AtomicLong();

    private PositionalTable(MemoryPool.Block hotBlock, MemoryPool.Block coldBlock, int capacity, int words,
                            boolean nativeView) {
        this.hotBlock = hotBlock;
        this.coldBlock = coldBlock;
        this.hot = hotBlock.segment;
        this.cold = coldBlock.segment;
        this.hotView = nativeView ? MemorySegment.ofAddress(hot.address()).reinterpret(hot.byteSize()) : null;
        this.capacity = capacity;
        this.mask = capacity - 1;
        this.words = words;
        this.stride = TableLayout.hotStride(words);
        this.maxOccupied = (long) capacity * MAX_LOAD_PERCENT / 100;
    }

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
}
