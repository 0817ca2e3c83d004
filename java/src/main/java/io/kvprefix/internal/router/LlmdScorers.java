package io.kvprefix.internal.router;

/**
 * llm-d's scheduler with its default profile ({@code llm-d-scorers}), exactly as docs/SPEC.md
 * section 6.3 states it: {@code llm-d/llm-d-router} (at {@code ebab6879})
 * {@code pkg/epp/config/loader/defaults.go} weights the queue scorer ({@code scorer/queuedepth}) by
 * {@value #QUEUE_WEIGHT}, the KV-cache-utilization scorer ({@code scorer/kvcacheutilization}) by
 * {@value #KV_WEIGHT} and the prefix-cache scorer ({@code scorer/prefix}, match-length weight 0 by
 * default; at most {@value #MAX_PREFIX_TOKENS} tokens' worth, a lower-tier block counting
 * {@value #CPU_WEIGHT}) by {@value #PREFIX_WEIGHT}; the max-score picker takes the highest total,
 * ties drawn uniformly. Costs are the negated totals.
 *
 * <p>Thread-safety: not thread-safe; {@link LoadTable} calls it only under its lock.
 */
final class LlmdScorers extends TieDrawingSelector {
    static final double QUEUE_WEIGHT = 2;
    static final double KV_WEIGHT = 2;
    static final double PREFIX_WEIGHT = 3;
    /** The approximate prefix producer's {@code maxPrefixTokensToMatch}. */
    static final int MAX_PREFIX_TOKENS = 131_072;
    /** The weight of a block held on a lower tier only (llm-d's "cpu" medium). */
    static final double CPU_WEIGHT = 0.8;

    LlmdScorers(long seed) {
        super(seed);
    }

    @Override
    public int minimumDepth(Request r) {
        return 1;
    }

    /** The choice; with {@code draw} false, the first of tied totals instead of a uniform draw. */
    @Override
    int select(WorkerLoad[] ws, int n, double[] costs, Request r, boolean draw) {
        int minQ = Integer.MAX_VALUE;
        int maxQ = Integer.MIN_VALUE;
        int maxDepth = 0;
        for (int i = 0; i < n; i++) {
            minQ = Math.min(minQ, ws[i].waitingRequests);
            maxQ = Math.max(maxQ, ws[i].waitingRequests);
            maxDepth = Math.max(maxDepth, Math.max(ws[i].depth, ws[i].anyDepth));
        }
        missed = maxDepth == 0;
        long total = Math.min(r.isl, MAX_PREFIX_TOKENS) / r.blockSize;
        int best = -1;
        int ties = 0;
        for (int i = 0; i < n; i++) {
            WorkerLoad w = ws[i];
            double queue = maxQ == minQ ? 1.0 : (double) (maxQ - w.waitingRequests) / (maxQ - minQ);
            double kv = 1 - w.kvCacheUsage;
            double prefix = total == 0 ? 0 : (double) Math.min(matchBlocks(w), total) / total;
            double score = QUEUE_WEIGHT * clamp(queue) + KV_WEIGHT * clamp(kv) + PREFIX_WEIGHT * clamp(prefix);
            costs[i] = -score;
            if (best < 0 || costs[i] < costs[best]) {
                best = i;
                ties = 1;
            } else if (costs[i] == costs[best] && draw && random.nextInt(++ties) == 0) {
                best = i;
            }
        }
        return best;
    }

    /**
     * The precise producer's match: each block weighted by the best tier holding it, GPU 1.0 and CPU 0.8
     * ({@code pkg/kvcache/backend.go}), the sum truncated to whole blocks.
     */
    private static long matchBlocks(WorkerLoad w) {
        return (long) (w.depth + CPU_WEIGHT * Math.max(0, w.anyDepth - w.depth));
    }

    /** Every scorer's output is clamped to [0, 1] ({@code enforceScoreRange}). */
    private static double clamp(double s) {
        return Math.max(0, Math.min(1, s));
    }
}
