package io.kvprefix.internal.offheap;

import io.kvprefix.BlockHasher;
import io.kvprefix.internal.ffi.KvpBindings;
import java.lang.foreign.MemorySegment;

/**
 * The match kernel in libkvprefix: one critical downcall per request, hashing a token request's
 * blocks only as far as the search needs them ({@code kvp_match_tokens}, {@code kvp_match_hashes}).
 *
 * <p>Thread-safety: immutable; shared by every reading thread.
 */
final class NativeMatchKernel implements MatchKernel {
    private final int jump;
    private final long chainSeed;

    NativeMatchKernel(int jump, long chainSeed) {
        this.jump = jump;
        this.chainSeed = chainSeed;
    }

    @Override
    public boolean isNative() {
        return true;
    }

    @Override
    public int matchHashes(PositionalTable t, long[] q, int off, int len, ReadScratch s) {
        // At offset 0 the array overload lets the JIT drop the heap segment's allocation.
        return off == 0
                ? KvpBindings.matchHashes(
                        t.hotView, t.mask, t.words, jump, chainSeed, q, len, s.chainSeg, s.slotsSeg, s.depthsSeg)
                : KvpBindings.matchHashes(
                        t.hotView,
                        t.mask,
                        t.words,
                        jump,
                        chainSeed,
                        MemorySegment.ofArray(q).asSlice(off * 8L),
                        len,
                        s.chainSeg,
                        s.slotsSeg,
                        s.depthsSeg);
    }

    @Override
    public int matchTokens(PositionalTable t, int[] tokens, int off, int len, BlockHasher h, ReadScratch s) {
        return off == 0
                ? KvpBindings.matchTokens(
                        t.hotView,
                        t.mask,
                        t.words,
                        jump,
                        tokens,
                        len,
                        h.blockSize(),
                        h.seed(),
                        chainSeed,
                        s.localsSeg,
                        s.chainSeg,
                        s.hashedSeg,
                        s.slotsSeg,
                        s.depthsSeg)
                : KvpBindings.matchTokens(
                        t.hotView,
                        t.mask,
                        t.words,
                        jump,
                        MemorySegment.ofArray(tokens).asSlice(off * 4L),
                        len,
                        h.blockSize(),
                        h.seed(),
                        chainSeed,
                        s.localsSeg,
                        s.chainSeg,
                        s.hashedSeg,
                        s.slotsSeg,
                        s.depthsSeg);
    }
}
