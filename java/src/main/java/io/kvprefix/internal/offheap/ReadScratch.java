package io.kvprefix.internal.offheap;

import java.lang.foreign.MemorySegment;

/**
 * One reading thread's buffers (grown as needed, never shrunk), with the segment views the native
 * kernel writes through. A match kernel leaves its answer in {@link #outSlots} / {@link #outDepths};
 * {@link #indexOf} (one int per worker slot, zero between matches) tells where a slot's answer is.
 *
 * <p>Locks: none.
 *
 * <p>Thread-safety: not thread-safe; one instance per reading thread.
 */
final class ReadScratch {
    long[] locals = new long[64];
    int[] outSlots = new int[64];
    int[] outDepths = new int[64];
    int[] indexOf = new int[64];
    /** Per GPU slot, where its worker's entry is in the result (+1), while tiered answers are merged; zero between matches. */
    int[] resultAt = new int[64];

    final int[] hashed = new int[1];
    MemorySegment localsSeg = MemorySegment.ofArray(locals);
    MemorySegment slotsSeg = MemorySegment.ofArray(outSlots);
    MemorySegment depthsSeg = MemorySegment.ofArray(outDepths);
    MemorySegment indexSeg = MemorySegment.ofArray(indexOf);
    final MemorySegment hashedSeg = MemorySegment.ofArray(hashed);

    /** Room for a request of {@code blocks} blocks and answers over {@code slots} worker slots. */
    void ensure(int blocks, int slots) {
        if (locals.length < blocks) {
            locals = new long[Math.max(blocks, locals.length * 2)];
            localsSeg = MemorySegment.ofArray(locals);
        }
        if (outSlots.length < slots) {
            outSlots = new int[slots];
            outDepths = new int[slots];
            indexOf = new int[slots];
            resultAt = new int[slots];
            slotsSeg = MemorySegment.ofArray(outSlots);
            depthsSeg = MemorySegment.ofArray(outDepths);
            indexSeg = MemorySegment.ofArray(indexOf);
        }
    }
}
