package io.kvprefix.internal.offheap;

import io.kvprefix.BlockHasher;
import io.kvprefix.Implementation;
import io.kvprefix.IndexConfig;

/**
 * The walk down the chain index for one request (docs/SPEC.md section 4), in Java
 * ({@link JavaMatchKernel}) or in libkvprefix ({@link NativeMatchKernel}); one is chosen when the
 * index is built and both give identical answers. A kernel leaves, for every worker slot with depth
 * above 0, the slot in {@code s.outSlots[i]} and its depth in {@code s.outDepths[i]}, returns how
 * many it left, and leaves {@code s.indexOf} all zero.
 *
 * <p>The caller has registered with the reader gate, checked the ranges, and grown {@code s} for
 * the request and the index's worker slots.
 *
 * <p>Locks: take none; the caller is inside the reader gate.
 *
 * <p>Thread-safety: implementations are immutable and shared by every reading thread.
 */
interface MatchKernel {

    /** Matches local hashes {@code q[off .. off+len)}, {@code len >= 1}. */
    int matchHashes(ChildTable children, RunArena.RunTable runs, long[] q, int off, int len, ReadScratch s);

    /** Hashes {@code tokens[off .. off+len)} with {@code h} (at least one full block) and matches them. */
    int matchTokens(
            ChildTable children, RunArena.RunTable runs, int[] tokens, int off, int len, BlockHasher h, ReadScratch s);

    /**
     * As {@link #matchTokens}, and every full block's local hash is left in {@code out[0 .. blocks)}
     * (each block hashed once: the native kernel hashes the blocks its walk did not need after it).
     */
    int matchTokensAll(
            ChildTable children,
            RunArena.RunTable runs,
            int[] tokens,
            int off,
            int len,
            BlockHasher h,
            long[] out,
            ReadScratch s);

    /** True for the native kernel. */
    boolean isNative();

    /** The kernel {@code config} asks for. */
    static MatchKernel of(IndexConfig config) {
        return config.implementation().resolve() == Implementation.NATIVE
                ? new NativeMatchKernel()
                : new JavaMatchKernel();
    }
}
