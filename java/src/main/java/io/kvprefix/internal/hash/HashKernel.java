package io.kvprefix.internal.hash;

/**
 * Block hashing with its seeds bound (docs/SPEC.md section 2): the portable implementation
 * ({@link PortableHashKernel}, zero-allocation-hashing) and the native one ({@link NativeHashKernel},
 * one FFM downcall per call) give identical output.
 *
 * <p>Callers ({@code BlockHasher}) have already checked every range and the block size; kernels do
 * not check again beyond what keeps the JVM safe.
 *
 * <p>Thread-safety: implementations are immutable and may be shared by any number of threads.
 */
public interface HashKernel {
    /** The local-hash seed (base seed plus salt). */
    long seed();

    /** The chain seed. */
    long chainSeed();

    /** Local hashes of {@code nBlocks} blocks starting at {@code tokens[off]}, into {@code out[outOff..]}. */
    void localHashes(int[] tokens, int off, int nBlocks, int blockSize, long[] out, int outOff);

    /**
     * Local hashes and the chain (a new sequence) of {@code nBlocks} blocks in one call, into
     * {@code localOut[0..nBlocks)} and {@code chainOut[0..nBlocks)}.
     */
    void localAndChain(int[] tokens, int off, int nBlocks, int blockSize, long[] localOut, long[] chainOut);

    /**
     * Local hashes with multimodal extras: block {@code b} is followed by
     * {@code mmHashes[mmOffsets[b] .. mmOffsets[b+1])}, already sorted ascending. {@code chainOut}
     * may be null.
     */
    void localHashesWithExtras(
            int[] tokens,
            int off,
            int nBlocks,
            int blockSize,
            int[] mmOffsets,
            long[] mmHashes,
            long[] localOut,
            long[] chainOut);

    /**
     * Chain hashes of {@code local[off .. off+n)} into {@code out[outOff..]}; the first block continues
     * {@code parent} if {@code hasParent}.
     */
    void chain(long[] local, int off, int n, boolean hasParent, long parent, long[] out, int outOff);

    /** XXH3-64 of {@code data[off .. off+len)} with {@code seed} (any seed, not the bound ones). */
    long xxh3(byte[] data, int off, int len, long seed);
}
