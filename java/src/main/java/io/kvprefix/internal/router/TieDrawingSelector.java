package io.kvprefix.internal.router;

import java.util.SplittableRandom;

/**
 * A peer policy whose decision and preview are one selection, differing only in whether ties are
 * drawn at random (a decision) or the first is taken (a preview, which must not use up the random
 * stream a later decision draws from).
 *
 * <p>Thread-safety: not thread-safe; {@link LoadTable} calls it only under its lock.
 */
abstract class TieDrawingSelector implements Selector {
    final SplittableRandom random;
    /** Whether the last selection found no worker holding any of the request. */
    boolean missed;

    TieDrawingSelector(long seed) {
        this.random = new SplittableRandom(seed);
    }

    @Override
    public final boolean missed() {
        return missed;
    }

    @Override
    public final int choose(WorkerLoad[] ws, int n, double[] costs, Request r) {
        return select(ws, n, costs, r, true);
    }

    @Override
    public final int preview(WorkerLoad[] ws, int n, double[] costs, Request r) {
        return select(ws, n, costs, r, false);
    }

    /** The selection: fills {@code costs}, sets {@link #missed}, returns the chosen index; {@code draw} as above. */
    abstract int select(WorkerLoad[] ws, int n, double[] costs, Request r, boolean draw);
}
