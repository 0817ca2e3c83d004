package io.kvprefix.internal.router;

/**
 * SGLang's model gateway {@code cache_aware} policy ({@code sglang-cache-aware}), exactly as
 * docs/SPEC.md section 6.2 states it: {@code smg-project/smg} {@code model_gateway/src/policies/cache_aware.rs}
 * (at {@code f8daa883}) with the gateway's CLI defaults ({@code model_gateway/src/main.rs}): cache
 * threshold {@value #CACHE_THRESHOLD}, absolute spill threshold {@value #BALANCE_ABS} requests,
 * relative {@value #BALANCE_REL}, at most {@value #MATCHED_TENANTS_CAP} candidates in tree mode.
 * A worker's load is its in-flight requests; costs are the loads.
 *
 * <p>Thread-safety: not thread-safe; {@link LoadTable} calls it only under its lock.
 */
final class SglangCacheAware extends TieDrawingSelector {
    static final double CACHE_THRESHOLD = 0.3;
    static final int BALANCE_ABS = 64;
    static final double BALANCE_REL = 1.5;
    static final int MATCHED_TENANTS_CAP = 8;

    private int[] capped = new int[MATCHED_TENANTS_CAP];

    SglangCacheAware(long seed) {
        super(seed);
    }

    /** Event mode: any overlap; tree mode: the least depth whose tokens are above the threshold. */
    @Override
    public int minimumDepth(Request r) {
        return r.eventFed ? 1 : Math.max(1, (int) Math.floor(CACHE_THRESHOLD * r.isl / r.blockSize) + 1);
    }

    /** The choice; with {@code draw} false, the first of tied candidates instead of a uniform draw. */
    @Override
    int select(WorkerLoad[] ws, int n, double[] costs, Request r, boolean draw) {
        long sum = 0;
        int minLoad = 0;
        int maxDepth = 0;
        for (int i = 0; i < n; i++) {
            WorkerLoad w = ws[i];
            costs[i] = w.requests();
            sum += w.requests();
            maxDepth = Math.max(maxDepth, overlap(w));
            if (i > 0 && lessLoaded(w, ws[minLoad])) {
                minLoad = i;
            }
        }
        double avg = (double) sum / n;
        int pick;
        if (r.eventFed) {
            pick = maxDepth > 0 ? deepestThenLeastLoaded(ws, n, draw) : -1;
        } else {
            boolean hit = (double) maxDepth * r.blockSize / Math.max(1, r.isl) > CACHE_THRESHOLD;
            pick = hit ? leastLoadedAtDepth(ws, n, maxDepth, draw) : -1;
        }
        missed = pick < 0;
        if (pick < 0) {
            return minLoad;
        }
        double load = ws[pick].requests();
        return load > avg * BALANCE_REL && load > avg + BALANCE_ABS ? minLoad : pick;
    }

    private static boolean lessLoaded(WorkerLoad a, WorkerLoad b) {
        if (a.requests() != b.requests()) {
            return a.requests() < b.requests();
        }
        if (a.routed() != b.routed()) {
            return a.routed() < b.routed();
        }
        return a.worker().compareTo(b.worker()) < 0;
    }

    /** Max depth, then min load, then uniform among exact ties (reservoir sampling). */
    private int deepestThenLeastLoaded(WorkerLoad[] ws, int n, boolean draw) {
        int best = -1;
        int ties = 0;
        for (int i = 0; i < n; i++) {
            WorkerLoad w = ws[i];
            if (overlap(w) <= 0) {
                continue;
            }
            int c = best < 0 ? -1 : compare(w, ws[best]);
            if (c < 0) {
                best = i;
                ties = 1;
            } else if (c == 0 && draw && random.nextInt(++ties) == 0) {
                best = i;
            }
        }
        return best;
    }

    private static int compare(WorkerLoad a, WorkerLoad b) {
        if (overlap(a) != overlap(b)) {
            return overlap(a) > overlap(b) ? -1 : 1;
        }
        return Long.compare(a.requests(), b.requests());
    }

    /** Among at most {@link #MATCHED_TENANTS_CAP} workers at {@code depth} (in map order), the least loaded. */
    private int leastLoadedAtDepth(WorkerLoad[] ws, int n, int depth, boolean draw) {
        int k = 0;
        for (int i = 0; i < n; i++) {
            if (overlap(ws[i]) != depth) {
                continue;
            }
            long key = mapOrder(ws[i]);
            int at = k < MATCHED_TENANTS_CAP ? k++ : MATCHED_TENANTS_CAP;
            while (at > 0 && mapOrder(ws[capped[at - 1]]) > key) {
                if (at < MATCHED_TENANTS_CAP) {
                    capped[at] = capped[at - 1];
                }
                at--;
            }
            if (at < MATCHED_TENANTS_CAP) {
                capped[at] = i;
            }
        }
        int best = -1;
        int ties = 0;
        for (int j = 0; j < k; j++) {
            int i = capped[j];
            int c = best < 0 ? -1 : Long.compare(ws[i].requests(), ws[best].requests());
            if (c < 0) {
                best = i;
                ties = 1;
            } else if (c == 0 && draw && random.nextInt(++ties) == 0) {
                best = i;
            }
        }
        return best;
    }

    /** The worker's overlap: SMG's indexer keeps no tiers, so a block on any tier counts (docs/SPEC.md section 3.1). */
    private static int overlap(WorkerLoad w) {
        return Math.max(w.depth, w.anyDepth);
    }

    /** A fixed pseudo-random order of workers, standing in for the order of SMG's tenant map. */
    private static long mapOrder(WorkerLoad w) {
        long z = w.worker().workerId() * 0x9E3779B97F4A7C15L + w.worker().dpRank();
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return (z ^ (z >>> 31)) >>> 1;
    }
}
