package io.kvprefix.internal.offheap;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * Every offset and size of the off-heap positional table; no other class writes a numeric offset.
 * The native match kernel ({@code include/kvprefix.h}) reads the same records and states the same
 * numbers; a test compares them.
 *
 * <p>The table is open addressing with linear probing over a power-of-two number of slots, keyed
 * by {@code (position, local hash)}. Each slot has a <em>hot</em> record (everything a reader
 * touches) in one segment and a <em>cold</em> record (tree links only writers use) in another, at
 * the same slot index. {@code K} is the number of 64-bit words of the worker bitset; one table has
 * one {@code K} (a wider one is a rebuild).
 *
 * <pre>
 * hot record, stride = 24 + 8*K bytes (8-byte aligned; K = 1 gives 32 bytes, two per cache line)
 * +--------+--------+--------+--------+--------+--------+--------+--------+
 * |  0: local hash L (u64)                                                | written once, before state
 * +--------+--------+--------+--------+--------+--------+--------+--------+
 * |  8: chain hash C (u64), computed by kvprefix from the parent's C     | written once, before state
 * +--------+--------+--------+--------+--------+--------+--------+--------+
 * | 16: state (i32)                   | 20: parent slot + 1 (i32)         |
 * |     0 = empty, -1 = being written,|     0 = none (position 0)         |
 * |     p + 1 = live at position p    |                                   |
 * +--------+--------+--------+--------+--------+--------+--------+--------+
 * | 24: reach bits, word 0: bit s set = worker slot s holds this block    | atomic or / and-not
 * |     and every ancestor of it                                          |
 * | 32: word 1 ... up to word K-1                                         |
 * +--------+--------+--------+--------+--------+--------+--------+--------+
 *
 * cold record, stride 8 bytes
 * +--------+--------+--------+--------+--------+--------+--------+--------+
 * |  0: first child slot + 1 (i32)    |  4: next sibling slot + 1 (i32)   |
 * +--------+--------+--------+--------+--------+--------+--------+--------+
 * </pre>
 *
 * <p>Each worker also has a name map (engine hash to slot), open addressing with linear probing
 * and backward-shift deletion, touched only by that worker's writer:
 *
 * <pre>
 * name-map record, stride 16 bytes
 * +--------+--------+--------+--------+--------+--------+--------+--------+
 * |  0: engine hash E (u64)                                               |
 * +--------+--------+--------+--------+--------+--------+--------+--------+
 * |  8: table slot + 1 (i32), 0 = empty record | 12: unused                |
 * +--------+--------+--------+--------+--------+--------+--------+--------+
 * </pre>
 *
 * <p>Publication: a writer claims an empty slot by CAS of state 0 to -1, writes L, C, the parent
 * and the tree links, then stores state {@code p + 1} with release semantics. Readers load state
 * with acquire semantics and only then read L and C, which never change while the table lives.
 * Bits change with atomic read-modify-write operations and are read with acquire loads.
 *
 * <p>Thread-safety: constants and stateless accessors; safe from any thread.
 */
public final class TableLayout {
    private TableLayout() {}

    /** The fixed part of a hot record; the reach bits follow it. */
    static final StructLayout HOT_HEADER = MemoryLayout.structLayout(
            ValueLayout.JAVA_LONG.withName("local"),
            ValueLayout.JAVA_LONG.withName("chain"),
            ValueLayout.JAVA_INT.withName("state"),
            ValueLayout.JAVA_INT.withName("parent"));
    /** A cold record. */
    static final StructLayout COLD = MemoryLayout.structLayout(
            ValueLayout.JAVA_INT.withName("firstChild"), ValueLayout.JAVA_INT.withName("nextSibling"));
    /** A name-map record. */
    static final StructLayout NAME = MemoryLayout.structLayout(
            ValueLayout.JAVA_LONG.withName("key"),
            ValueLayout.JAVA_INT.withName("value"),
            MemoryLayout.paddingLayout(4));

    public static final long HOT_LOCAL = offset(HOT_HEADER, "local");
    public static final long HOT_CHAIN = offset(HOT_HEADER, "chain");
    public static final long HOT_STATE = offset(HOT_HEADER, "state");
    public static final long HOT_PARENT = offset(HOT_HEADER, "parent");
    public static final long HOT_BITS = HOT_HEADER.byteSize();

    public static final long COLD_FIRST_CHILD = offset(COLD, "firstChild");
    public static final long COLD_NEXT_SIBLING = offset(COLD, "nextSibling");
    public static final long COLD_STRIDE = COLD.byteSize();

    public static final int STATE_EMPTY = 0;
    public static final int STATE_BUSY = -1;

    public static final long NAME_KEY = offset(NAME, "key");
    public static final long NAME_VALUE = offset(NAME, "value");
    public static final long NAME_STRIDE = NAME.byteSize();

    private static long offset(StructLayout record, String field) {
        return record.byteOffset(MemoryLayout.PathElement.groupElement(field));
    }

    /** Hot-record stride for a bitset of {@code words} 64-bit words. */
    public static long hotStride(int words) {
        return HOT_BITS + 8L * words;
    }

    /** Alignment of both segments (a cache line). */
    public static final long SEGMENT_ALIGNMENT = 64;

    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();

    // ---- hot record accessors (base = slot * stride)

    static long local(MemorySegment hot, long base) {
        return hot.get(ValueLayout.JAVA_LONG, base + HOT_LOCAL);
    }

    static long chain(MemorySegment hot, long base) {
        return hot.get(ValueLayout.JAVA_LONG, base + HOT_CHAIN);
    }

    static int stateAcquire(MemorySegment hot, long base) {
        return (int) INT.getAcquire(hot, base + HOT_STATE);
    }

    static boolean claim(MemorySegment hot, long base) {
        return INT.compareAndSet(hot, base + HOT_STATE, STATE_EMPTY, STATE_BUSY);
    }

    static void publish(MemorySegment hot, long base, int position) {
        INT.setRelease(hot, base + HOT_STATE, position + 1);
    }

    static void writeKey(MemorySegment hot, long base, long local, long chain, int parentSlot) {
        hot.set(ValueLayout.JAVA_LONG, base + HOT_LOCAL, local);
        hot.set(ValueLayout.JAVA_LONG, base + HOT_CHAIN, chain);
        hot.set(ValueLayout.JAVA_INT, base + HOT_PARENT, parentSlot + 1);
    }

    /** The parent slot, or -1 at position 0. */
    static int parent(MemorySegment hot, long base) {
        return hot.get(ValueLayout.JAVA_INT, base + HOT_PARENT) - 1;
    }

    static void setParent(MemorySegment hot, long base, int parentSlot) {
        hot.set(ValueLayout.JAVA_INT, base + HOT_PARENT, parentSlot + 1);
    }

    static long bitsAcquire(MemorySegment hot, long base, int word) {
        return (long) LONG.getAcquire(hot, base + HOT_BITS + 8L * word);
    }

    static void setBit(MemorySegment hot, long base, int slot) {
        LONG.getAndBitwiseOrRelease(hot, base + HOT_BITS + 8L * (slot >>> 6), 1L << slot);
    }

    static void clearBit(MemorySegment hot, long base, int slot) {
        LONG.getAndBitwiseAndRelease(hot, base + HOT_BITS + 8L * (slot >>> 6), ~(1L << slot));
    }

    static boolean hasBit(MemorySegment hot, long base, int slot) {
        return (bitsAcquire(hot, base, slot >>> 6) & (1L << slot)) != 0;
    }

    static void putBitsPlain(MemorySegment hot, long base, int word, long bits) {
        hot.set(ValueLayout.JAVA_LONG, base + HOT_BITS + 8L * word, bits);
    }

    // ---- cold record accessors (base = slot * COLD_STRIDE)

    /** First child slot, or -1. */
    static int firstChild(MemorySegment cold, long base) {
        return (int) INT.getAcquire(cold, base + COLD_FIRST_CHILD) - 1;
    }

    static boolean casFirstChild(MemorySegment cold, long base, int expectSlot, int newSlot) {
        return INT.compareAndSet(cold, base + COLD_FIRST_CHILD, expectSlot + 1, newSlot + 1);
    }

    static void setFirstChildPlain(MemorySegment cold, long base, int slot) {
        cold.set(ValueLayout.JAVA_INT, base + COLD_FIRST_CHILD, slot + 1);
    }

    /** Next sibling slot, or -1. */
    static int nextSibling(MemorySegment cold, long base) {
        return cold.get(ValueLayout.JAVA_INT, base + COLD_NEXT_SIBLING) - 1;
    }

    static void setNextSibling(MemorySegment cold, long base, int slot) {
        cold.set(ValueLayout.JAVA_INT, base + COLD_NEXT_SIBLING, slot + 1);
    }

    /** The home slot of {@code (position, local)} in a table of {@code mask + 1} slots. */
    public static int home(int position, long local, int mask) {
        long h = local ^ (0x9E3779B97F4A7C15L * (position + 1L));
        h ^= h >>> 33;
        h *= 0xFF51AFD7ED558CCDL;
        h ^= h >>> 33;
        return (int) h & mask;
    }
}
