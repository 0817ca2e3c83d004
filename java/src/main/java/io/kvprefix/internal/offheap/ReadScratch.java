package io.kvprefix.internal.offheap;

import java.lang.foreign.MemorySegment;

/**
 * One reading thread's buffers (grown as needed, never shrunk), with the segment views the native
 * kernel writes through. A match kernel leaves its answer in {@link #outSlots} / {@link #outDepths}.
 *
 * <p>Thread-safety: not thread-safe; one instance per reading thread.
 */
final class ReadScratch {
    long[] chain = new long[64];
    long[] active = new long[1];
    long[] locals = new long[64];
    final long[] pair = new long[2];
    int computedAfterProbe;
    long sink;
    int[] outSlots = new int[64];
    int[] outDepths = new int[64];
    final int[] hashed = new int[1];
    MemorySegment chainSeg = MemorySegment.ofArray(chain);
    MemorySegment localsSeg = MemorySegment.ofArray(locals);
    MemorySegment slotsSeg = MemorySegment.ofArray(outSlots);
    MemorySegment depthsSeg = MemorySegment.ofArray(outDepths);
    final MemorySegment hashedSeg = MemorySegment.ofArray(hashed);

    /** Room for a request of {@code blocks} blocks and results over {@code words} bitset words. */
    void ensure(int blocks, int words) {
        if (chain.length < blocks) {
            chain = new long[Math.max(blocks, chain.length * 2)];
            chainSeg = MemorySegment.ofArray(chain);
        }
        if (locals.length < blocks) {
            locals = new long[Math.max(blocks, locals.length * 2)];
            localsSeg = MemorySegment.ofArray(locals);
        }
        if (outSlots.length < words * 64) {
            outSlots = new int[words * 64];
            outDepths = new int[words * 64];
            slotsSeg = MemorySegment.ofArray(outSlots);
            depthsSeg = MemorySegment.ofArray(outDepths);
        }
        if (active.length < words) {
            active = new long[words];
        }
    }
}
