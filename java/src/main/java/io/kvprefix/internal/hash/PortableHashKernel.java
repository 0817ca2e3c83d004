package io.kvprefix.internal.hash;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import net.openhft.hashing.LongHashFunction;

/**
 * Pure-Java block hashing with zero-allocation-hashing's XXH3 ({@link LongHashFunction#xx3(long)}).
 *
 * <p>The two hash functions (local seed, chain seed) are created once, when the kernel is built,
 * never per block. zero-allocation-hashing reads {@code int[]} and {@code long[]} in the platform's
 * byte order; kvprefix supports little-endian platforms only, where that order is the one docs/SPEC.md section 2 hashes.
 *
 * <p>Thread-safety: immutable; shareable by any number of threads.
 */
public final class PortableHashKernel implements HashKernel {
    static {
        if (ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
            throw new ExceptionInInitializerError("kvprefix supports little-endian platforms only");
        }
    }

    private final long seed;
    private final long chainSeed;
    private final LongHashFunction local;
    private final LongHashFunction chain;

    public PortableHashKernel(long seed, long chainSeed) {
        this.seed = seed;
        this.chainSeed = chainSeed;
        this.local = LongHashFunction.xx3(seed);
        this.chain = LongHashFunction.xx3(chainSeed);
    }

    @Override
    public long seed() {
        return seed;
    }

    @Override
    public long chainSeed() {
        return chainSeed;
    }

    /** The chain function (seeded with the chain seed), for callers that chain one step at a time. */
    public LongHashFunction chainFunction() {
        return chain;
    }

    /** The local-hash function (seeded with the local seed). */
    public LongHashFunction localFunction() {
        return local;
    }

    /** One chain step with a caller-owned two-element scratch array (no allocation). */
    public static long chainStep(LongHashFunction chain, long parent, long localHash, long[] scratch) {
        scratch[0] = parent;
        scratch[1] = localHash;
        return chain.hashLongs(scratch, 0, 2);
    }

    @Override
    public void localHashes(int[] tokens, int off, int nBlocks, int blockSize, long[] out, int outOff) {
        for (int b = 0; b < nBlocks; b++) {
            out[outOff + b] = local.hashInts(tokens, off + b * blockSize, blockSize);
        }
    }

    @Override
    public void localAndChain(int[] tokens, int off, int nBlocks, int blockSize, long[] localOut, long[] chainOut) {
        long[] scratch = new long[2];
        long c = 0;
        for (int b = 0; b < nBlocks; b++) {
            long l = local.hashInts(tokens, off + b * blockSize, blockSize);
            localOut[b] = l;
            c = b == 0 ? l : chainStep(chain, c, l, scratch);
            chainOut[b] = c;
        }
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
        long[] scratch = new long[2];
        long c = 0;
        for (int b = 0; b < nBlocks; b++) {
            int lo = mmOffsets[b], hi = mmOffsets[b + 1];
            long l;
            if (lo == hi) {
                l = local.hashInts(tokens, off + b * blockSize, blockSize);
            } else {
                ByteBuffer buf =
                        ByteBuffer.allocate(blockSize * 4 + (hi - lo) * 8).order(ByteOrder.LITTLE_ENDIAN);
                for (int i = 0; i < blockSize; i++) {
                    buf.putInt(tokens[off + b * blockSize + i]);
                }
                for (int i = lo; i < hi; i++) {
                    buf.putLong(mmHashes[i]);
                }
                l = local.hashBytes(buf.array());
            }
            localOut[b] = l;
            if (chainOut != null) {
                c = b == 0 ? l : chainStep(chain, c, l, scratch);
                chainOut[b] = c;
            }
        }
    }

    @Override
    public void chain(long[] localHashes, int off, int n, boolean hasParent, long parent, long[] out, int outOff) {
        long[] scratch = new long[2];
        long c = parent;
        for (int i = 0; i < n; i++) {
            long l = localHashes[off + i];
            c = (i == 0 && !hasParent) ? l : chainStep(chain, c, l, scratch);
            out[outOff + i] = c;
        }
    }

    @Override
    public long xxh3(byte[] data, int off, int len, long anySeed) {
        return LongHashFunction.xx3(anySeed).hashBytes(data, off, len);
    }
}
