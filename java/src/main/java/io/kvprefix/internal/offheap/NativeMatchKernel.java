package io.kvprefix.internal.offheap;

import io.kvprefix.BlockHasher;
import io.kvprefix.internal.ffi.KvpBindings;
import java.lang.foreign.MemorySegment;

/**
 * The match kernel in libkvprefix: the same walk as {@link JavaMatchKernel}, one critical downcall
 * per request, hashing a token request's blocks only as far as the walk needs them
 * ({@code kvp_match_tokens}, {@code kvp_match_hashes}), or hashing every block into the caller's
 * array after the walk ({@code kvp_match_tokens_all}).
 *
 * <p>Locks: takes none; its caller is inside the reader gate.
 *
 * <p>Thread-safety: immutable; shared by every reading thread.
 */
final class NativeMatchKernel implements MatchKernel {

    @Override
    public boolean isNative() {
        return true;
    }

    @Override
    public int matchHashes(ChildTable children, RunArena.RunTable runs, long[] q, int off, int len, ReadScratch s) {
        // At offset 0 the array overload lets the JIT drop the heap segment's allocation.
        return off == 0
                ? KvpBindings.matchHashes(
                        children.segment,
                        children.mask,
                        runs.segment(),
                        runs.capacity(),
                        q,
                        len,
                        s.indexSeg,
                        s.slotsSeg,
                        s.depthsSeg)
                : KvpBindings.matchHashes(
                        children.segment,
                        children.mask,
                        runs.segment(),
                        runs.capacity(),
                        MemorySegment.ofArray(q).asSlice(off * 8L),
                        len,
                        s.indexSeg,
                        s.slotsSeg,
                        s.depthsSeg);
    }

    @Override
    public int matchTokens(
            ChildTable children, RunArena.RunTable runs, int[] tokens, int off, int len, BlockHasher h, ReadScratch s) {
        return off == 0
                ? KvpBindings.matchTokens(
                        children.segment,
                        children.mask,
                        runs.segment(),
                        runs.capacity(),
                        tokens,
                        len,
                        h.blockSize(),
                        h.seed(),
                        s.localsSeg,
                        s.hashedSeg,
                        s.indexSeg,
                        s.slotsSeg,
                        s.depthsSeg)
                : KvpBindings.matchTokens(
                        children.segment,
                        children.mask,
                        runs.segment(),
                        runs.capacity(),
                        MemorySegment.ofArray(tokens).asSlice(off * 4L),
                        len,
                        h.blockSize(),
                        h.seed(),
                        s.localsSeg,
                        s.hashedSeg,
                        s.indexSeg,
                        s.slotsSeg,
                        s.depthsSeg);
    }

    @Override
    public int matchTokensAll(
            ChildTable children,
            RunArena.RunTable runs,
            int[] tokens,
            int off,
            int len,
            BlockHasher h,
            long[] out,
            ReadScratch s) {
        return KvpBindings.matchTokensAll(
                children.segment,
                children.mask,
                runs.segment(),
                runs.capacity(),
                tokens,
                off,
                len,
                h.blockSize(),
                h.seed(),
                out,
                s.indexSeg,
                s.slotsSeg,
                s.depthsSeg);
    }
}
