package io.kvprefix;

import java.util.Arrays;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * A KV-cache event from an engine (docs/SPEC.md section 3): a worker stored blocks, removed blocks,
 * was cleared, or left.
 *
 * <p>Engine hashes {@code E} are opaque 64-bit names the engine gives its blocks; local hashes
 * {@code L} are kvprefix's content hashes ({@link BlockHasher}). All hashes are unsigned; a Java
 * {@code long} carries their bits, so a negative value read from a signed source (vLLM) is already
 * the right 64 bits.
 *
 * <p>Constructors check the structure (non-null arrays, matching lengths, a block size of at least
 * 1) and throw {@link IllegalArgumentException} or {@link NullPointerException} with a clear message.
 * Arrays are not copied: do not modify them after handing an event over. Semantic checks (duplicate
 * hashes, unknown parents) happen when the event is applied, and come back as an {@link EventStatus}.
 *
 * <p>Thread-safety: the records are immutable as long as their arrays are not modified.
 */
public sealed interface KvEvent
        permits KvEvent.Stored,
                KvEvent.StoredTokens,
                KvEvent.Copied,
                KvEvent.Removed,
                KvEvent.Cleared,
                KvEvent.RemoveWorker {

    /** The engine id this event belongs to; events of one id must be applied in order. */
    long workerId();

    /**
     * The worker stored blocks, in order, as a chain continuing its block {@code parentHash} (or
     * starting a new sequence at position 0 when there is no parent).
     *
     * @param worker the worker
     * @param parentHash the engine hash of the parent block, or empty
     * @param blockHashes the engine hash {@code E} of each block
     * @param localHashes the local hash {@code L} of each block (same length)
     * @param medium the tier the blocks are stored on (docs/SPEC.md section 3.1)
     */
    record Stored(Worker worker, OptionalLong parentHash, long[] blockHashes, long[] localHashes, Medium medium)
            implements KvEvent {
        /** A store on the GPU. */
        public Stored(Worker worker, OptionalLong parentHash, long[] blockHashes, long[] localHashes) {
            this(worker, parentHash, blockHashes, localHashes, Medium.GPU);
        }

        public Stored {
            Objects.requireNonNull(medium, "medium");
            Objects.requireNonNull(worker, "worker");
            Objects.requireNonNull(parentHash, "parentHash (use OptionalLong.empty() for none)");
            Objects.requireNonNull(blockHashes, "blockHashes");
            Objects.requireNonNull(localHashes, "localHashes");
            if (blockHashes.length != localHashes.length) {
                throw new IllegalArgumentException(
                        "stored: " + blockHashes.length + " engine hashes but " + localHashes.length + " local hashes");
            }
        }

        /** A store starting a new sequence (no parent). */
        public static Stored root(Worker worker, long[] blockHashes, long[] localHashes) {
            return new Stored(worker, OptionalLong.empty(), blockHashes, localHashes);
        }

        /** A store continuing the worker's block {@code parentHash}. */
        public static Stored after(Worker worker, long parentHash, long[] blockHashes, long[] localHashes) {
            return new Stored(worker, OptionalLong.of(parentHash), blockHashes, localHashes);
        }

        @Override
        public long workerId() {
            return worker.workerId();
        }

        /** Number of blocks. */
        public int size() {
            return blockHashes.length;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Stored s
                    && worker.equals(s.worker)
                    && medium == s.medium
                    && parentHash.equals(s.parentHash)
                    && Arrays.equals(blockHashes, s.blockHashes)
                    && Arrays.equals(localHashes, s.localHashes);
        }

        @Override
        public int hashCode() {
            return Objects.hash(worker, parentHash, Arrays.hashCode(blockHashes), Arrays.hashCode(localHashes));
        }

        @Override
        public String toString() {
            return "Stored[" + worker + (medium == Medium.GPU ? "" : ", " + medium) + ", parent=" + unsigned(parentHash)
                    + ", E=" + unsigned(blockHashes) + ", L=" + unsigned(localHashes) + "]";
        }
    }

    /**
     * The token form of a store, as vLLM sends it: the blocks' tokens, the engine's block size and
     * one engine hash per full block; kvprefix computes the local hashes itself (seed 1337 salted by
     * the LoRA name and cache namespace, docs/SPEC.md section 2.1, and each block's multimodal
     * content hashes appended). A partial tail is ignored.
     *
     * @param worker the worker
     * @param parentHash the engine hash of the parent block, or empty
     * @param tokenIds the tokens of the stored blocks (unsigned 32-bit)
     * @param blockSize tokens per block, at least 1
     * @param blockHashes one engine hash per full block: {@code tokenIds.length / blockSize} of them
     * @param loraName LoRA adapter name, or null
     * @param cacheNamespace cache namespace, or null
     * @param mmHashes null for a text-only store, or one entry per full block: the multimodal content
     *     hashes ({@code mm_hash}) of the items whose tokens overlap that block, in any order (null or
     *     empty for a block without), docs/SPEC.md section 2.1; {@link BlockHasher#multimodalExtras}
     *     makes them from token spans
     * @param medium the tier the blocks are stored on (docs/SPEC.md section 3.1)
     */
    record StoredTokens(
            Worker worker,
            OptionalLong parentHash,
            int[] tokenIds,
            int blockSize,
            long[] blockHashes,
            String loraName,
            String cacheNamespace,
            long[][] mmHashes,
            Medium medium)
            implements KvEvent {
        /** A store on the GPU. */
        public StoredTokens(
                Worker worker,
                OptionalLong parentHash,
                int[] tokenIds,
                int blockSize,
                long[] blockHashes,
                String loraName,
                String cacheNamespace,
                long[][] mmHashes) {
            this(worker, parentHash, tokenIds, blockSize, blockHashes, loraName, cacheNamespace, mmHashes, Medium.GPU);
        }

        /** A text-only store on the GPU (no multimodal hashes). */
        public StoredTokens(
                Worker worker,
                OptionalLong parentHash,
                int[] tokenIds,
                int blockSize,
                long[] blockHashes,
                String loraName,
                String cacheNamespace) {
            this(worker, parentHash, tokenIds, blockSize, blockHashes, loraName, cacheNamespace, null);
        }

        public StoredTokens {
            Objects.requireNonNull(medium, "medium");
            Objects.requireNonNull(worker, "worker");
            Objects.requireNonNull(parentHash, "parentHash (use OptionalLong.empty() for none)");
            Objects.requireNonNull(tokenIds, "tokenIds");
            Objects.requireNonNull(blockHashes, "blockHashes");
            if (blockSize < 1) {
                throw new IllegalArgumentException("stored: block_size must be >= 1, got " + blockSize);
            }
            if (blockHashes.length != tokenIds.length / blockSize) {
                throw new IllegalArgumentException("stored: " + tokenIds.length + " tokens at block size " + blockSize
                        + " make " + tokenIds.length / blockSize + " full blocks, but " + blockHashes.length
                        + " engine hashes were given");
            }
            if (mmHashes != null && mmHashes.length != blockHashes.length) {
                throw new IllegalArgumentException("stored: " + mmHashes.length + " multimodal entries for "
                        + blockHashes.length + " full blocks (one entry per block, null for none)");
            }
        }

        /** True if some block carries multimodal hashes. */
        public boolean hasMultimodal() {
            if (mmHashes != null) {
                for (long[] m : mmHashes) {
                    if (m != null && m.length > 0) {
                        return true;
                    }
                }
            }
            return false;
        }

        @Override
        public long workerId() {
            return worker.workerId();
        }

        /** Number of full blocks. */
        public int size() {
            return blockHashes.length;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof StoredTokens s
                    && worker.equals(s.worker)
                    && medium == s.medium
                    && parentHash.equals(s.parentHash)
                    && blockSize == s.blockSize
                    && Arrays.equals(tokenIds, s.tokenIds)
                    && Arrays.equals(blockHashes, s.blockHashes)
                    && Objects.equals(loraName, s.loraName)
                    && Objects.equals(cacheNamespace, s.cacheNamespace)
                    && sameMultimodal(this, s);
        }

        /** Multimodal hashes compare per block as multisets (their order never matters); null equals all-empty. */
        private static boolean sameMultimodal(StoredTokens a, StoredTokens b) {
            for (int i = 0; i < a.blockHashes.length; i++) {
                if (!Arrays.equals(sortedCopy(a.mmHashes, i), sortedCopy(b.mmHashes, i))) {
                    return false;
                }
            }
            return true;
        }

        private static long[] sortedCopy(long[][] mm, int block) {
            if (mm == null || mm[block] == null) {
                return new long[0];
            }
            long[] c = mm[block].clone();
            Arrays.sort(c);
            return c;
        }

        @Override
        public int hashCode() {
            return Objects.hash(
                    worker,
                    parentHash,
                    blockSize,
                    Arrays.hashCode(tokenIds),
                    Arrays.hashCode(blockHashes),
                    loraName,
                    cacheNamespace);
        }

        @Override
        public String toString() {
            return "StoredTokens[" + worker + (medium == Medium.GPU ? "" : ", " + medium) + ", parent="
                    + unsigned(parentHash) + ", tokens=" + tokenIds.length
                    + ", blockSize=" + blockSize + ", E=" + unsigned(blockHashes)
                    + (loraName == null ? "" : ", lora=" + loraName)
                    + (cacheNamespace == null ? "" : ", namespace=" + cacheNamespace)
                    + (hasMultimodal() ? ", multimodal" : "") + "]";
        }
    }

    /**
     * The worker no longer holds the blocks it named {@code blockHashes} (processed in order; unknown
     * names are skipped and make the status {@link EventStatus#BLOCK_NOT_FOUND}). Descendants of a
     * removed block stay held but cannot match until it is stored again.
     *
     * @param worker the worker
     * @param blockHashes engine hashes
     * @param medium the tier the blocks left (docs/SPEC.md section 3.1); the others are not touched
     */
    record Removed(Worker worker, long[] blockHashes, Medium medium) implements KvEvent {
        /** A removal from the GPU. */
        public Removed(Worker worker, long[] blockHashes) {
            this(worker, blockHashes, Medium.GPU);
        }

        public Removed {
            Objects.requireNonNull(worker, "worker");
            Objects.requireNonNull(blockHashes, "blockHashes");
            Objects.requireNonNull(medium, "medium");
        }

        @Override
        public long workerId() {
            return worker.workerId();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Removed r
                    && worker.equals(r.worker)
                    && medium == r.medium
                    && Arrays.equals(blockHashes, r.blockHashes);
        }

        @Override
        public int hashCode() {
            return 31 * (31 * worker.hashCode() + Arrays.hashCode(blockHashes)) + medium.hashCode();
        }

        @Override
        public String toString() {
            return "Removed[" + worker + (medium == Medium.GPU ? "" : ", " + medium) + ", E=" + unsigned(blockHashes)
                    + "]";
        }
    }

    /**
     * A lower tier of the worker now also holds blocks the worker already holds on another tier,
     * named only by their engine hashes (docs/SPEC.md section 3.1): vLLM's offloading connector
     * announces its CPU copies so, with no tokens and no parent. Each name the worker holds gains
     * {@code medium}; unknown names are skipped and make the status {@link EventStatus#BLOCK_NOT_FOUND}.
     *
     * @param worker the worker
     * @param blockHashes engine hashes of blocks the worker holds
     * @param medium the lower tier that holds them now; never {@link Medium#GPU}
     */
    record Copied(Worker worker, long[] blockHashes, Medium medium) implements KvEvent {
        public Copied {
            Objects.requireNonNull(worker, "worker");
            Objects.requireNonNull(blockHashes, "blockHashes");
            Objects.requireNonNull(medium, "medium");
            if (medium == Medium.GPU) {
                throw new IllegalArgumentException("copied: a GPU store needs its content (Stored or StoredTokens)");
            }
        }

        @Override
        public long workerId() {
            return worker.workerId();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Copied c
                    && worker.equals(c.worker)
                    && medium == c.medium
                    && Arrays.equals(blockHashes, c.blockHashes);
        }

        @Override
        public int hashCode() {
            return 31 * (31 * worker.hashCode() + Arrays.hashCode(blockHashes)) + medium.hashCode();
        }

        @Override
        public String toString() {
            return "Copied[" + worker + ", " + medium + ", E=" + unsigned(blockHashes) + "]";
        }
    }

    /**
     * The worker holds nothing any more, on any tier (an engine reset). Always {@link EventStatus#OK}.
     *
     * @param worker the worker
     */
    record Cleared(Worker worker) implements KvEvent {
        public Cleared {
            Objects.requireNonNull(worker, "worker");
        }

        @Override
        public long workerId() {
            return worker.workerId();
        }
    }

    /**
     * Every dp rank of {@code workerId} holds nothing and is forgotten. Always {@link EventStatus#OK}.
     *
     * @param workerId the engine id (unsigned 64-bit)
     */
    record RemoveWorker(long workerId) implements KvEvent {
        @Override
        public String toString() {
            return "RemoveWorker[" + Long.toUnsignedString(workerId) + "]";
        }
    }

    private static String unsigned(OptionalLong v) {
        return v.isPresent() ? Long.toUnsignedString(v.getAsLong()) : "-";
    }

    private static String unsigned(long[] a) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < a.length; i++) {
            if (i > 0) {
                sb.append(',');
            }
            if (i == 16 && a.length > 20) {
                sb.append("... ").append(a.length - 16).append(" more");
                break;
            }
            sb.append(Long.toUnsignedString(a[i]));
        }
        return sb.append(']').toString();
    }
}
