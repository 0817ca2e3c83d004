package io.kvprefix.internal.router;

import io.kvprefix.Worker;
import java.util.SplittableRandom;
import java.util.function.ToLongFunction;

/**
 * The cost function and the selection rule of docs/SPEC.md section 6 (Dynamo's), plus the options the
 * router exposes on top of it (minimum match, spreading of misses, capacity weights).
 *
 * <p>For a request of {@code isl} tokens at block size {@code bs}, and a worker {@code w} with depth
 * {@code d_w}, active prefill tokens {@code P_w}, active decode blocks {@code D_w} and capacity weight
 * {@code k_w}:
 * <pre>
 *   d_w              = gpu_w + lowerTierCredit * (any_w - gpu_w)  (GPU depth, any-tier depth: docs/SPEC.md section 3.1)
 *   prefill_blocks_w = (isl - d_w * bs + P_w) / bs              (a real number)
 *   decode_blocks_w  = D_w + floor(isl / bs)                    (this request counts on every candidate)
 *   cost_w           = (overlapWeight * prefill_blocks_w + decode_blocks_w) / k_w
 * </pre>
 * If the deepest match among the candidates is below the minimum match, every {@code d_w} counts as
 * 0 (the request is routed by load alone) and the request is a <em>miss</em>. Temperature 0 takes the
 * lowest cost; costs within a relative 1e-9 of the lowest are ties, broken by the worker holding fewer
 * blocks in the index, then by the lower worker; a miss with spreading on instead goes round-robin
 * over the tied workers (the first one after the previous miss's worker, in worker order). Temperature
 * {@code T > 0} samples with {@code p_w ∝ exp(-(cost_w - min) / ((max - min) * T))}, uniformly when
 * all costs are equal.
 *
 * <p>Thread-safety: not thread-safe; {@link LoadTable} calls it only under its lock (the random
 * generator and the round-robin cursor are its mutable state).
 */
public final class RoutingPolicy {
    /** Relative tolerance under which two costs count as equal. */
    static final double TIE_TOLERANCE = 1e-9;

    private final double overlapWeight;
    private final double lowerTierCredit;
    private final double temperature;
    private final int minMatchBlocks;
    private final int minMatchTokens;
    private final boolean spreadMisses;
    private final SplittableRandom random;
    private Worker lastMiss;
    private boolean missed;
    private double[] weights = new double[16];

    /**
     * @param overlapWeight weight of the prefill term, finite and {@code >= 0}
     * @param temperature 0 for argmin, {@code > 0} for softmax sampling
     * @param minMatchBlocks depths below this (in blocks) do not count
     * @param minMatchTokens depths covering fewer tokens than this do not count
     * @param spreadMisses round-robin misses over the least-cost workers
     * @param seed seed of the sampling generator
     * @param lowerTierCredit the share of a GPU hit a block held only on a lower tier is worth, 0 to 1
     */
    public RoutingPolicy(
            double overlapWeight,
            double temperature,
            int minMatchBlocks,
            int minMatchTokens,
            boolean spreadMisses,
            long seed,
            double lowerTierCredit) {
        this.overlapWeight = overlapWeight;
        this.lowerTierCredit = lowerTierCredit;
        this.temperature = temperature;
        this.minMatchBlocks = minMatchBlocks;
        this.minMatchTokens = minMatchTokens;
        this.spreadMisses = spreadMisses;
        this.random = new SplittableRandom(seed);
    }

    /** The smallest depth (blocks) that counts at this block size: at least 1. */
    int minimumDepth(int blockSize) {
        int fromTokens = (int) Math.min(Integer.MAX_VALUE, ((long) minMatchTokens + blockSize - 1) / blockSize);
        return Math.max(1, Math.max(minMatchBlocks, fromTokens));
    }

    /**
     * Fills {@code costs[0..n)} for the candidates {@code ws[0..n)} (sorted by worker, depths in
     * {@link WorkerLoad#depth}) and returns the index of the chosen one.
     */
    int choose(WorkerLoad[] ws, int n, double[] costs, int isl, int blockSize, ToLongFunction<Worker> blockCount) {
        boolean miss = fillCosts(ws, n, costs, isl, blockSize);
        missed = miss;
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            min = Math.min(min, costs[i]);
            max = Math.max(max, costs[i]);
        }
        double tolerance = TIE_TOLERANCE * Math.max(1.0, Math.abs(min));
        if (temperature > 0) {
            return sample(n, costs, min, max, tolerance);
        }
        double limit = min + tolerance;
        return miss && spreadMisses ? spreadMiss(ws, n, costs, limit) : lowestCost(ws, n, costs, limit, blockCount);
    }

    /** True if the last {@link #choose} was a miss: its deepest match was below the minimum match. */
    boolean missed() {
        return missed;
    }

    /** Fills {@code costs[0..n)} as {@link #choose} does; true if the request is a miss (every depth counts as 0). */
    boolean fillCosts(WorkerLoad[] ws, int n, double[] costs, int isl, int blockSize) {
        int maxDepth = 0;
        for (int i = 0; i < n; i++) { // the deepest match on any tier (a lower-tier prefix is a match too)
            maxDepth = Math.max(maxDepth, Math.max(ws[i].depth, ws[i].anyDepth));
        }
        boolean miss = maxDepth < minimumDepth(blockSize);
        long requestBlocks = isl / blockSize;
        for (int i = 0; i < n; i++) {
            WorkerLoad w = ws[i];
            double d = miss ? 0 : w.depth + lowerTierCredit * Math.max(0, w.anyDepth - w.depth);
            double prefillBlocks = ((double) isl - d * blockSize + (double) w.prefillTokens()) / blockSize;
            double decodeBlocks = (double) (w.decodeBlocks() + requestBlocks);
            costs[i] = (overlapWeight * prefillBlocks + decodeBlocks) / w.weight();
        }
        return miss;
    }

    /**
     * The worker the policy ranks first for costs {@code costs[0..n)}: the lowest cost, ties broken as
     * at temperature 0 without spreading (fewer blocks, then the lower worker). No state changes.
     */
    static int preferred(WorkerLoad[] ws, int n, double[] costs, ToLongFunction<Worker> blockCount) {
        double min = Double.POSITIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            min = Math.min(min, costs[i]);
        }
        return lowestCost(ws, n, costs, min + TIE_TOLERANCE * Math.max(1.0, Math.abs(min)), blockCount);
    }

    /** A miss among equally cheap workers: the next one after the previous miss's, round robin. */
    private int spreadMiss(WorkerLoad[] ws, int n, double[] costs, double limit) {
        int first = -1;
        int after = -1;
        for (int i = 0; i < n; i++) {
            if (costs[i] <= limit) {
                if (first < 0) {
                    first = i;
                }
                if (after < 0 && lastMiss != null && ws[i].worker().compareTo(lastMiss) > 0) {
                    after = i;
                }
            }
        }
        int pick = after >= 0 ? after : first;
        lastMiss = ws[pick].worker();
        return pick;
    }

    /** The cheapest worker; ties go to the one holding fewer blocks, then to the lower worker. */
    private static int lowestCost(
            WorkerLoad[] ws, int n, double[] costs, double limit, ToLongFunction<Worker> blockCount) {
        int ties = 0;
        int firstTie = -1;
        for (int i = 0; i < n; i++) {
            if (costs[i] <= limit) {
                if (ties++ == 0) {
                    firstTie = i;
                }
            }
        }
        if (ties == 1) {
            return firstTie;
        }
        // candidates are in worker order, so keeping the first of equal counts keeps the lower worker
        int best = -1;
        long bestCount = Long.MAX_VALUE;
        for (int i = firstTie; i < n; i++) {
            if (costs[i] <= limit) {
                long c = blockCount.applyAsLong(ws[i].worker());
                if (c < bestCount) {
                    bestCount = c;
                    best = i;
                }
            }
        }
        return best;
    }

    private int sample(int n, double[] costs, double min, double max, double tolerance) {
        double range = max - min;
        if (range <= tolerance) {
            return random.nextInt(n);
        }
        if (weights.length < n) {
            weights = new double[Math.max(n, weights.length * 2)];
        }
        double scale = range * temperature;
        double sum = 0;
        for (int i = 0; i < n; i++) {
            double w = Math.exp(-(costs[i] - min) / scale);
            weights[i] = w;
            sum += w;
        }
        double u = random.nextDouble() * sum;
        int last = 0;
        for (int i = 0; i < n; i++) {
            if (weights[i] > 0) {
                last = i;
                u -= weights[i];
                if (u < 0) {
                    return i;
                }
            }
        }
        return last; // rounding left u at or just above 0
    }
}
