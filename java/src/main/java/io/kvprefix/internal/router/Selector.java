package io.kvprefix.internal.router;

import io.kvprefix.RoutingPolicy;
import io.kvprefix.Worker;
import java.util.function.ToLongFunction;

/**
 * The choice rule of one routing policy ({@link RoutingPolicy}): given the registered workers with
 * their depths for one request ({@link WorkerLoad#depth}) and their load, it fills in each one's cost
 * (lower is better; the decision reports the chosen worker's) and picks one.
 *
 * <p>Thread-safety: not thread-safe; {@link LoadTable} calls it only under its lock (random
 * generators and cursors are a selector's mutable state).
 */
public interface Selector {
    /**
     * Fills {@code costs[0..n)} for {@code ws[0..n)} (in the table's order, not sorted) and returns the
     * index of the chosen worker.
     */
    int choose(WorkerLoad[] ws, int n, double[] costs, Request r);

    /**
     * As {@link #choose}, but changing no state but {@link #missed()}: no random draw, no cursor moved;
     * where {@link #choose} would draw among ties, the first of them. For explanations.
     */
    int preview(WorkerLoad[] ws, int n, double[] costs, Request r);

    /** True if the last {@link #choose} or {@link #preview} routed by load alone because nothing matched enough. */
    boolean missed();

    /** The smallest deepest depth (blocks) this policy counts for the request: at least 1. */
    int minimumDepth(Request r);

    /** True if the table must keep each worker's pending prefills and learn its speed for this selector. */
    default boolean tracksPrefills() {
        return false;
    }

    /**
     * One request as the selectors see it.
     *
     * <p>Thread-safety: not thread-safe; one instance per table, filled under its lock.
     */
    final class Request {
        /** The request's length in tokens. */
        int isl;
        /** The block size it was hashed with. */
        int blockSize;
        /** The router's clock, nanoseconds. */
        long now;
        /** True if the router has an event-fed index (not only predicted cache contents). */
        boolean eventFed;
        /** Blocks each worker holds in the index, for tie-breaks. */
        ToLongFunction<Worker> blockCount;
        /** The fleet's prefill speed. */
        PrefillSpeed fleet;
    }

    /** The selector of {@code policy} with the router's options. */
    static Selector of(RoutingPolicy policy, Options o) {
        return switch (policy) {
            case DYNAMO_COST -> new DynamoCost(o);
            case SGLANG_CACHE_AWARE -> new SglangCacheAware(o.seed());
            case LLM_D_SCORERS -> new LlmdScorers(o.seed());
            case KVPREFIX_TTFT -> new TtftEstimate(o);
            case ROUND_ROBIN -> new RoundRobin();
        };
    }

    /**
     * The router's policy options.
     *
     * <p>Thread-safety: immutable.
     *
     * @param overlapWeight dynamo-cost: weight of the prefill term, finite and {@code >= 0}
     * @param temperature dynamo-cost: 0 for argmin, {@code > 0} for softmax sampling
     * @param minMatchBlocks depths below this (in blocks) do not count (dynamo-cost, kvprefix-ttft)
     * @param minMatchTokens depths covering fewer tokens than this do not count (same)
     * @param spreadMisses dynamo-cost: round-robin misses over the least-cost workers
     * @param seed seed of the policies' random generators
     * @param lowerTierCredit the share of a GPU hit a block held only on a lower tier is worth, 0 to 1
     *     (dynamo-cost, kvprefix-ttft)
     */
    record Options(
            double overlapWeight,
            double temperature,
            int minMatchBlocks,
            int minMatchTokens,
            boolean spreadMisses,
            long seed,
            double lowerTierCredit) {
        /**
         * Refuses options that {@code policy} does not use: the overlap weight, temperature and miss
         * spreading belong to dynamo-cost, the minimum match and the lower-tier credit to dynamo-cost and
         * kvprefix-ttft.
         *
         * @throws IllegalStateException naming the option and the policy
         */
        public static void check(RoutingPolicy policy, boolean costOptionSet, boolean depthOptionSet) {
            if (costOptionSet && policy != RoutingPolicy.DYNAMO_COST) {
                throw new IllegalStateException("the overlap weight, temperature and miss spreading apply to the "
                        + "dynamo-cost policy only, not to " + policy);
            }
            if (depthOptionSet && policy != RoutingPolicy.DYNAMO_COST && policy != RoutingPolicy.KVPREFIX_TTFT) {
                throw new IllegalStateException(
                        "the minimum match, the lower-tier credit and in-flight prefills apply to dynamo-cost "
                                + "and kvprefix-ttft only, not to " + policy);
            }
        }

        /** {@code w}'s depth with its lower-tier blocks counted at the credit: {@code gpu + credit * (any - gpu)}. */
        double creditedDepth(WorkerLoad w) {
            return w.depth + lowerTierCredit * Math.max(0, w.anyDepth - w.depth);
        }

        /** The smallest depth (blocks) that counts at this block size: at least 1. */
        int minimumDepth(int blockSize) {
            int fromTokens = (int) Math.min(Integer.MAX_VALUE, ((long) minMatchTokens + blockSize - 1) / blockSize);
            return Math.max(1, Math.max(minMatchBlocks, fromTokens));
        }
    }
}
