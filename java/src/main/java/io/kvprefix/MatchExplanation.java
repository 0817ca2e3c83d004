package io.kvprefix;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Why a request matched as deep as it did on each worker ({@link PrefixIndex#explain}): per worker
 * the index knows, its depth, and where and why its match stopped (docs/SPEC.md section 4.1).
 *
 * <p>Thread-safety: immutable.
 *
 * @param queryBlocks blocks the request had
 * @param workers one entry per worker the index knows, sorted by worker
 */
public record MatchExplanation(int queryBlocks, List<WorkerStop> workers) {
    public MatchExplanation {
        if (queryBlocks < 0) {
            throw new IllegalArgumentException("queryBlocks must be >= 0, got " + queryBlocks);
        }
        List<WorkerStop> sorted = new ArrayList<>(workers);
        sorted.sort((a, b) -> a.worker().compareTo(b.worker()));
        workers = List.copyOf(sorted);
    }

    /** Why a worker's match stopped where it did. Thread-safety: an immutable enum. */
    public enum Stop {
        /** Nothing stopped it: the worker holds the whole request. */
        COMPLETE("complete"),
        /**
         * The worker does not hold the block at position {@code depth}, but holds a later block of the
         * request's chain ({@link WorkerStop#resumesAt()}): a hole, such as a middle block the engine
         * evicted, or an event lost on the way.
         */
        HOLE("hole"),
        /**
         * The worker holds no later block of the request, but the request's tokens hashed under another
         * salt the index has seen ({@link WorkerStop#salt()}) match it deeper: the request names the
         * wrong LoRA adapter or cache namespace, or none.
         */
        OTHER_SALT("other_salt"),
        /** The worker does not hold the block at position {@code depth}, nor any later block of the request. */
        ABSENT("absent");

        private final String wireName;

        Stop(String wireName) {
            this.wireName = wireName;
        }

        /** The name in the op stream's {@code explain} answer ({@code hole}, {@code other_salt}, ...). */
        public String wireName() {
            return wireName;
        }
    }

    /**
     * A salt: the LoRA adapter name and cache namespace a request's local hashes are salted with
     * (docs/SPEC.md section 2.1); null for none.
     *
     * <p>Thread-safety: immutable.
     *
     * @param loraName the adapter name, or null
     * @param cacheNamespace the namespace, or null
     */
    public record Salt(String loraName, String cacheNamespace) {
        /** No salt. */
        public static final Salt NONE = new Salt(null, null);

        public Salt {
            loraName = loraName == null || loraName.isEmpty() ? null : loraName;
            cacheNamespace = cacheNamespace == null || cacheNamespace.isEmpty() ? null : cacheNamespace;
        }

        /** {@code lora=..., namespace=...}, or {@code no salt}. */
        @Override
        public String toString() {
            if (loraName == null && cacheNamespace == null) {
                return "no salt";
            }
            return (loraName == null ? "" : "lora=" + loraName)
                    + (loraName != null && cacheNamespace != null ? ", " : "")
                    + (cacheNamespace == null ? "" : "namespace=" + cacheNamespace);
        }
    }

    /**
     * One worker's match and why it stopped.
     *
     * <p>Thread-safety: immutable.
     *
     * @param worker the worker
     * @param depth its depth: leading blocks of the request it holds (docs/SPEC.md section 4)
     * @param stop why the match stopped at {@code depth}
     * @param resumesAt the first position after {@code depth} at which the worker holds the request's
     *     block (a hole ends there), or -1 if it holds none
     * @param salt the salt under which the request's tokens match this worker deepest, if that is deeper
     *     than {@code depth}; null otherwise (and always for a request given as local hashes)
     * @param saltDepth the depth under {@code salt}, or 0
     */
    public record WorkerStop(Worker worker, int depth, Stop stop, int resumesAt, Salt salt, int saltDepth) {
        public WorkerStop {
            Objects.requireNonNull(worker, "worker");
            Objects.requireNonNull(stop, "stop");
            if (depth < 0 || resumesAt < -1 || (resumesAt >= 0 && resumesAt <= depth)) {
                throw new IllegalArgumentException("depth " + depth + ", resumesAt " + resumesAt);
            }
            if ((salt == null) != (saltDepth == 0) || (salt != null && saltDepth <= depth)) {
                throw new IllegalArgumentException("salt " + salt + " at depth " + saltDepth + ", depth " + depth);
            }
        }

        /**
         * The stop of a worker with this depth in a request of {@code queryBlocks} blocks: {@link Stop#COMPLETE}
         * if it holds it all, else {@link Stop#HOLE} if it holds a later block, else {@link Stop#OTHER_SALT}
         * if another salt matches deeper, else {@link Stop#ABSENT}.
         */
        public static WorkerStop of(
                Worker worker, int queryBlocks, int depth, int resumesAt, Salt salt, int saltDepth) {
            Stop s = depth >= queryBlocks
                    ? Stop.COMPLETE
                    : resumesAt >= 0 ? Stop.HOLE : salt != null ? Stop.OTHER_SALT : Stop.ABSENT;
            return new WorkerStop(worker, depth, s, resumesAt, salt, saltDepth);
        }

        /** A short sentence for a log: {@code 7/0: depth 3, hole (holds position 5 on)}. */
        public String describe() {
            String why = switch (stop) {
                case COMPLETE -> "complete";
                case HOLE -> "hole at " + depth + " (holds the request's block at " + resumesAt + ")";
                case OTHER_SALT -> "absent at " + depth + "; under " + salt + " it would match " + saltDepth;
                case ABSENT -> "absent at " + depth;
            };
            return worker + ": depth " + depth + ", " + why;
        }
    }

    /** The entry of {@code worker}, if the index knows it. */
    public Optional<WorkerStop> of(Worker worker) {
        for (WorkerStop w : workers) {
            if (w.worker().equals(worker)) {
                return Optional.of(w);
            }
        }
        return Optional.empty();
    }

    /** One line per worker ({@link WorkerStop#describe()}). */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("MatchExplanation[" + queryBlocks + " blocks");
        for (WorkerStop w : workers) {
            sb.append("; ").append(w.describe());
        }
        return sb.append(']').toString();
    }
}
