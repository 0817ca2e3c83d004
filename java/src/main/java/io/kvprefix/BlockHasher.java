package io.kvprefix;

import io.kvprefix.internal.hash.HashKernel;
import io.kvprefix.internal.hash.NativeHashKernel;
import io.kvprefix.internal.hash.PortableHashKernel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;
import net.openhft.hashing.LongHashFunction;

/**
 * Dynamo-compatible KV block hashing, bit for bit: the local hash of each full block of
 * {@code blockSize} tokens (a partial tail is dropped; a token is an unsigned 32-bit value, which a
 * Java {@code int} carries bit for bit), salted by a LoRA name or cache namespace, with a block's
 * multimodal hashes, and the chain hash over them (docs/SPEC.md sections 2.1 and 2.2).
 *
 * <pre>{@code
 * BlockHasher h = BlockHasher.of(16);                  // seed 1337, native if available
 * long[] local = h.localHashes(tokens);                // one hash per full 16-token block
 * long[] chain = h.chainHashes(local);                 // position-dependent prefix hashes
 * BlockHasher lora = BlockHasher.builder().blockSize(16).loraName("adapter-a").build();
 * }</pre>
 *
 * <p>The native library (one FFM downcall per call) and pure Java give identical output
 * ({@link Implementation}). Ranges and the block size are checked in Java before any native call: a
 * bad range throws {@link IndexOutOfBoundsException}, a block size below 1 {@link IllegalArgumentException}.
 *
 * <p>Thread-safety: immutable; one instance may be shared by any number of threads.
 */
public final class BlockHasher {
    /** The default local-hash seed (docs/SPEC.md section 2.1). */
    public static final long DEFAULT_SEED = 1337L;
    /** The default chain seed (docs/SPEC.md section 2.2). */
    public static final long DEFAULT_CHAIN_SEED = 1337L;

    private final int blockSize;
    private final long baseSeed;
    private final String loraName;
    private final String cacheNamespace;
    private final HashKernel kernel;
    private final Implementation implementation;

    private BlockHasher(Builder b) {
        this.blockSize = b.blockSize;
        this.baseSeed = b.seed;
        this.loraName = emptyToNull(b.loraName);
        this.cacheNamespace = emptyToNull(b.cacheNamespace);
        this.implementation = b.implementation.resolve();
        // Salts are hashed by the chosen implementation too, so the native path never touches
        // zero-allocation-hashing (and its sun.misc.Unsafe use).
        HashKernel unsalted = newKernel(implementation, b.seed, b.chainSeed);
        long seed = salt(unsalted, b.seed, loraName, cacheNamespace);
        this.kernel = seed == b.seed ? unsalted : newKernel(implementation, seed, b.chainSeed);
    }

    private static HashKernel newKernel(Implementation impl, long seed, long chainSeed) {
        return impl == Implementation.NATIVE
                ? new NativeHashKernel(seed, chainSeed)
                : new PortableHashKernel(seed, chainSeed);
    }

    private static long salt(HashKernel k, long baseSeed, String loraName, String cacheNamespace) {
        long seed = baseSeed;
        if (loraName != null && !loraName.isEmpty()) {
            byte[] b = loraName.getBytes(StandardCharsets.UTF_8);
            seed += k.xxh3(b, 0, b.length, 0L);
        }
        if (cacheNamespace != null && !cacheNamespace.isEmpty()) {
            byte[] b = cacheNamespace.getBytes(StandardCharsets.UTF_8);
            seed += k.xxh3(b, 0, b.length, 1L);
        }
        return seed;
    }

    /** A hasher with the default seeds, no salt, and the default {@link Implementation}. */
    public static BlockHasher of(int blockSize) {
        return builder().blockSize(blockSize).build();
    }

    /** A builder; every setting has the default of docs/SPEC.md section 2 except the block size, which must be set. */
    public static Builder builder() {
        return new Builder();
    }

    /** Tokens per block. */
    public int blockSize() {
        return blockSize;
    }

    /** The local-hash seed in use: the base seed plus the LoRA / namespace salt. */
    public long seed() {
        return kernel.seed();
    }

    /** The base seed, before any salt (1337 unless set). */
    public long baseSeed() {
        return baseSeed;
    }

    /** The chain seed (1337 unless set). */
    public long chainSeed() {
        return kernel.chainSeed();
    }

    /** The LoRA adapter name that salts the seed, or null. */
    public String loraName() {
        return loraName;
    }

    /** The cache namespace that salts the seed, or null. */
    public String cacheNamespace() {
        return cacheNamespace;
    }

    /** The implementation in use: {@link Implementation#NATIVE} or {@link Implementation#PORTABLE}. */
    public Implementation implementation() {
        return implementation;
    }

    /** Number of full blocks in {@code tokenCount} tokens. */
    public int blockCount(int tokenCount) {
        if (tokenCount < 0) {
            throw new IllegalArgumentException("negative token count: " + tokenCount);
        }
        return tokenCount / blockSize;
    }

    /** Local hashes of every full block of {@code tokens}. */
    public long[] localHashes(int[] tokens) {
        return localHashes(tokens, 0, tokens.length);
    }

    /** Local hashes of every full block of {@code tokens[offset .. offset+length)}. */
    public long[] localHashes(int[] tokens, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, tokens.length);
        long[] out = new long[length / blockSize];
        kernel.localHashes(tokens, offset, out.length, blockSize, out, 0);
        return out;
    }

    /**
     * Writes the local hashes of every full block of {@code tokens[offset .. offset+length)} into
     * {@code out[outOffset ..]} and returns how many were written.
     */
    public int localHashes(int[] tokens, int offset, int length, long[] out, int outOffset) {
        Objects.checkFromIndexSize(offset, length, tokens.length);
        int blocks = length / blockSize;
        Objects.checkFromIndexSize(outOffset, blocks, out.length);
        kernel.localHashes(tokens, offset, blocks, blockSize, out, outOffset);
        return blocks;
    }

    /**
     * Local hashes with multimodal extras: {@code extras[b]} holds the multimodal content hashes of
     * block {@code b} (any order; null or empty for none). {@code extras.length} must equal the number
     * of full blocks.
     */
    public long[] localHashes(int[] tokens, int offset, int length, long[][] extras) {
        Objects.checkFromIndexSize(offset, length, tokens.length);
        long[] out = new long[length / blockSize];
        hashWithExtras(tokens, offset, out.length, extras, out, null);
        return out;
    }

    /**
     * One multimodal item of a request or a stored event: the token offsets {@code [start, end)} its
     * placeholder tokens take and its content hash {@code mm_hash} (docs/SPEC.md section 2.1).
     *
     * <p>Thread-safety: immutable.
     *
     * @param start the first token offset of the item, at least 0
     * @param end one past its last token offset, above {@code start}
     * @param mmHash the item's content hash (unsigned 64-bit)
     */
    public record MmSpan(int start, int end, long mmHash) {
        public MmSpan {
            if (start < 0 || end <= start) {
                throw new IllegalArgumentException(
                        "multimodal span [" + start + ", " + end + "): needs 0 <= start < end");
            }
        }
    }

    /**
     * The multimodal hashes of each full block of a request of {@code tokenCount} tokens, from its
     * items' token spans, as Dynamo maps them: every block whose tokens overlap a span
     * ({@code start / blockSize} to {@code (end - 1) / blockSize}, clamped to the full blocks) carries
     * that span's hash. Returns null when no full block carries one (a text-only request), else one
     * entry per full block (null for a block without), ready for {@link #localHashes(int[], int, int,
     * long[][])} and {@link KvEvent.StoredTokens}.
     */
    public long[][] multimodalExtras(int tokenCount, java.util.List<MmSpan> spans) {
        return multimodalExtras(blockSize, tokenCount, spans);
    }

    /** As {@link #multimodalExtras(int, java.util.List)} for blocks of {@code blockSize} tokens. */
    public static long[][] multimodalExtras(int blockSize, int tokenCount, java.util.List<MmSpan> spans) {
        if (blockSize < 1 || tokenCount < 0) {
            throw new IllegalArgumentException("block size " + blockSize + ", token count " + tokenCount);
        }
        int blocks = tokenCount / blockSize;
        if (spans == null || spans.isEmpty() || blocks == 0) {
            return null;
        }
        int[] counts = new int[blocks];
        boolean any = false;
        for (MmSpan sp : spans) {
            int first = sp.start() / blockSize;
            int last = Math.min(blocks - 1, (sp.end() - 1) / blockSize);
            for (int b = first; b <= last; b++) {
                counts[b]++;
                any = true;
            }
        }
        if (!any) {
            return null;
        }
        long[][] out = new long[blocks][];
        for (int b = 0; b < blocks; b++) {
            out[b] = counts[b] == 0 ? null : new long[counts[b]];
            counts[b] = 0;
        }
        for (MmSpan sp : spans) {
            int first = sp.start() / blockSize;
            int last = Math.min(blocks - 1, (sp.end() - 1) / blockSize);
            for (int b = first; b <= last; b++) {
                out[b][counts[b]++] = sp.mmHash();
            }
        }
        return out;
    }

    /** Chain hashes of {@code localHashes}, starting a new sequence. */
    public long[] chainHashes(long[] localHashes) {
        long[] out = new long[localHashes.length];
        kernel.chain(localHashes, 0, localHashes.length, false, 0L, out, 0);
        return out;
    }

    /**
     * Chain hashes of {@code localHashes[offset .. offset+length)} into {@code out[outOffset ..]}, the
     * first continuing the block whose chain hash is {@code parent} when {@code hasParent} is true.
     */
    public void chainHashes(
            long[] localHashes, int offset, int length, boolean hasParent, long parent, long[] out, int outOffset) {
        Objects.checkFromIndexSize(offset, length, localHashes.length);
        Objects.checkFromIndexSize(outOffset, length, out.length);
        kernel.chain(localHashes, offset, length, hasParent, parent, out, outOffset);
    }

    /** One chain step: the chain hash of a block with local hash {@code local} after a block with chain hash {@code parent}. */
    public long chainHash(long parent, long local) {
        long[] out = new long[1];
        kernel.chain(new long[] {local}, 0, 1, true, parent, out, 0);
        return out[0];
    }

    /**
     * Local and chain hashes of every full block of {@code tokens[offset .. offset+length)} in one call
     * (one native downcall on the native path), into {@code localOut[0..]} and {@code chainOut[0..]};
     * returns the number of blocks.
     */
    public int hashBlocks(int[] tokens, int offset, int length, long[] localOut, long[] chainOut) {
        Objects.checkFromIndexSize(offset, length, tokens.length);
        int blocks = length / blockSize;
        Objects.checkFromIndexSize(0, blocks, localOut.length);
        Objects.checkFromIndexSize(0, blocks, chainOut.length);
        kernel.localAndChain(tokens, offset, blocks, blockSize, localOut, chainOut);
        return blocks;
    }

    /** As {@link #hashBlocks(int[], int, int, long[], long[])}, with multimodal extras per block. */
    public int hashBlocks(int[] tokens, int offset, int length, long[][] extras, long[] localOut, long[] chainOut) {
        Objects.checkFromIndexSize(offset, length, tokens.length);
        int blocks = length / blockSize;
        Objects.checkFromIndexSize(0, blocks, localOut.length);
        Objects.checkFromIndexSize(0, blocks, chainOut.length);
        hashWithExtras(tokens, offset, blocks, extras, localOut, chainOut);
        return blocks;
    }

    private void hashWithExtras(
            int[] tokens, int offset, int blocks, long[][] extras, long[] localOut, long[] chainOut) {
        Objects.requireNonNull(extras, "extras");
        if (extras.length != blocks) {
            throw new IllegalArgumentException(
                    "extras has " + extras.length + " entries, but there are " + blocks + " full blocks");
        }
        int[] offsets = new int[blocks + 1];
        long total = 0;
        for (int b = 0; b < blocks; b++) {
            total += extras[b] == null ? 0 : extras[b].length;
            if (total > Integer.MAX_VALUE - 8) {
                throw new IllegalArgumentException("too many multimodal hashes");
            }
            offsets[b + 1] = (int) total;
        }
        long[] flat = new long[(int) total];
        for (int b = 0; b < blocks; b++) {
            if (extras[b] != null && extras[b].length > 0) {
                System.arraycopy(extras[b], 0, flat, offsets[b], extras[b].length);
                sortUnsigned(flat, offsets[b], offsets[b + 1]);
            }
        }
        kernel.localHashesWithExtras(tokens, offset, blocks, blockSize, offsets, flat, localOut, chainOut);
    }

    /** Sorts {@code a[from..to)} ascending as unsigned 64-bit values (the order of docs/SPEC.md section 2.1). */
    private static void sortUnsigned(long[] a, int from, int to) {
        Arrays.sort(a, from, to);
        // After a signed sort, negative values (>= 2^63 unsigned) come first; rotate them to the end.
        int firstNonNegative = from;
        while (firstNonNegative < to && a[firstNonNegative] < 0) {
            firstNonNegative++;
        }
        if (firstNonNegative == from || firstNonNegative == to) {
            return;
        }
        long[] neg = Arrays.copyOfRange(a, from, firstNonNegative);
        System.arraycopy(a, firstNonNegative, a, from, to - firstNonNegative);
        System.arraycopy(neg, 0, a, to - neg.length, neg.length);
    }

    /**
     * The salted local-hash seed: {@code baseSeed}, plus {@code XXH3_64(utf8(loraName), 0)} if the
     * LoRA name is non-empty, plus {@code XXH3_64(utf8(cacheNamespace), 1)} if the namespace is
     * non-empty, wrapping modulo 2^64. Null and empty names count as absent.
     */
    public static long saltedSeed(long baseSeed, String loraName, String cacheNamespace) {
        return salt(new PortableHashKernel(baseSeed, DEFAULT_CHAIN_SEED), baseSeed, loraName, cacheNamespace);
    }

    /** XXH3-64 of {@code data} with {@code seed} (the primitive under every hash here). */
    public static long xxh3(byte[] data, long seed) {
        return LongHashFunction.xx3(seed).hashBytes(data);
    }

    private static String emptyToNull(String s) {
        return s == null || s.isEmpty() ? null : s;
    }

    @Override
    public String toString() {
        return "BlockHasher[blockSize=" + blockSize + ", seed=" + Long.toUnsignedString(seed()) + ", chainSeed="
                + Long.toUnsignedString(chainSeed()) + ", " + implementation + "]";
    }

    /**
     * Builds a {@link BlockHasher}.
     *
     * <p>Thread-safety: not thread-safe; use one builder per thread.
     */
    public static final class Builder {
        private int blockSize = -1;
        private long seed = DEFAULT_SEED;
        private long chainSeed = DEFAULT_CHAIN_SEED;
        private String loraName;
        private String cacheNamespace;
        private Implementation implementation = Implementation.fromEnvironment();

        private Builder() {}

        /** Tokens per block, at least 1. Required. */
        public Builder blockSize(int blockSize) {
            if (blockSize < 1) {
                throw new IllegalArgumentException("block_size must be >= 1, got " + blockSize);
            }
            this.blockSize = blockSize;
            return this;
        }

        /** The base local-hash seed (default 1337); salts are added to it. */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        /** The chain seed (default 1337; one Dynamo branch used 0). */
        public Builder chainSeed(long chainSeed) {
            this.chainSeed = chainSeed;
            return this;
        }

        /** LoRA adapter name salting the local seed; null or empty for none. */
        public Builder loraName(String loraName) {
            this.loraName = loraName;
            return this;
        }

        /** Cache namespace salting the local seed; null or empty for none. */
        public Builder cacheNamespace(String cacheNamespace) {
            this.cacheNamespace = cacheNamespace;
            return this;
        }

        /** Native, portable or auto (default: {@link Implementation#fromEnvironment()}). */
        public Builder implementation(Implementation implementation) {
            this.implementation = Objects.requireNonNull(implementation, "implementation");
            return this;
        }

        /**
         * Builds the hasher.
         *
         * @throws IllegalArgumentException if the block size was not set
         * @throws IllegalStateException if {@link Implementation#NATIVE} was asked for and the library cannot load
         */
        public BlockHasher build() {
            if (blockSize < 1) {
                throw new IllegalArgumentException("block_size must be set (>= 1)");
            }
            return new BlockHasher(this);
        }
    }
}
