package io.kvprefix.opstream;

import io.kvprefix.BlockHasher;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import java.util.Arrays;
import java.util.Objects;

/**
 * One op-stream line as {@link OpStreamParser} understood it (docs/SPEC.md section 5): an event to
 * apply, a match in hash form or token form, or an invalid line with the reason it was rejected.
 *
 * <p>Every array is a fresh, exactly sized copy owned by the result: it stays valid after the
 * parser has moved on to the next line.
 *
 * <p>Thread-safety: immutable as long as nobody modifies the arrays.
 */
public sealed interface ParsedOp permits ParsedOp.Event, ParsedOp.HashMatch, ParsedOp.TokenMatch, ParsedOp.Invalid {

    /**
     * A {@code stored}, {@code removed}, {@code cleared} or {@code remove_worker} line.
     *
     * @param event the event, ready for {@link io.kvprefix.PrefixIndex#apply}
     */
    record Event(KvEvent event) implements ParsedOp {
        public Event {
            Objects.requireNonNull(event, "event");
        }
    }

    /**
     * {@code {"op":"match","local_hashes":[...]}}.
     *
     * @param localHashes the request's local hashes, in order (possibly empty)
     */
    record HashMatch(long[] localHashes) implements ParsedOp {
        public HashMatch {
            Objects.requireNonNull(localHashes, "localHashes");
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof HashMatch m && Arrays.equals(localHashes, m.localHashes);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(localHashes);
        }

        @Override
        public String toString() {
            return "HashMatch[" + localHashes.length + " blocks]";
        }
    }

    /**
     * {@code {"op":"match","token_ids":[...],"block_size":B,...}}.
     *
     * @param tokenIds the request's tokens (unsigned 32-bit; an {@code int} carries the bits)
     * @param blockSize tokens per block, at least 1. A {@code block_size} above 2^31-1 (valid in the
     *     format, up to 2^32-1) arrives here as {@link Integer#MAX_VALUE}: both give zero full blocks
     *     for any token list a line can carry, so the answer is the same
     * @param loraName the LoRA adapter name salting the hashes, or null when absent, {@code null} or
     *     empty (an empty name counts as absent, docs/SPEC.md section 2.1)
     * @param cacheNamespace the cache namespace salting the hashes, or null likewise
     */
    record TokenMatch(int[] tokenIds, int blockSize, String loraName, String cacheNamespace) implements ParsedOp {
        public TokenMatch {
            Objects.requireNonNull(tokenIds, "tokenIds");
            if (blockSize < 1) {
                throw new IllegalArgumentException("block_size must be >= 1, got " + blockSize);
            }
        }

        /** The hasher this match needs on an index configured with {@code config}: its block size and salt, the index's seeds. */
        public BlockHasher hasher(IndexConfig config) {
            return BlockHasher.builder()
                    .blockSize(blockSize)
                    .seed(config.seed())
                    .chainSeed(config.chainSeed())
                    .loraName(loraName)
                    .cacheNamespace(cacheNamespace)
                    .implementation(config.implementation())
                    .build();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof TokenMatch m
                    && Arrays.equals(tokenIds, m.tokenIds)
                    && blockSize == m.blockSize
                    && Objects.equals(loraName, m.loraName)
                    && Objects.equals(cacheNamespace, m.cacheNamespace);
        }

        @Override
        public int hashCode() {
            return Objects.hash(Arrays.hashCode(tokenIds), blockSize, loraName, cacheNamespace);
        }

        @Override
        public String toString() {
            return "TokenMatch[" + tokenIds.length + " tokens, blockSize=" + blockSize
                    + (loraName == null ? "" : ", lora=" + loraName)
                    + (cacheNamespace == null ? "" : ", namespace=" + cacheNamespace) + "]";
        }
    }

    /**
     * A line that is not a valid op: answered {@code {"status":"invalid_input"}}, nothing applied.
     *
     * @param reason a one-line, human-readable reason, naming the field or byte offset at fault
     */
    record Invalid(String reason) implements ParsedOp {
        public Invalid {
            Objects.requireNonNull(reason, "reason");
        }
    }
}
