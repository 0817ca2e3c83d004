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
    private WorkerLoad[] kept = new WorkerLoad[16];
    private double lastCost;

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
            double b = backlog(w, r, fleet, s);
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
            double c = cost(ws[i], backlogs[i], slownesses[i], lambda, least, r, miss);
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

    /** {@code w}'s estimate: the one formula both ways of deciding compute. */
    private double cost(
            WorkerLoad w, double backlog, double slowness, double lambda, double least, Request r, boolean miss) {
        double u = uncached(r, miss ? 0 : options.creditedDepth(w));
        return (backlog + u + lambda * (u - least)) * slowness / w.weight();
    }

    /** {@code w}'s backlog less the progress credited to its oldest pending prefill. */
    private static double backlog(WorkerLoad w, Request r, double fleet, double slowness) {
        return Math.max(0, w.prefillTokens() - progress(w, r.now, fleet / slowness));
    }

    /**
     * True if {@code w}'s estimate is the same for every decision until its own load or speed changes:
     * nothing pending (backlog 0) and slowness 1 whatever the fleet's speed (too few samples, or no
     * fitted speed). The table keeps such workers in {@link LoadOrder} and visits the others.
     */
    static boolean plain(WorkerLoad w) {
        return w.prefillTokens() == 0
                && w.oldest == null
                && (w.speed.samples() < WORKER_SAMPLES || w.speed.tokensPerNano() <= 0);
    }

    /** The cost of the worker the last {@link #chooseOrdered} chose. */
    double lastCost() {
        return lastCost;
    }

    /**
     * {@link #choose} without visiting every worker (docs/SPEC.md section 6.5): the workers whose bit is
     * set in {@code visit} (those not {@link #plain}), in table order, as {@link #choose} sums their
     * backlogs; the {@code m} matched ones; and of each weight's heap of plain workers in
     * {@code order} the first unmatched one, which every other unmatched plain worker of that weight
     * ties with and loses to on the tie-break (more requests routed, or a higher worker). The same
     * choice and cost as {@link #choose}.
     */
    WorkerLoad chooseOrdered(
            WorkerLoad[] ws, int n, long[] visit, WorkerLoad[] matched, int m, LoadOrder order, Request r) {
        int maxDepth = 0;
        double bestDepth = 0;
        for (int i = 0; i < m; i++) {
            WorkerLoad w = matched[i];
            maxDepth = Math.max(maxDepth, Math.max(w.depth, w.anyDepth));
            bestDepth = Math.max(bestDepth, options.creditedDepth(w));
        }
        double fleet = r.fleet.tokensPerNano();
        double total = 0;
        int k = 0;
        for (int word = 0, words = (n + 63) >>> 6; word < words; word++) {
            for (long bits = visit[word]; bits != 0; bits &= bits - 1) {
                WorkerLoad w = ws[(word << 6) + Long.numberOfTrailingZeros(bits)];
                double s = slowness(w, fleet);
                double b = backlog(w, r, fleet, s);
                k = keep(k, w, b, s);
                total += b;
            }
        }
        for (int i = 0; i < m; i++) {
            WorkerLoad w = matched[i];
            if ((visit[w.slot >>> 6] & (1L << w.slot)) == 0) {
                double s = slowness(w, fleet);
                k = keep(k, w, backlog(w, r, fleet, s), s);
            }
        }
        for (int h = 0; h < order.heapCount(); h++) {
            order.startWalk(order.heap(h));
            WorkerLoad w = order.next();
            while (w != null && w.matched) {
                w = order.next();
            }
            if (w != null) {
                double s = slowness(w, fleet);
                k = keep(k, w, backlog(w, r, fleet, s), s);
            }
        }
        boolean miss = maxDepth < options.minimumDepth(r.blockSize);
        missed = miss;
        double least = uncached(r, miss ? 0 : bestDepth);
        double lambda = Math.max(0, total / n / Math.max(1, r.isl) - 1);
        double min = Double.POSITIVE_INFINITY;
        for (int i = 0; i < k; i++) {
            backlogs[i] = cost(kept[i], backlogs[i], slownesses[i], lambda, least, r, miss);
            min = Math.min(min, backlogs[i]);
        }
        double limit = min + DynamoCost.TIE_TOLERANCE * Math.max(1.0, Math.abs(min));
        int best = -1;
        for (int i = 0; i < k; i++) {
            if (backlogs[i] <= limit && (best < 0 || fewerRouted(kept[i], kept[best]))) {
                best = i;
            }
        }
        lastCost = backlogs[best];
        WorkerLoad chosen = kept[best];
        java.util.Arrays.fill(kept, 0, k, null);
        return chosen;
    }

    /** Keeps a candidate of {@link #chooseOrdered} with its backlog and slowness at position {@code k}. */
    private int keep(int k, WorkerLoad w, double backlog, double slowness) {
        if (k == kept.length) {
            kept = java.util.Arrays.copyOf(kept, k * 2);
        }
        if (k >= backlogs.length) {
            backlogs = java.util.Arrays.copyOf(backlogs, Math.max(k + 1, backlogs.length * 2));
            slownesses = java.util.Arrays.copyOf(slownesses, backlogs.length);
        }
        kept[k] = w;
        backlogs[k] = backlog;
        slownesses[k] = slowness;
        return k + 1;
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
