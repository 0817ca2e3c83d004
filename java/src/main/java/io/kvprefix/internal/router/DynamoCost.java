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

    private final Options options;
    private final SplittableRandom random;
    private Worker lastMiss;
    private boolean missed;
    private double[] weights = new double[16];

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
            double d = miss ? 0 : options.creditedDepth(w);
            double prefillBlocks = ((double) r.isl - d * r.blockSize + (double) w.prefillTokens()) / r.blockSize;
            double decodeBlocks = (double) (w.decodeBlocks() + requestBlocks);
            costs[i] = (options.overlapWeight() * prefillBlocks + decodeBlocks) / w.weight();
        }
        return miss;
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
