package io.kvprefix.internal.offheap;

import io.kvprefix.internal.snapshot.SnapshotFormat;
import java.lang.foreign.MemorySegment;

/**
 * One worker's names: engine hash {@code E} to the id of the block it names, off-heap, 12 bytes a
 * name: the keys (8 bytes each) and then the values (block id + 1, 4 bytes each; 0 = empty) in one
 * block of pool memory. Open addressing with linear probing and backward-shift deletion, so there
 * are no tombstones. Its capacity is any number of records (the home record is a multiply-shift of
 * the key's hash, not a mask), so it can be sized exactly: it grows by half when it is 80% full,
 * which keeps it between 53% and 80% full, so a name costs 15 to 23 bytes. A tagged map (a worker's
 * any-tier view, docs/SPEC.md section 3.1) keeps one more byte per record after the values: the
 * tiers that hold the block under that name.
 *
 * <p>Thread-safety: not thread-safe. Only the writer that owns the worker touches it.
 */
final class NameMap {
    static final int MIN_CAPACITY = 16;
    private static final int MAX_LOAD_PERCENT = 80;

    private final MemoryPool pool;
    private final boolean tagged;
    private MemoryPool.Block block;
    private long keys;
    private long values;
    private long tags;
    private int capacity;
    private int size;

    private NameMap(MemoryPool pool, MemoryPool.Block block, int capacity, boolean tagged) {
        this.pool = pool;
        this.tagged = tagged;
        attach(block, capacity);
    }

    private void attach(MemoryPool.Block b, int capacity) {
        this.block = b;
        this.keys = b.address;
        this.values = b.address + 8L * capacity;
        this.tags = values + 4L * capacity;
        this.capacity = capacity;
    }

    /** A map with room for {@code expected} names, or null if the budget does not allow it. */
    static NameMap create(MemoryPool pool, int expected) {
        return create(pool, expected, false);
    }

    /** A map, tagged or not, with room for {@code expected} names, or null if the budget does not allow it. */
    static NameMap create(MemoryPool pool, int expected, boolean tagged) {
        int cap = capacityFor(expected);
        MemoryPool.Block b = pool.allocate(bytesFor(cap, tagged));
        return b == null ? null : new NameMap(pool, b, cap, tagged);
    }

    /**
     * A restore's map, tagged or not: {@code capacity} records copied in one go from {@code src} at
     * {@code offset} (keys, values and tags, as this class lays them out), holding {@code size}
     * names; null if the budget does not allow it.
     */
    static NameMap restore(MemoryPool pool, int capacity, int size, boolean tagged, MemorySegment src, long offset) {
        long bytes = bytesFor(capacity, tagged);
        MemoryPool.Block b = pool.allocate(bytes, false); // the copy touches every page
        if (b == null) {
            return null;
        }
        Mem.copyFrom(src, offset, b.address, bytes);
        NameMap m = new NameMap(pool, b, capacity, tagged);
        m.size = size;
        return m;
    }

    /** The map's memory (keys, values, and a tagged map's tags), for a snapshot. */
    MemorySegment memory() {
        return Mem.segment(block.address, bytesFor(capacity, tagged));
    }

    /** The capacity for {@code names} names: exactly 80% full with them (at least {@link #MIN_CAPACITY}). */
    static int capacityFor(long names) {
        long need = Math.max(MIN_CAPACITY, names * 100 / MAX_LOAD_PERCENT + 1);
        if (need > (1 << 30)) {
            throw new IllegalStateException("a worker with more than 850 million names is not supported");
        }
        return (int) need;
    }

    private static long bytesFor(int capacity, boolean tagged) {
        return (tagged ? 13L : 12L) * capacity;
    }

    /** The home record of {@code key} among {@code capacity} (part of the snapshot format: maps are stored as they lie). */
    private static int home(long key, int capacity) {
        return SnapshotFormat.nameHome(key, capacity);
    }

    private int next(int i) {
        return i + 1 == capacity ? 0 : i + 1;
    }

    int size() {
        return size;
    }

    int capacity() {
        return capacity;
    }

    long bytes() {
        return block.bytes();
    }

    private long key(int i) {
        return Mem.getLong(keys + 8L * i);
    }

    private int value(int i) {
        return Mem.getInt(values + 4L * i);
    }

    private void set(int i, long key, int value) {
        Mem.setLong(keys + 8L * i, key);
        Mem.setInt(values + 4L * i, value);
    }

    private int tagAt(int i) {
        return tagged ? Mem.getByte(tags + i) & 0xFF : 0;
    }

    private void setTagAt(int i, int tag) {
        if (tagged) {
            Mem.setByte(tags + i, (byte) tag);
        }
    }

    /** The tag of {@code key} (0 if absent, or if the map is not tagged). */
    int tag(long key) {
        int i = find(key);
        return value(i) == 0 ? 0 : tagAt(i);
    }

    /** Sets the tag of {@code key}, which must be present, in a tagged map. */
    void setTag(long key, int tag) {
        int i = find(key);
        if (value(i) == 0 || !tagged) {
            throw new IllegalStateException("no tag for an absent name, or in an untagged map");
        }
        setTagAt(i, tag);
    }

    /** Calls {@code to} with every (name, block id) pair. */
    void forEach(java.util.function.BiConsumer<Long, Integer> to) {
        for (int i = 0; i < capacity; i++) {
            int v = value(i);
            if (v != 0) {
                to.accept(key(i), v - 1);
            }
        }
    }

    /** True if {@code more} names fit without growing. */
    boolean hasRoomFor(int more) {
        return (long) (size + more) * 100 <= (long) capacity * MAX_LOAD_PERCENT;
    }

    /** Grows so that {@code more} names fit; false (and unchanged) if the budget does not allow it. */
    boolean ensureRoomFor(int more) {
        if (hasRoomFor(more)) {
            return true;
        }
        int cap = Math.max(capacityFor((long) size + more), capacity + capacity / 2); // grow by at least half
        MemoryPool.Block nb = pool.allocate(bytesFor(cap, tagged));
        if (nb == null) {
            return false;
        }
        rehashInto(nb, cap);
        return true;
    }

    private void rehashInto(MemoryPool.Block nb, int cap) {
        MemoryPool.Block oldBlock = block;
        long oldKeys = keys;
        long oldValues = values;
        long oldTags = tags;
        int oldCap = capacity;
        attach(nb, cap);
        size = 0;
        for (int i = 0; i < oldCap; i++) {
            int v = Mem.getInt(oldValues + 4L * i);
            if (v != 0) {
                insertNew(Mem.getLong(oldKeys + 8L * i), v, tagged ? Mem.getByte(oldTags + i) & 0xFF : 0);
            }
        }
        oldBlock.free();
    }

    private void insertNew(long key, int storedValue, int tag) {
        int i = home(key, capacity);
        while (value(i) != 0) {
            i = next(i);
        }
        set(i, key, storedValue);
        setTagAt(i, tag);
        size++;
    }

    /** Loads the home key of {@code key} (to start its cache miss early); the value means nothing. */
    long touch(long key) {
        return key(home(key, capacity));
    }

    /** The record holding {@code key}, or the empty record where its probe run ends. */
    private int find(long key) {
        int i = home(key, capacity);
        while (value(i) != 0 && key(i) != key) {
            i = next(i);
        }
        return i;
    }

    /** The block named {@code key}, or -1. */
    int get(long key) {
        return value(find(key)) - 1;
    }

    /**
     * Maps {@code key} to {@code block}; returns the previous block or -1. The caller ensured room. A
     * new name's tag is 0; an existing name keeps its tag.
     */
    int put(long key, int blockId) {
        int i = find(key);
        int v = value(i);
        if (v == 0) {
            if (!hasRoomFor(1)) {
                throw new IllegalStateException("name map full: room was not reserved");
            }
            size++;
            setTagAt(i, 0);
        }
        set(i, key, blockId + 1);
        return v - 1;
    }

    /** A placeholder value {@link #claim} leaves until {@link #setAt} fills it. */
    private static final int CLAIMED = -1;

    /**
     * Claims {@code key}'s record for a value to come (the caller ensured room): returns the record's
     * index in the low 32 bits and the block the name meant before + 1 (0 if none) in the high 32.
     * Until {@link #setAt} fills it, the name means nothing; indices stay valid as long as no name is
     * removed.
     */
    long claim(long key) {
        int i = find(key);
        int v = value(i);
        if (v == 0) {
            if (!hasRoomFor(1)) {
                throw new IllegalStateException("name map full: room was not reserved");
            }
            size++;
            setTagAt(i, 0);
        }
        set(i, key, CLAIMED);
        return (long) (v == CLAIMED ? 0 : v) << 32 | i;
    }

    /** Fills record {@code index} (from {@link #claim}) with {@code blockId}. */
    void setAt(int index, int blockId) {
        Mem.setInt(values + 4L * index, blockId + 1);
    }

    /** Gives back a claimed record: its name means {@code oldBlock} again (-1: the name is gone). */
    void unclaim(long key, int oldBlock) {
        if (oldBlock >= 0) {
            put(key, oldBlock);
        } else {
            remove(key);
        }
    }

    /** Removes {@code key}; returns its block or -1 if absent. */
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
            i = next(i);
            int v = value(i);
            if (v == 0) {
                break;
            }
            long key = key(i);
            int h = home(key, capacity);
            // The record at i may move to the hole if its home is not within (hole, i] cyclically.
            boolean movable = hole <= i ? (h <= hole || h > i) : (h <= hole && h > i);
            if (movable) {
                set(hole, key, v);
                setTagAt(hole, tagAt(i));
                hole = i;
            }
        }
        set(hole, 0L, 0);
        setTagAt(hole, 0);
    }

    /**
     * Copies every block id (one per name, so a block held under several names appears several times)
     * into {@code into}, which must have room for {@link #size()} values; returns the count.
     */
    int blocks(int[] into) {
        int k = 0;
        for (int i = 0; i < capacity; i++) {
            int v = value(i);
            if (v != 0) {
                into[k++] = v - 1;
            }
        }
        return k;
    }

    /** Removes every name, keeping the memory. */
    void clear() {
        Mem.zero(block.address, block.bytes());
        size = 0;
    }

    /** Frees the memory; the map must not be used afterwards. */
    void free() {
        block.free();
    }
}
