package io.kvprefix.internal.router;

import io.kvprefix.Worker;

/**
 * The cache-blind baseline ({@code round-robin}), as docs/SPEC.md section 6.6 states it: each decision
 * takes the registered worker after the previous decision's in worker order (unsigned, worker id
 * first), wrapping around to the lowest. The match is still made, so the decision reports the chosen
 * worker's depth, but neither depth nor load changes the choice; the chosen worker's cost is 0, every
 * other's 1. Workers joining or leaving keep the turn where it is.
 *
 * <p>Thread-safety: not thread-safe; {@link LoadTable} calls it only under its lock (the cursor is its
 * mutable state).
 */
final class RoundRobin implements Selector {
    /** The worker the last decision chose (null before the first). */
    private Worker last;

    @Override
    public int choose(WorkerLoad[] ws, int n, double[] costs, Request r) {
        int pick = preview(ws, n, costs, r);
        last = ws[pick].worker();
        return pick;
    }

    @Override
    public int preview(WorkerLoad[] ws, int n, double[] costs, Request r) {
        int lowest = 0;
        int after = -1;
        for (int i = 0; i < n; i++) {
            Worker w = ws[i].worker();
            if (w.compareTo(ws[lowest].worker()) < 0) {
                lowest = i;
            }
            if (last != null && w.compareTo(last) > 0 && (after < 0 || w.compareTo(ws[after].worker()) < 0)) {
                after = i;
            }
        }
        int pick = after >= 0 ? after : lowest;
        for (int i = 0; i < n; i++) {
            costs[i] = i == pick ? 0 : 1;
        }
        return pick;
    }

    /** Never: a round-robin choice does not look at the cache, so it is never a miss of it either. */
    @Override
    public boolean missed() {
        return false;
    }

    @Override
    public int minimumDepth(Request r) {
        return 1;
    }
}
