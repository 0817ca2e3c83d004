package io.kvprefix;

import java.util.Objects;

/**
 * Settings of a {@link PrefixIndex}. Every setting has a default; {@link #defaults()} is a complete
 * configuration.
 *
 * <ul>
 *   <li>{@code blockSize} (16): block size for {@link PrefixIndex#match(int[])}, the token form of a match.
 *       Token-form events carry their own block size.
 *   <li>{@code seed} (1337) and {@code chainSeed} (1337): hashing seeds (docs/SPEC.md section 2); LoRA and
 *       namespace salts are added per event or per request.
 *   <li>{@code maxWorkers} (1,024): worker slots; a store for a new worker when every slot is taken answers
 *       {@link EventStatus#CAPACITY_EXCEEDED}. A slot is freed by {@link KvEvent.RemoveWorker}.
 *   <li>{@code memoryBudgetBytes} (unlimited): the most memory the index may hold; a store that would need
 *       more answers {@link EventStatus#CAPACITY_EXCEEDED}.
 *   <li>{@code jumpSize} (4, measured): positions skipped per step of the jump search (an implementation detail that
 *       never changes an answer).
 *   <li>{@code expectedBlocks} (0 = no hint): distinct blocks the index is expected to hold at
 *       once, for example workers times their cache blocks; the index sizes itself for that many up
 *       front instead of growing through rebuilds. Only a hint: it grows past it as needed.
 *   <li>{@code expectedWorkers} (0 = no hint): workers the index is expected to hold blocks of at
 *       once; with {@code expectedBlocks}, each worker's names are sized for its even share
 *       ({@code expectedBlocks / expectedWorkers}) when it first stores, instead of growing from a
 *       few. Only a hint.
 *   <li>{@code implementation} ({@link Implementation#fromEnvironment()}): native or portable hashing and matching.
 * </ul>
 *
 * <p>Thread-safety: immutable.
 */
public final class IndexConfig {
    /** Unlimited memory budget. */
    public static final long UNLIMITED = Long.MAX_VALUE;
    /**
     * The default jump size: fastest or within noise of the fastest for both read paths on the
     * Mooncake conversation trace and the built-in workload (JumpSizeBenchmark, benchmarks/JOURNAL.md section 3.2).
     */
    public static final int DEFAULT_JUMP_SIZE = 4;
    /** The largest number of worker slots an index supports. */
    public static final int MAX_WORKER_SLOTS = 1 << 16;

    private final int blockSize;
    private final long seed;
    private final long chainSeed;
    private final int maxWorkers;
    private final long memoryBudgetBytes;
    private final int jumpSize;
    private final Implementation implementation;
    private final long expectedBlocks;
    private final int expectedWorkers;

    private IndexConfig(Builder b) {
        this.blockSize = b.blockSize;
        this.seed = b.seed;
        this.chainSeed = b.chainSeed;
        this.maxWorkers = b.maxWorkers;
        this.memoryBudgetBytes = b.memoryBudgetBytes;
        this.jumpSize = b.jumpSize;
        this.implementation = b.implementation;
        this.expectedBlocks = b.expectedBlocks;
        this.expectedWorkers = b.expectedWorkers;
    }

    /** The default configuration. */
    public static IndexConfig defaults() {
        return builder().build();
    }

    /** A builder starting from the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from this configuration. */
    public Builder toBuilder() {
        return new Builder()
                .blockSize(blockSize)
                .seed(seed)
                .chainSeed(chainSeed)
                .maxWorkers(maxWorkers)
                .memoryBudgetBytes(memoryBudgetBytes)
                .jumpSize(jumpSize)
                .implementation(implementation)
                .expectedBlocks(expectedBlocks)
                .expectedWorkers(expectedWorkers);
    }

    public int blockSize() {
        return blockSize;
    }

    public long seed() {
        return seed;
    }

    public long chainSeed() {
        return chainSeed;
    }

    public int maxWorkers() {
        return maxWorkers;
    }

    public long memoryBudgetBytes() {
        return memoryBudgetBytes;
    }

    public int jumpSize() {
        return jumpSize;
    }

    public Implementation implementation() {
        return implementation;
    }

    public long expectedBlocks() {
        return expectedBlocks;
    }

    public int expectedWorkers() {
        return expectedWorkers;
    }

    /** Names a worker is expected to hold: the even share of {@link #expectedBlocks()}, or 0 without both hints. */
    public long expectedBlocksPerWorker() {
        return expectedWorkers > 0 && expectedBlocks > 0 ? expectedBlocks / expectedWorkers : 0;
    }

    /** The hasher {@link PrefixIndex#match(int[])} uses: this block size and these seeds, no salt. */
    public BlockHasher hasher() {
        return BlockHasher.builder()
                .blockSize(blockSize)
                .seed(seed)
                .chainSeed(chainSeed)
                .implementation(implementation)
                .build();
    }

    @Override
    public String toString() {
        return "IndexConfig[blockSize=" + blockSize + ", maxWorkers=" + maxWorkers + ", memoryBudget="
                + (memoryBudgetBytes == UNLIMITED ? "unlimited" : memoryBudgetBytes + " B") + ", jumpSize=" + jumpSize
                + ", implementation=" + implementation
                + (expectedBlocks > 0 ? ", expectedBlocks=" + expectedBlocks : "")
                + (expectedWorkers > 0 ? ", expectedWorkers=" + expectedWorkers : "") + "]";
    }

    /**
     * Builds an {@link IndexConfig}; each setter checks its value.
     *
     * <p>Thread-safety: not thread-safe; use one builder per thread.
     */
    public static final class Builder {
        private int blockSize = 16;
        private long seed = BlockHasher.DEFAULT_SEED;
        private long chainSeed = BlockHasher.DEFAULT_CHAIN_SEED;
        private int maxWorkers = 1024;
        private long memoryBudgetBytes = UNLIMITED;
        private int jumpSize = DEFAULT_JUMP_SIZE;
        private Implementation implementation = Implementation.fromEnvironment();
        private long expectedBlocks;
        private int expectedWorkers;

        private Builder() {}

        public Builder blockSize(int v) {
            if (v < 1) {
                throw new IllegalArgumentException("block_size must be >= 1, got " + v);
            }
            blockSize = v;
            return this;
        }

        public Builder seed(long v) {
            seed = v;
            return this;
        }

        public Builder chainSeed(long v) {
            chainSeed = v;
            return this;
        }

        public Builder maxWorkers(int v) {
            if (v < 1 || v > MAX_WORKER_SLOTS) {
                throw new IllegalArgumentException("maxWorkers must be in 1.." + MAX_WORKER_SLOTS + ", got " + v);
            }
            maxWorkers = v;
            return this;
        }

        /** Memory budget in bytes ({@link #UNLIMITED} for none); at least 64 KiB. */
        public Builder memoryBudgetBytes(long v) {
            if (v < 64 * 1024) {
                throw new IllegalArgumentException("memory budget must be at least 64 KiB, got " + v + " bytes");
            }
            memoryBudgetBytes = v;
            return this;
        }

        public Builder jumpSize(int v) {
            if (v < 1) {
                throw new IllegalArgumentException("jumpSize must be >= 1, got " + v);
            }
            jumpSize = v;
            return this;
        }

        public Builder implementation(Implementation v) {
            implementation = Objects.requireNonNull(v, "implementation");
            return this;
        }

        /** Distinct blocks expected at once (0 for no hint); at most 2^29. */
        public Builder expectedBlocks(long v) {
            if (v < 0 || v > (1L << 29)) {
                throw new IllegalArgumentException("expectedBlocks must be in 0..2^29, got " + v);
            }
            expectedBlocks = v;
            return this;
        }

        /** Workers expected to hold blocks at once (0 for no hint); at most {@link #MAX_WORKER_SLOTS}. */
        public Builder expectedWorkers(int v) {
            if (v < 0 || v > MAX_WORKER_SLOTS) {
                throw new IllegalArgumentException("expectedWorkers must be in 0.." + MAX_WORKER_SLOTS + ", got " + v);
            }
            expectedWorkers = v;
            return this;
        }

        public IndexConfig build() {
            return new IndexConfig(this);
        }
    }
}
