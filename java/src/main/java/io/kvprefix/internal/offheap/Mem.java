package io.kvprefix.internal.offheap;

import io.kvprefix.internal.ffi.Libc;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * Loads and stores at raw off-heap addresses, plain and with acquire / release / compare-and-set
 * semantics, through one global segment. Every structure of the off-heap index lives at addresses
 * its {@link MemoryPool} handed out; the C kernel reads the same addresses.
 *
 * <p>Locks: none.
 *
 * <p>Thread-safety: stateless; the memory-ordering contract of each structure is its own (see
 * {@link ChainLayout}).
 */
final class Mem {
    private Mem() {}

    private static final MemorySegment ALL = Libc.everything();
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    static byte getByte(long a) {
        return ALL.get(ValueLayout.JAVA_BYTE, a);
    }

    static void setByte(long a, byte v) {
        ALL.set(ValueLayout.JAVA_BYTE, a, v);
    }

    static int getInt(long a) {
        return ALL.get(ValueLayout.JAVA_INT, a);
    }

    static void setInt(long a, int v) {
        ALL.set(ValueLayout.JAVA_INT, a, v);
    }

    static int getIntAcquire(long a) {
        return (int) INT.getAcquire(ALL, a);
    }

    static void setIntRelease(long a, int v) {
        INT.setRelease(ALL, a, v);
    }

    static boolean casInt(long a, int expect, int v) {
        return INT.compareAndSet(ALL, a, expect, v);
    }

    static long getLong(long a) {
        return ALL.get(ValueLayout.JAVA_LONG, a);
    }

    static void setLong(long a, long v) {
        ALL.set(ValueLayout.JAVA_LONG, a, v);
    }

    static long getLongAcquire(long a) {
        return (long) LONG.getAcquire(ALL, a);
    }

    static void setLongRelease(long a, long v) {
        LONG.setRelease(ALL, a, v);
    }

    /** Zeroes {@code bytes} at {@code a}. */
    static void zero(long a, long bytes) {
        ALL.asSlice(a, bytes).fill((byte) 0);
    }

    /** The {@code bytes} bytes at {@code a} as a segment (for bulk copies to and from files). */
    static MemorySegment segment(long a, long bytes) {
        return ALL.asSlice(a, bytes);
    }

    /** Copies {@code bytes} from {@code src} at {@code offset} to the address {@code to}. */
    static void copyFrom(MemorySegment src, long offset, long to, long bytes) {
        MemorySegment.copy(src, offset, ALL, to, bytes);
    }

    /** Copies {@code bytes} from {@code from} to {@code to} (non-overlapping). */
    static void copy(long from, long to, long bytes) {
        MemorySegment.copy(ALL, from, ALL, to, bytes);
    }
}
