package io.kvprefix.internal.hash;

import io.kvprefix.internal.ffi.KvpBindings;
import java.lang.foreign.MemorySegment;

/**
 * Block hashing in libkvprefix: one critical FFM downcall per call, reading the caller's
 * {@code int[]} and writing its {@code long[]} in place (no copies).
 *
 * <p>Requires the native library to be loaded ({@link io.kvprefix.internal.ffi.NativeLibrary#isAvailable()}).
 *
 * <p>Thread-safety: immutable; shareable by any number of threads.
 */
public final class NativeHashKernel implements HashKernel {
    private final long seed;
    private final long chainSeed;

    public NativeHashKernel(long seed, long chainSeed) {
        this.seed = seed;
        this.chainSeed = chainSeed;
    }

    @Override
    public long seed() {
        return seed;
    }

    @Override
    public long chainSeed() {
        return chainSeed;
    }

    private static MemorySegment ints(int[] a, int off, long n) {
        return MemorySegment.ofArray(a).asSlice(off * 4L, n * 4L);
    }

    private static MemorySegment longs(long[] a, int off, long n) {
        return MemorySegment.ofArray(a).asSlice(off * 8L, n * 8L);
    }

    @Override
    public void localHashes(int[] tokens, int off, int nBlocks, int blockSize, long[] out, int outOff) {
        if (nBlocks == 0) {
            return;
        }
        long n = (long) nBlocks * blockSize;
        KvpBindings.hashBlocks(
                ints(tokens, off, n), n, blockSize, seed, chainSeed, longs(out, outOff, nBlocks), MemorySegment.NULL);
    }

    @Override
    public void localAndChain(int[] tokens, int off, int nBlocks, int blockSize, long[] localOut, long[] chainOut) {
        if (nBlocks == 0) {
            return;
        }
        long n = (long) nBlocks * blockSize;
        KvpBindings.hashBlocks(
                ints(tokens, off, n),
                n,
                blockSize,
                seed,
                chainSeed,
                longs(localOut, 0, nBlocks),
                longs(chainOut, 0, nBlocks));
    }

    @Override
    public void localHashesWithExtras(
            int[] tokens,
            int off,
            int nBlocks,
            int blockSize,
            int[] mmOffsets,
            long[] mmHashes,
            long[] localOut,
            long[] chainOut) {
        if (nBlocks == 0) {
            return;
        }
        long n = (long) nBlocks * blockSize;
        MemorySegment mm = mmHashes.length == 0 ? MemorySegment.NULL : MemorySegment.ofArray(mmHashes);
        KvpBindings.hashBlocksMm(
                ints(tokens, off, n),
                n,
                blockSize,
                seed,
                ints(mmOffsets, 0, nBlocks + 1L),
                mm,
                chainSeed,
                longs(localOut, 0, nBlocks),
                chainOut == null ? MemorySegment.NULL : longs(chainOut, 0, nBlocks));
    }

    @Override
    public void chain(long[] local, int off, int n, boolean hasParent, long parent, long[] out, int outOff) {
        if (n == 0) {
            return;
        }
        KvpBindings.chain(longs(local, off, n), n, chainSeed, hasParent, parent, longs(out, outOff, n));
    }

    @Override
    public long xxh3(byte[] data, int off, int len, long anySeed) {
        MemorySegment s =
                len == 0 ? MemorySegment.NULL : MemorySegment.ofArray(data).asSlice(off, len);
        return KvpBindings.xxh3(s, len, anySeed);
    }
}
