package io.kvprefix.internal.router;

/**
 * kvprefix's policy ({@code kvprefix-ttft}, docs/SPEC.md section 6.4): the worker with the least
 * estimated time to first token, with a charge for the work a worse cache choice adds once the fleet
 * is queueing.
 *
 * <p>For a request of {@code isl} tokens and a worker {@code w} with depth {@code d_w} (0 below the
 * minimum match):
 * <pre>
 *   d_w        = gpu_w + lowerTierCredit * (any_w - gpu_w)   (GPU and any-tier depths, docs/SPEC.md section 3.1)
 *   uncached_w = isl - d_w * bs                   least = min over workers of uncached_w
 *   backlog_w  = P_w - progress_w                 (P_w: uncached tokens of w's prefills not yet finished)
 *   queued     = mean of backlog_w / isl          lambda = max(0, queued - 1)
 *   cost_w     = (backlog_w + uncached_w + lambda * (uncached_w - least)) * slowness_w / k_w
 * </pre>
 * {@code backlog_w + uncached_w} is the request's own wait and prefill on {@code w}, in tokens.
 * {@code progress_w} is how far the worker has got into its oldest pending prefill: the time since it
 * started (when it was routed, or when the prefill before it finished, whichever is later) times the
 * worker's prefill speed, at most {@value #MAX_PROGRESS} of that prefill's tokens. The speed comes
 * from the fleet's fitted prefill line ({@link PrefillSpeed}); {@code slowness_w} is the fleet's speed
 * over the worker's own, counted as 1 unless it is outside {@code [1/}{@value #SNAP}{@code ,}
 * {@value #SNAP}{@code ]} (so equal workers stay exactly equal) or the worker has fewer than
 * {@value #WORKER_SAMPLES} samples. The {@code lambda} term charges the tokens a worker would compute
 * beyond the best-cached worker's: nothing while the average worker is less than one such request
 * behind, then more the deeper the fleet's queues, so a loaded fleet keeps its cache hits (whose lost
 * work would delay everything queued after them) instead of chasing the shortest queue. The lowest
 * cost wins; costs within a relative 1e-9 are ties, broken by the worker that was routed fewer
 * requests since it joined, then by the lower worker.
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
