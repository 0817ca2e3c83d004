package io.kvprefix.internal.offheap;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * Every offset, size and bit field of the off-heap chain index's records; no other class writes a
 * numeric offset. The native match kernel ({@code include/kvprefix.h}) reads the same records and
 * states the same numbers; a test compares them.
 *
 * <p>A <b>run</b> is a stretch of consecutive blocks of one chain, stored together: block {@code i}
 * of a run sits at position {@code start + i} and continues block {@code i - 1} (block 0 continues
 * the run's parent block, or starts a chain). A <b>block id</b> is {@code run << 6 | offset}. Runs
 * hang from a block of another run at any offset; the <b>child table</b> finds them.
 *
 * <pre>
 * run record: a 56-byte header, then capacity x 8 bytes of local hashes (capacity 4, 8, 16, 32 or 64)
 *  0 i32 length      blocks stored; only grows; release store after the hashes   | read by matches
 *  4 i32 entries     holder positions in use; release store after the entry      | read by matches
 *  8 u64 chunks      address of the first entry chunk (0 = none yet)             | read by matches
 * 16 u64 entry 0     holder position 0 (inline)                                  | read by matches
 * 24 u64 entry 1     holder position 1 (inline)                                  | read by matches
 * 32 i32 start       position of block 0
 * 36 i32 parent      block id + 1 of the block this run continues (0 = none)
 * 40 i32 lock        writers' lock: bit 0 held, bit 1 dead (being recycled), bit 2 moved (to a bigger record)
 * 44 i32 capacity    blocks this record has room for
 * 48 i32 children    runs hanging from this run (writers only; the list itself is in RunLinks)
 * 52 i32 holders     entries that are not vacant (writers only)
 * 56 u64 local[capacity]   immutable once covered by length
 *
 * holder entry (u64): one worker's holding in one run, written only under the run's lock
 *  bits  0..31  worker slot + 1 (0 = vacant position)
 *  bits 32..39  cutoff: the worker holds blocks [0, cutoff) of the run and every ancestor of them
 *  bits 40..47  unreachable: blocks of this run the worker holds without holding an ancestor
 *  bits 48..55  pins: a store in progress needs the run to stay alive
 *
 * entry chunk: holder positions 2, 3, ... of a run (8, 16, 32, then 64 positions per chunk)
 *  0 u64 next        address of the next chunk (0 = none)
 *  8 i32 capacity    positions in this chunk
 * 16 u64 entry[capacity]
 *
 * child table record (open addressing over a power-of-two number of records)
 *  0 u64 local       local hash of the child run's block 0
 *  8 i32 parent      block id + 1 the child run continues (0 = the run starts a chain)
 * 12 i32 run         run id + 1 of the child; 0 empty, -1 being written, -2 removed (a tombstone)
 * </pre>
 *
 * <p>Publication: a writer fills a run's hashes, then stores its length with release semantics; a
 * new entry is written before the entry count (release); a child record's key before its run field
 * (release). Readers load length, count and run field with acquire semantics and only then read
 * what they cover. An entry is one 64-bit word, so a reader sees it whole.
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
