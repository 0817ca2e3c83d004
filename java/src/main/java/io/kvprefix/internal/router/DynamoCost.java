package io.kvprefix.internal.router;

import io.kvprefix.Worker;
import java.util.SplittableRandom;

/**
 * NVIDIA Dynamo's KV router cost, the default policy ({@code dynamo-cost}), exactly as docs/SPEC.md
 * section 6.1 states it: Dynamo's {@code lib/kv-router/src/scheduling/selector/default.rs} with the
 * defaults of its {@code config.rs} (overlap credit 1, prefill load scale 1, temperature 0), plus
 * the options the router exposes on top of it (minimum match, spreading of misses, capacity
 * weights, the lower-tier credit): {@code cost_w = (overlapWeight * prefill_blocks_w +
 * decode_blocks_w) / capacity_weight_w}, the lowest wins.
 *
 * <p>Thread-safety: not thread-safe; {@link LoadTable} calls it only under its lock (the random
 * generator and the round-robin cursor are its mutable state).
 */
final class DynamoCost implements Selector {
    /** Relative tolerance under which two costs count as equal. */
    static final double TIE_TOLERANCE = 1e-9;
    /**
     * Relative margin by which a walked worker's cost must exceed the tie limit before the walk stops:
     * the cost and the load key round differently, by about 1e-16 relative, far less than this.
     */
    static final double WALK_MARGIN = 1e-12;

    private final Options options;
    private final SplittableRandom random;
    private Worker lastMiss;
    private boolean missed;
    private double[] weights = new double[16];
    private WorkerLoad[] candidateLoads = new WorkerLoad[16];
    private double[] candidateCosts = new double[16];
    private int candidates;
    private double lastCost;

    DynamoCost(Options options) {
        this.options = options;
        this.random = new SplittableRandom(options.seed());
    }

    @Override
    public boolean missed() {
        return missed;
    }

    @Override
    public int choose(WorkerLoad[] ws, int n, double[] costs, Request r) {
        boolean miss = fillCosts(ws, n, costs, r);
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            min = Math.min(min, costs[i]);
            max = Math.max(max, costs[i]);
        }
        double tolerance = TIE_TOLERANCE * Math.max(1.0, Math.abs(min));
        if (options.temperature() > 0) {
            return sample(n, costs, min, max, tolerance);
        }
        double limit = min + tolerance;
        return miss && options.spreadMisses() ? spreadMiss(ws, n, costs, limit) : lowestCost(ws, n, costs, limit, r);
    }

    /** The lowest cost, ties broken as at temperature 0 without spreading; no draw, no cursor moved. */
    @Override
    public int preview(WorkerLoad[] ws, int n, double[] costs, Request r) {
        fillCosts(ws, n, costs, r);
        double min = Double.POSITIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            min = Math.min(min, costs[i]);
        }
        return lowestCost(ws, n, costs, min + TIE_TOLERANCE * Math.max(1.0, Math.abs(min)), r);
    }

    @Override
    public int minimumDepth(Request r) {
        return options.minimumDepth(r.blockSize);
    }

    /** Fills {@code costs[0..n)}; true if the request is a miss (every depth counts as 0). */
    private boolean fillCosts(WorkerLoad[] ws, int n, double[] costs, Request r) {
        int maxDepth = 0;
        for (int i = 0; i < n; i++) { // the deepest match on any tier (a lower-tier prefix is a match too)
            maxDepth = Math.max(maxDepth, Math.max(ws[i].depth, ws[i].anyDepth));
        }
        boolean miss = maxDepth < options.minimumDepth(r.blockSize);
        missed = miss;
        long requestBlocks = r.isl / r.blockSize;
        for (int i = 0; i < n; i++) {
            WorkerLoad w = ws[i];
            costs[i] = cost(w, miss ? 0 : options.creditedDepth(w), r, requestBlocks);
        }
        return miss;
    }

    /** {@code w}'s cost at credited depth {@code d}: the one formula both ways of deciding compute. */
    private double cost(WorkerLoad w, double d, Request r, long requestBlocks) {
        double prefillBlocks = ((double) r.isl - d * r.blockSize + (double) w.prefillTokens()) / r.blockSize;
        double decodeBlocks = (double) (w.decodeBlocks() + requestBlocks);
        return (options.overlapWeight() * prefillBlocks + decodeBlocks) / w.weight();
    }

    /** True if {@link #chooseOrdered} can make this selector's decisions (temperature 0: nothing is drawn). */
    boolean ordered() {
        return options.temperature() == 0;
    }

    /** The cost of the worker the last {@link #chooseOrdered} chose. */
    double lastCost() {
        return lastCost;
    }

    /**
     * {@link #choose} at temperature 0 without visiting every worker: the {@code m} matched workers, then
     * from each weight's heap of {@code order} the unmatched ones in load order, while their cost can
     * still be within the tie tolerance of the cheapest (docs/SPEC.md section 6.5). The same choice as
     * {@link #choose}, because every worker it skips costs more than the tie limit (their cost at depth
     * 0 grows with their key; {@link #WALK_MARGIN} covers rounding). Returns null, changing nothing,
     * for a miss with miss spreading, which {@link #choose} decides.
     */
    WorkerLoad chooseOrdered(WorkerLoad[] matched, int m, LoadOrder order, Request r) {
        int maxDepth = 0;
        for (int i = 0; i < m; i++) {
            maxDepth = Math.max(maxDepth, Math.max(matched[i].depth, matched[i].anyDepth));
        }
        boolean miss = maxDepth < options.minimumDepth(r.blockSize);
        if (miss && options.spreadMisses()) {
            return null;
        }
        missed = miss;
        long requestBlocks = r.isl / r.blockSize;
        candidates = 0;
        double min = Double.POSITIVE_INFINITY;
        for (int i = 0; i < m; i++) {
            min = Math.min(
                    min,
                    candidate(
                            matched[i],
                            cost(matched[i], miss ? 0 : options.creditedDepth(matched[i]), r, requestBlocks)));
        }
        for (int h = 0; h < order.heapCount(); h++) {
            order.startWalk(order.heap(h));
            WorkerLoad w = order.next();
            while (w != null && w.matched) {
                w = order.next();
            }
            if (w != null) {
                min = Math.min(min, cost(w, 0, r, requestBlocks));
            }
        }
        double bound = min + TIE_TOLERANCE * Math.max(1.0, Math.abs(min));
        double stop = bound + WALK_MARGIN * Math.max(1.0, Math.abs(bound));
        for (int h = 0; h < order.heapCount(); h++) {
            order.startWalk(order.heap(h));
            for (WorkerLoad w = order.next(); w != null; w = order.next()) {
                if (w.matched) {
                    continue;
                }
                double c = cost(w, 0, r, requestBlocks);
                if (c > stop) {
                    break;
                }
                if (c <= bound) {
                    candidate(w, c);
                }
            }
        }
        return lowestCandidate(r);
    }

    /** Adds a candidate of {@link #chooseOrdered} and returns its cost. */
    private double candidate(WorkerLoad w, double cost) {
        if (candidates == candidateLoads.length) {
            candidateLoads = java.util.Arrays.copyOf(candidateLoads, candidates * 2);
            candidateCosts = java.util.Arrays.copyOf(candidateCosts, candidates * 2);
        }
        candidateLoads[candidates] = w;
        candidateCosts[candidates++] = cost;
        return cost;
    }

    /** The candidates' cheapest, ties broken as {@link #lowestCost} breaks them. */
    private WorkerLoad lowestCandidate(Request r) {
        double min = Double.POSITIVE_INFINITY;
        for (int i = 0; i < candidates; i++) {
            min = Math.min(min, candidateCosts[i]);
        }
        int best = lowestCost(
                candidateLoads, candidates, candidateCosts, min + TIE_TOLERANCE * Math.max(1.0, Math.abs(min)), r);
        lastCost = candidateCosts[best];
        WorkerLoad chosen = candidateLoads[best];
        java.util.Arrays.fill(candidateLoads, 0, candidates, null);
        return chosen;
    }

    /** A miss among equally cheap workers: the lowest one after the previous miss's, round robin. */
    private int spreadMiss(WorkerLoad[] ws, int n, double[] costs, double limit) {
        int lowest = -1;
        int after = -1;
        for (int i = 0; i < n; i++) {
            if (costs[i] > limit) {
                continue;
            }
            Worker w = ws[i].worker();
            if (lowest < 0 || w.compareTo(ws[lowest].worker()) < 0) {
                lowest = i;
            }
            if (lastMiss != null && w.compareTo(lastMiss) > 0 && (after < 0 || w.compareTo(ws[after].worker()) < 0)) {
                after = i;
            }
        }
        int pick = after >= 0 ? after : lowest;
        lastMiss = ws[pick].worker();
        return pick;
    }

    /** The cheapest worker; ties go to the one holding fewer blocks, then to the lower worker. */
    private static int lowestCost(WorkerLoad[] ws, int n, double[] costs, double limit, Request r) {
        int best = -1;
        int ties = 0;
        long bestCount = Long.MAX_VALUE;
        for (int i = 0; i < n; i++) {
            if (costs[i] > limit) {
                continue;
            }
            if (++ties == 1) {
                best = i;
                continue;
            }
            if (ties == 2) {
                bestCount = r.blockCount.applyAsLong(ws[best].worker());
            }
            long c = r.blockCount.applyAsLong(ws[i].worker());
            if (c < bestCount || c == bestCount && ws[i].worker().compareTo(ws[best].worker()) < 0) {
                bestCount = c;
                best = i;
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
        double scale = range * options.temperature();
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
