package io.kvprefix.internal.offheap;

import io.kvprefix.internal.snapshot.SnapshotFormat;

/**
 * One segment of a {@link NameMap}: an open-addressing table with linear probing and
 * backward-shift deletion (no tombstones) over {@code capacity} records (any number: the home record
 * is a multiply-shift of the hash, not a mask, so a segment grown by half stays between 53% and 80%
 * full), holding the keys whose mixed hash starts with {@code prefix} (its top {@code depth} bits):
 * the keys (8 bytes each), the values (block id + 1, 4 bytes each; 0 = empty) and, in a tagged map,
 * one tag byte each, in one block of pool memory. A snapshot stores it as it lies (docs/SNAPSHOT.md
 * section 3.3).
 *
 * <p>Locks: none (see {@link NameMap}).
 *
 * <p>Thread-safety: not thread-safe; its map's writer owns it.
 */
final class NameSegment {
    final MemoryPool.Block block;
    final long keys;
    final long values;
    /** The tag bytes after the values, or 0 in an untagged map. */
    final long tags;

    final int capacity;
    /** How many top hash bits its keys share, and those bits. */
    final int depth;

    final long prefix;
    int size;
    /** Scratch of {@link NameMap#ensureRoomFor}: keys of the store that map here. */
    int adds;
    /** Scratch of {@link NameMap#ensureRoomFor}: the budget did not let it grow for this store. */
    boolean tight;

    NameSegment(MemoryPool.Block block, int capacity, int depth, long prefix, boolean tagged) {
        this.block = block;
        this.keys = block.address;
        this.values = block.address + 8L * capacity;
        this.tags = tagged ? values + 4L * capacity : 0;
        this.capacity = capacity;
        this.depth = depth;
        this.prefix = prefix;
    }

    int limit() {
        return (int) ((long) capacity * NameMap.MAX_LOAD_PERCENT / 100);
    }

    int tightLimit() {
        return (int) ((long) capacity * NameMap.TIGHT_LOAD_PERCENT / 100);
    }

    /** The home record of mixed hash {@code h}: its low 32 bits (the directory reads the top ones) scaled to the capacity. */
    int home(long h) {
        return SnapshotFormat.nameHome(h, capacity); // part of the snapshot format: segments are stored as they lie
    }

    int next(int i) {
        return i + 1 == capacity ? 0 : i + 1;
    }

    long key(int i) {
        return Mem.getLong(keys + 8L * i);
    }

    int value(int i) {
        return Mem.getInt(values + 4L * i);
    }

    void set(int i, long key, int value) {
        Mem.setLong(keys + 8L * i, key);
        Mem.setInt(values + 4L * i, value);
    }

    int tagAt(int i) {
        return tags == 0 ? 0 : Mem.getByte(tags + i) & 0xFF;
    }

    void setTagAt(int i, int tag) {
        if (tags != 0) {
            Mem.setByte(tags + i, (byte) tag);
        }
    }

    /** The record holding {@code key}, or the empty record where its probe run ends. */
    int find(long key, long h) {
        int i = home(h);
        while (value(i) != 0 && key(i) != key) {
            i = next(i);
        }
        return i;
    }

    void insertNew(long key, long h, int storedValue, int tag) {
        int i = home(h);
        while (value(i) != 0) {
            i = next(i);
        }
        set(i, key, storedValue);
        setTagAt(i, tag);
        size++;
    }
}
