package io.kvprefix.opstream.testing;

import io.kvprefix.KvEvent;
import java.util.Arrays;
import java.util.Objects;

/**
 * One line of an op stream (docs/SPEC.md section 5) as test code sees it: an event, a match by local
 * hashes, a match by tokens, or a line that is malformed on purpose. {@link OpStreamGenerator}
 * makes them, {@link OpStreamJson} writes them as JSON lines, {@link Differential} applies them.
 *
 * <p>Thread-safety: the records are immutable as long as their arrays are not modified.
 */
public sealed interface StreamOp {

    /**
     * An event to apply.
     *
     * @param event the event
     */
    record Event(KvEvent event) implements StreamOp {
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
     * @param localHashes the request's local hashes
     */
    record MatchHashes(long[] localHashes) implements StreamOp {
        public MatchHashes {
            Objects.requireNonNull(localHashes, "localHashes");
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof MatchHashes m && Arrays.equals(localHashes, m.localHashes);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(localHashes);
        }

        @Override
        public String toString() {
            StringBuilder sb = new StringBuilder("MatchHashes[");
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
     * {@code {"op":"match","token_ids":[...],"block_size":B,"lora_name":...,"cache_namespace":...}}:
     * the tokens are hashed with the index's seeds, this block size and this salt.
     *
     * @param tokens the request's tokens (unsigned 32-bit); a partial tail is ignored
     * @param blockSize tokens per block, at least 1
     * @param lora LoRA name, or null (empty counts as absent)
     * @param namespace cache namespace, or null (empty counts as absent)
     */
    record MatchTokens(int[] tokens, int blockSize, String lora, String namespace) implements StreamOp {
        public MatchTokens {
            Objects.requireNonNull(tokens, "tokens");
            if (blockSize < 1) {
                throw new IllegalArgumentException("block_size must be >= 1, got " + blockSize);
            }
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof MatchTokens m
                    && Arrays.equals(tokens, m.tokens)
                    && blockSize == m.blockSize
                    && Objects.equals(lora, m.lora)
                    && Objects.equals(namespace, m.namespace);
        }

        @Override
        public int hashCode() {
            return Objects.hash(Arrays.hashCode(tokens), blockSize, lora, namespace);
        }

        @Override
        public String toString() {
            return "MatchTokens[tokens=" + tokens.length + ", blockSize=" + blockSize
                    + (lora == null ? "" : ", lora=" + lora) + (namespace == null ? "" : ", namespace=" + namespace)
                    + "]";
        }
    }

    /**
     * A line a reader must answer with {@code {"status":"invalid_input"}} and otherwise ignore.
     *
     * @param jsonLine the line, without its {@code \n}
     * @param why which validation rule of docs/SPEC.md section 5 it breaks
     */
    record Malformed(String jsonLine, String why) implements StreamOp {
        public Malformed {
            Objects.requireNonNull(jsonLine, "jsonLine");
            Objects.requireNonNull(why, "why");
            if (jsonLine.indexOf('\n') >= 0) {
                throw new IllegalArgumentException("a line cannot contain \\n: " + why);
            }
        }
    }
}
