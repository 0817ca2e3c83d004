package io.kvprefix.opstream;

import io.kvprefix.BlockHasher;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchExplanation;
import io.kvprefix.PrefixIndex;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * One op-stream line as a value (docs/SPEC.md section 5): an event to apply, a match in hash form or
 * token form, an explain of such a match, or a line that is not a valid op. It is the format's only model: {@link OpStreamParser}
 * reads lines into it, {@link OpStreamWriter} writes it back as lines, and code that makes streams
 * (the command line's {@code gen-ops}, the tests' generators) builds it.
 *
 * <p>Every array an op holds is owned by it: the parser hands out fresh, exactly sized copies, which
 * stay valid after it has moved on to the next line; whoever builds an op gives its arrays away.
 *
 * <p>Thread-safety: immutable as long as nobody modifies the arrays.
 */
public sealed interface Op permits Op.Event, Op.HashMatch, Op.TokenMatch, Op.Explain, Op.Invalid {

    /**
     * A {@code stored}, {@code removed}, {@code cleared} or {@code remove_worker} line.
     *
     * @param event the event, ready for {@link io.kvprefix.PrefixIndex#apply}
     */
    record Event(KvEvent event) implements Op {
        public Event {
            Objects.requireNonNull(event, "event");
        }

        @Override
        public String toString() {
            return event.toString();
        }
    }

    /**
     * {@code {"op":"match","local_hashes":[...]}}.
     *
     * @param localHashes the request's local hashes, in order (possibly empty)
     */
    record HashMatch(long[] localHashes) implements Op {
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

        /** The first hashes (unsigned) and how many more there are. */
        @Override
        public String toString() {
            StringBuilder sb = new StringBuilder("HashMatch[");
            for (int i = 0; i < localHashes.length; i++) {
                if (i > 0) {
                    sb.append(',');
                }
                if (i == 12 && localHashes.length > 16) {
                    sb.append("... ").append(localHashes.length - 12).append(" more");
                    break;
                }
                sb.append(Long.toUnsignedString(localHashes[i]));
            }
            return sb.append(']').toString();
        }
    }

    /**
     * {@code {"op":"match","token_ids":[...],"block_size":B,...}}: the tokens are hashed with the
     * index's seeds, this block size and this salt ({@link #hasher}).
     *
     * @param tokenIds the request's tokens (unsigned 32-bit; an {@code int} carries the bits); a
     *     partial tail is ignored
     * @param blockSize tokens per block, at least 1. A {@code block_size} above 2^31-1 (valid in the
     *     format, up to 2^32-1) is read as {@link Integer#MAX_VALUE}: both give zero full blocks for
     *     any token list a line can carry, so the answer is the same
     * @param loraName the LoRA adapter name salting the hashes, or null; an empty name counts as
     *     absent (docs/SPEC.md section 2.1), and the parser gives null for it
     * @param cacheNamespace the cache namespace salting the hashes, or null likewise
     * @param mm the request's multimodal items ({@code "mm"}), empty for a text-only request
     */
    record TokenMatch(
            int[] tokenIds, int blockSize, String loraName, String cacheNamespace, List<BlockHasher.MmSpan> mm)
            implements Op {
        public TokenMatch {
            Objects.requireNonNull(tokenIds, "tokenIds");
            if (blockSize < 1) {
                throw new IllegalArgumentException("block_size must be >= 1, got " + blockSize);
            }
            mm = List.copyOf(mm);
        }

        /** A text-only match. */
        public TokenMatch(int[] tokenIds, int blockSize, String loraName, String cacheNamespace) {
            this(tokenIds, blockSize, loraName, cacheNamespace, List.of());
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
                    && Objects.equals(cacheNamespace, m.cacheNamespace)
                    && mm.equals(m.mm);
        }

        @Override
        public int hashCode() {
            return Objects.hash(Arrays.hashCode(tokenIds), blockSize, loraName, cacheNamespace, mm);
        }

        @Override
        public String toString() {
            return "TokenMatch[" + tokenIds.length + " tokens, blockSize=" + blockSize
                    + (loraName == null ? "" : ", lora=" + loraName)
                    + (cacheNamespace == null ? "" : ", namespace=" + cacheNamespace)
                    + (mm.isEmpty() ? "" : ", mm=" + mm.size()) + "]";
        }
    }

    /**
     * {@code {"op":"explain",...}} with a match line's fields: answered with why each worker's match
     * stopped where it did (docs/SPEC.md section 5, the {@code explain} op).
     *
     * @param query the request, a {@link HashMatch} or a {@link TokenMatch}
     */
    record Explain(Op query) implements Op {
        public Explain {
            Objects.requireNonNull(query, "query");
            if (!(query instanceof HashMatch) && !(query instanceof TokenMatch)) {
                throw new IllegalArgumentException("an explain op holds a match, not " + query);
            }
        }

        /** Runs the explain on {@code index}: a token query is hashed with its block size and salt, the index's seeds. */
        public MatchExplanation on(PrefixIndex index) {
            return switch (query) {
                case HashMatch m -> index.explain(m.localHashes(), 0, m.localHashes().length);
                case TokenMatch t -> index.explain(t.tokenIds(), 0, t.tokenIds().length, t.hasher(index.config()));
                default -> throw new IllegalStateException("not a match: " + query);
            };
        }

        @Override
        public String toString() {
            return "Explain[" + query + "]";
        }
    }

    /**
     * A line that is not a valid op: answered {@code {"status":"invalid_input"}}, nothing applied.
     *
     * @param reason a one-line, human-readable reason, naming the field or byte offset at fault
     * @param line the line itself (without its {@code \n}) when it is known, so that it can be
     *     written again: a generator of malformed lines gives it; the parser does not keep the lines
     *     it rejects and gives null
     */
    record Invalid(String reason, String line) implements Op {
        public Invalid {
            Objects.requireNonNull(reason, "reason");
            if (line != null && line.indexOf('\n') >= 0) {
                throw new IllegalArgumentException("a line cannot contain \\n: " + reason);
            }
        }

        /** An invalid line whose text is not kept. */
        public Invalid(String reason) {
            this(reason, null);
        }
    }
}
