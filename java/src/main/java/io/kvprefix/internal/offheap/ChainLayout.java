package io.kvprefix.internal.offheap;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * Every offset, size and bit field of the off-heap chain index's records; no other class writes a
 * numeric offset. The records, the publication order and what readers may read are drawn in this
 * package's {@code package-info.java} (<em>Records</em>); the native match kernel
 * ({@code include/kvprefix.h}) states the same numbers, and a test compares them.
 *
 * <p>Locks: none (constants and arithmetic).
 *
 * <p>Thread-safety: constants and stateless accessors; safe from any thread.
 */
final class ChainLayout {
    private ChainLayout() {}

    static final StructLayout RUN_HEADER = MemoryLayout.structLayout(
            ValueLayout.JAVA_INT.withName("length"),
            ValueLayout.JAVA_INT.withName("entries"),
            ValueLayout.JAVA_LONG.withName("chunks"),
            ValueLayout.JAVA_LONG.withName("entry0"),
            ValueLayout.JAVA_LONG.withName("entry1"),
            ValueLayout.JAVA_INT.withName("start"),
            ValueLayout.JAVA_INT.withName("parent"),
            ValueLayout.JAVA_INT.withName("lock"),
            ValueLayout.JAVA_INT.withName("capacity"),
            ValueLayout.JAVA_INT.withName("children"),
            ValueLayout.JAVA_INT.withName("holders"));
    static final StructLayout CHUNK_HEADER = MemoryLayout.structLayout(
            ValueLayout.JAVA_LONG.withName("next"),
            ValueLayout.JAVA_INT.withName("capacity"),
            MemoryLayout.paddingLayout(4));
    static final StructLayout CHILD = MemoryLayout.structLayout(
            ValueLayout.JAVA_LONG.withName("local"),
            ValueLayout.JAVA_INT.withName("parent"),
            ValueLayout.JAVA_INT.withName("run"));

    static final long RUN_LENGTH = offset(RUN_HEADER, "length");
    static final long RUN_ENTRIES = offset(RUN_HEADER, "entries");
    static final long RUN_CHUNKS = offset(RUN_HEADER, "chunks");
    static final long RUN_ENTRY0 = offset(RUN_HEADER, "entry0");
    static final long RUN_START = offset(RUN_HEADER, "start");
    static final long RUN_PARENT = offset(RUN_HEADER, "parent");
    static final long RUN_LOCK = offset(RUN_HEADER, "lock");
    static final long RUN_CAPACITY = offset(RUN_HEADER, "capacity");
    static final long RUN_CHILDREN = offset(RUN_HEADER, "children");
    static final long RUN_HOLDERS = offset(RUN_HEADER, "holders");
    static final long RUN_LOCALS = RUN_HEADER.byteSize();
    /** Holder positions inside the run header. */
    static final int INLINE_ENTRIES = 2;

    static final long CHUNK_NEXT = offset(CHUNK_HEADER, "next");
    static final long CHUNK_CAPACITY = offset(CHUNK_HEADER, "capacity");
    static final long CHUNK_ENTRIES = CHUNK_HEADER.byteSize();

    static final long CHILD_LOCAL = offset(CHILD, "local");
    static final long CHILD_PARENT = offset(CHILD, "parent");
    static final long CHILD_RUN = offset(CHILD, "run");
    static final long CHILD_STRIDE = CHILD.byteSize();
    static final int CHILD_EMPTY = 0;
    static final int CHILD_BUSY = -1;
    static final int CHILD_REMOVED = -2;

    /** Bits of a block id that hold the offset in its run. */
    static final int OFFSET_BITS = 6;
    /** The most blocks a run holds. */
    static final int MAX_RUN = 1 << OFFSET_BITS;
    /** The largest run id. */
    static final int MAX_RUN_ID = Integer.MAX_VALUE >>> OFFSET_BITS;
    /** Run capacities, smallest first. */
    static final int[] RUN_CAPACITIES = {4, 8, 16, 32, 64};
    /** Chunk capacities: the first chunk of a run, the second, ...; the last repeats. */
    static final int[] CHUNK_CAPACITIES = {8, 16, 32, 64};

    static final int LOCK_HELD = 1;
    static final int LOCK_DEAD = 2;
    static final int LOCK_MOVED = 4;

    private static long offset(StructLayout record, String field) {
        return record.byteOffset(MemoryLayout.PathElement.groupElement(field));
    }

    // ---- block ids

    static int block(int run, int offset) {
        return run << OFFSET_BITS | offset;
    }

    static int runOf(int block) {
        return block >>> OFFSET_BITS;
    }

    static int offsetOf(int block) {
        return block & (MAX_RUN - 1);
    }

    // ---- sizes

    static long runBytes(int capacity) {
        return RUN_LOCALS + 8L * capacity;
    }

    /** The smallest run capacity that holds {@code blocks} (at most {@link #MAX_RUN}). */
    static int runCapacityFor(int blocks) {
        for (int c : RUN_CAPACITIES) {
            if (c >= blocks) {
                return c;
            }
        }
        return MAX_RUN;
    }

    static long chunkBytes(int capacity) {
        return CHUNK_ENTRIES + 8L * capacity;
    }

    /** Capacity of a run's {@code k}-th entry chunk (0-based). */
    static int chunkCapacity(int k) {
        return CHUNK_CAPACITIES[Math.min(k, CHUNK_CAPACITIES.length - 1)];
    }

    // ---- holder entries

    static long entry(int slot, int cutoff, int unreachable, int pins) {
        return (slot + 1L) | (long) cutoff << 32 | (long) unreachable << 40 | (long) pins << 48;
    }

    /** The worker slot of an entry, or -1 for a vacant position. */
    static int entrySlot(long e) {
        return (int) e - 1;
    }

    static int entryCutoff(long e) {
        return (int) (e >>> 32) & 0xFF;
    }

    static int entryUnreachable(long e) {
        return (int) (e >>> 40) & 0xFF;
    }

    static int entryPins(long e) {
        return (int) (e >>> 48) & 0xFF;
    }

    /** True if the entry holds nothing and pins nothing (its position may be reused). */
    static boolean entryEmpty(long e) {
        return (e >>> 32) == 0;
    }

    // ---- the child table's home record

    /** The home record of {@code (parent block, local)} in a table of {@code mask + 1} records. */
    static int childHome(int parentBlock, long local, int mask) {
        long h = local ^ (0x9E3779B97F4A7C15L * (parentBlock + 2L));
        h ^= h >>> 33;
        h *= 0xFF51AFD7ED558CCDL;
        h ^= h >>> 33;
        return (int) h & mask;
    }
}
