package io.kvprefix.internal.router;

/**
 * kvprefix's policy ({@code kvprefix-ttft}), exactly as docs/SPEC.md section 6.4 states it: the
 * worker with the least estimated time to first token ({@code backlog_w + uncached_w}, in tokens,
 * times its slowness), with a charge ({@code lambda}) for the work a worse cache choice adds once the
 * fleet is queueing, so a loaded fleet keeps its cache hits (whose lost work would delay everything
 * queued after them) instead of chasing the shortest queue. Progress is credited up to
 * {@value #MAX_PROGRESS} of the oldest pending prefill, at the fleet's fitted speed
 * ({@link PrefillSpeed}); slowness counts as 1 within a factor {@value #SNAP} or below
 * {@value #WORKER_SAMPLES} samples.
 *
 * <p>Thread-safety: not thread-safe; {@link LoadTable} calls it only under its lock.
 */
final class TtftEstimate implements Selector {
    /** The largest share of its oldest pending prefill a worker is credited with having computed. */
    static final double MAX_PROGRESS = 0.95;
    /** Speed ratios within this factor of the fleet's count as equal. */
    static final double SNAP = 1.25;
    /** Samples a worker's own fit needs before its slowness counts. */
    static final double WORKER_SAMPLES = 20;

    private final Options options;
    private boolean missed;
    private double[] backlogs = new double[16];
    private double[] slownesses = new double[16];

    TtftEstimate(Options options) {
        this.options = options;
    }

    @Override
    public boolean missed() {
        return missed;
    }

    @Override
    public boolean tracksPrefills() {
        return true;
    }

    /** {@link #choose} draws nothing and moves nothing: the preview is the choice. */
    @Override
    public int preview(WorkerLoad[] ws, int n, double[] costs, Request r) {
        return choose(ws, n, costs, r);
    }

    @Override
    public int minimumDepth(Request r) {
        return options.minimumDepth(r.blockSize);
    }

    @Override
    public int choose(WorkerLoad[] ws, int n, double[] costs, Request r) {
        if (backlogs.length < n) {
            backlogs = new double[Math.max(n, backlogs.length * 2)];
            slownesses = new double[backlogs.length];
        }
        int maxDepth = 0;
        double fleet = r.fleet.tokensPerNano();
        double total = 0;
        double bestDepth = 0;
        for (int i = 0; i < n; i++) {
            WorkerLoad w = ws[i];
            maxDepth = Math.max(maxDepth, Math.max(w.depth, w.anyDepth));
            bestDepth = Math.max(bestDepth, options.creditedDepth(w));
            double s = slowness(w, fleet);
            double b = Math.max(0, w.prefillTokens() - progress(w, r.now, fleet / s));
            slownesses[i] = s;
            backlogs[i] = b;
            total += b;
        }
        boolean miss = maxDepth < options.minimumDepth(r.blockSize);
        missed = miss;
        double least = uncached(r, miss ? 0 : bestDepth);
        double lambda = Math.max(0, total / n / Math.max(1, r.isl) - 1);
        double min = Double.POSITIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            WorkerLoad w = ws[i];
            double u = uncached(r, miss ? 0 : options.creditedDepth(w));
            double c = (backlogs[i] + u + lambda * (u - least)) * slownesses[i] / w.weight();
            costs[i] = c;
            min = Math.min(min, c);
        }
        double limit = min + DynamoCost.TIE_TOLERANCE * Math.max(1.0, Math.abs(min));
        int best = -1;
        for (int i = 0; i < n; i++) {
            if (costs[i] <= limit && (best < 0 || fewerRouted(ws[i], ws[best]))) {
                best = i;
            }
        }
        return best;
    }

    private static double uncached(Request r, double depth) {
        return Math.max(0, (double) r.isl - depth * r.blockSize);
    }

    private static boolean fewerRouted(WorkerLoad a, WorkerLoad b) {
        if (a.routed() != b.routed()) {
            return a.routed() < b.routed();
        }
        return a.worker().compareTo(b.worker()) < 0;
    }

    /** The fleet's speed over the worker's: 1 unless the worker is known to differ by more than {@link #SNAP}. */
    static double slowness(WorkerLoad w, double fleetTokensPerNano) {
        if (fleetTokensPerNano <= 0 || w.speed.samples() < WORKER_SAMPLES) {
            return 1;
        }
        double own = w.speed.tokensPerNano();
        if (own <= 0) {
            return 1;
        }
        double s = fleetTokensPerNano / own;
        return s > SNAP || s < 1 / SNAP ? s : 1;
    }

    /** Tokens of {@code w}'s oldest pending prefill it has computed by {@code now}, estimated. */
    static double progress(WorkerLoad w, long now, double tokensPerNano) {
        PendingPrefill head = w.oldest;
        if (head == null || tokensPerNano <= 0) {
            return 0;
        }
        long start = Math.max(head.routedAt, w.lastPrefillEnd);
        double done = Math.max(0, now - start) * tokensPerNano;
        return Math.min(done, MAX_PROGRESS * head.tokens);
    }
}
