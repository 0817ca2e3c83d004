package io.kvprefix.internal.offheap;

import static io.kvprefix.internal.offheap.TableLayout.NAME_KEY;
import static io.kvprefix.internal.offheap.TableLayout.NAME_STRIDE;
import static io.kvprefix.internal.offheap.TableLayout.NAME_VALUE;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * One worker's names: engine hash {@code E} to the table slot of the block it names, off-heap
 * (record layout in {@link TableLayout}). Open addressing with linear probing and backward-shift
 * deletion, so there are no tombstones; it grows by doubling before a store needs the room and
 * shrinks when a worker is cleared.
 *
 * <p>Thread-safety: not thread-safe. Only the writer that owns the worker touches it (the index's
 * rebuild does too, while it holds every writer out).
 */
final class NameMap {
    static final int MIN_CAPACITY = 16;
    private static final int MAX_LOAD_PERCENT = 70;

    private final MemoryPool pool;
    private MemoryPool.Block block;
    private MemorySegment seg;
    private int mask;
    private int size;

    private NameMap(MemoryPool pool, MemoryPool.Block block, int capacity) {
        this.pool = pool;
        this.block = block;
        this.seg = block.segment;
        this.mask = capacity - 1;
    }

    /** A map with room for {@code expected} names, or null if the budget does not allow it. */
    static NameMap create(MemoryPool pool, int expected) {
        int cap = capacityFor(expected);
        MemoryPool.Block b = pool.allocate(cap * NAME_STRIDE);
        return b == null ? null : new NameMap(pool, b, cap);
    }

    static int capacityFor(long names) {
        long need = Math.max(MIN_CAPACITY, names * 100 / MAX_LOAD_PERCENT + 1);
        if (need > (1 << 30)) {
            throw new IllegalStateException("a worker with more than 750 million names is not supported");
        }
        return Integer.highestOneBit((int) need - 1) << 1;
    }

    static long bytesFor(long names) {
        return capacityFor(names) * NAME_STRIDE;
    }

    private static int home(long key, int mask) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 29) ^ (h >>> 47)) & mask;
    }

    int size() {
        return size;
    }

    long bytes() {
        return block.bytes();
    }

    /** True if {@code more} names fit without growing. */
    boolean hasRoomFor(int more) {
        return (long) (size + more) * 100 <= (long) (mask + 1) * MAX_LOAD_PERCENT;
    }

    /** Grows so that {@code more} names fit; false (and unchanged) if the budget does not allow it. */
    boolean ensureRoomFor(int more) {
        if (hasRoomFor(more)) {
            return true;
        }
        int cap = capacityFor((long) size + more);
        MemoryPool.Block nb = pool.allocate(cap * NAME_STRIDE);
        if (nb == null) {
            return false;
        }
        rehashInto(nb, cap);
        return true;
    }

    private void rehashInto(MemoryPool.Block nb, int cap) {
        MemorySegment old = seg;
        int oldCap = mask + 1;
        MemoryPool.Block oldBlock = block;
        block = nb;
        seg = nb.segment;
        mask = cap - 1;
        size = 0;
        for (int i = 0; i < oldCap; i++) {
            long base = i * NAME_STRIDE;
            int v = old.get(ValueLayout.JAVA_INT, base + NAME_VALUE);
            if (v != 0) {
                insertNew(old.get(ValueLayout.JAVA_LONG, base + NAME_KEY), v);
            }
        }
        oldBlock.free();
    }

    private void insertNew(long key, int storedValue) {
        int i = home(key, mask);
        while (seg.get(ValueLayout.JAVA_INT, i * NAME_STRIDE + NAME_VALUE) != 0) {
            i = (i + 1) & mask;
        }
        seg.set(ValueLayout.JAVA_LONG, i * NAME_STRIDE + NAME_KEY, key);
        seg.set(ValueLayout.JAVA_INT, i * NAME_STRIDE + NAME_VALUE, storedValue);
        size++;
    }

    /** Loads the home record of {@code key} (to start its cache miss early); the value means nothing. */
    int touch(long key) {
        return seg.get(ValueLayout.JAVA_INT, home(key, mask) * NAME_STRIDE + NAME_VALUE);
    }

    /** The record holding {@code key}, or the empty record where its probe run ends. */
    private int find(long key) {
        int i = home(key, mask);
        while (true) {
            long base = i * NAME_STRIDE;
            if (seg.get(ValueLayout.JAVA_INT, base + NAME_VALUE) == 0
                    || seg.get(ValueLayout.JAVA_LONG, base + NAME_KEY) == key) {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /** The stored value of record {@code i}: slot + 1, or 0 if the record is empty. */
    private int value(int i) {
        return seg.get(ValueLayout.JAVA_INT, i * NAME_STRIDE + NAME_VALUE);
    }

    /** The slot named {@code key}, or -1. */
    int get(long key) {
        return value(find(key)) - 1;
    }

    /** Maps {@code key} to {@code slot}; returns the previous slot or -1. The caller ensured room. */
    int put(long key, int slot) {
        int i = find(key);
        int v = value(i);
        if (v == 0) {
            if (!hasRoomFor(1)) {
                throw new IllegalStateException("name map full: room was not reserved");
            }
            seg.set(ValueLayout.JAVA_LONG, i * NAME_STRIDE + NAME_KEY, key);
            size++;
        }
        seg.set(ValueLayout.JAVA_INT, i * NAME_STRIDE + NAME_VALUE, slot + 1);
        return v - 1;
    }

    /** Removes {@code key}; returns its slot or -1 if absent. */
    int remove(long key) {
        int i = find(key);
        int v = value(i);
        if (v != 0) {
            shiftBack(i);
            size--;
        }
        return v - 1;
    }

    /** Backward-shift deletion: moves later records of the probe run into the hole at {@code hole}. */
    private void shiftBack(int hole) {
        int i = hole;
        while (true) {
            i = (i + 1) & mask;
            long base = i * NAME_STRIDE;
            int v = seg.get(ValueLayout.JAVA_INT, base + NAME_VALUE);
            if (v == 0) {
                break;
            }
            long key = seg.get(ValueLayout.JAVA_LONG, base + NAME_KEY);
            int h = home(key, mask);
            // The record at i may move to the hole if its home is not within (hole, i] cyclically.
            boolean movable = hole <= i ? (h <= hole || h > i) : (h <= hole && h > i);
            if (movable) {
                long hb = hole * NAME_STRIDE;
                seg.set(ValueLayout.JAVA_LONG, hb + NAME_KEY, key);
                seg.set(ValueLayout.JAVA_INT, hb + NAME_VALUE, v);
                hole = i;
            }
        }
        seg.set(ValueLayout.JAVA_INT, hole * NAME_STRIDE + NAME_VALUE, 0);
        seg.set(ValueLayout.JAVA_LONG, hole * NAME_STRIDE + NAME_KEY, 0L);
    }

    /** Visits every (key, slot). Must not modify the map. */
    void forEach(Visitor v) {
        for (int i = 0; i <= mask; i++) {
            long base = i * NAME_STRIDE;
            int val = seg.get(ValueLayout.JAVA_INT, base + NAME_VALUE);
            if (val != 0) {
                v.visit(seg.get(ValueLayout.JAVA_LONG, base + NAME_KEY), val - 1);
            }
        }
    }

    /**
     * Copies every slot value (one per key, so a slot held under several names appears several
     * times) into {@code into}, which must have room for {@link #size()} values; returns the count.
     */
    int slots(int[] into) {
        int k = 0;
        for (int i = 0; i <= mask; i++) {
            int val = seg.get(ValueLayout.JAVA_INT, i * NAME_STRIDE + NAME_VALUE);
            if (val != 0) {
                into[k++] = val - 1;
            }
        }
        return k;
    }

    /** Replaces every slot value {@code s} by {@code remap[s]} (after a table rebuild). */
    void remapValues(int[] remap) {
        for (int i = 0; i <= mask; i++) {
            long base = i * NAME_STRIDE;
            int val = seg.get(ValueLayout.JAVA_INT, base + NAME_VALUE);
            if (val != 0) {
                seg.set(ValueLayout.JAVA_INT, base + NAME_VALUE, remap[val - 1] + 1);
            }
        }
    }

    int capacity() {
        return mask + 1;
    }

    /** Removes every name, keeping the memory. */
    void clear() {
        seg.fill((byte) 0);
        size = 0;
    }

    /** Frees the memory; the map must not be used afterwards. */
    void free() {
        block.free();
    }

    /** Receives the entries of {@link #forEach}. */
    @FunctionalInterface
    interface Visitor {
        void visit(long key, int slot);
    }
}
