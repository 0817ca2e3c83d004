package io.kvprefix.internal.offheap;

import io.kvprefix.MatchResult;
import io.kvprefix.Worker;
import io.kvprefix.internal.MatchResults;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The read room's last step: the slots and depths a {@link MatchKernel} left in the thread's
 * {@link ReadScratch} turned into a {@link MatchResult} (docs/SPEC.md section 4), pairing a worker's
 * GPU slot with its any-tier view's when there are views (section 3.1). The facade brackets a match
 * with the reader gate and runs the kernel in its own frame, then calls {@link #report}, so a match
 * costs no call more than it did before the rooms; reads write nothing shared.
 *
 * <p>Locks: takes none; its caller is inside the reader gate.
 *
 * <p>Thread-safety: any number of threads at any time, also while events are applied.
 */
final class MatchReport {
    private static final MatchResults RESULTS = MatchResults.access();

    private final WorkerSlots slots;
    private final AtomicInteger tierViews;

    MatchReport(ChainState state) {
        this.slots = state.slots;
        this.tierViews = state.tierViews;
    }

    /** Adds the kernel's {@code n} answers in {@code s} to {@code into} (reset by the caller). */
    void report(MatchResult into, ReadScratch s, int n) {
        if (tierViews.get() == 0) {
            for (int i = 0; i < n; i++) {
                Worker w = slots.worker(s.outSlots[i]);
                if (w != null) {
                    RESULTS.add(into, w, s.outDepths[i]);
                }
            }
            return;
        }
        reportTiered(into, s, n);
    }

    /**
     * Pairs each worker's two slots (docs/SPEC.md section 3.1): a GPU slot gives the GPU depth, an
     * any-tier slot the any-tier depth; a worker whose view reports more than its GPU slot, or only
     * a view, gets both. While writes run the any-tier depth is reported as at least the GPU depth.
     */
    private void reportTiered(MatchResult into, ReadScratch s, int n) {
        for (int i = 0; i < n; i++) {
            int slot = s.outSlots[i];
            Worker w = slots.worker(slot);
            if (w != null && slots.gpuSlotOf(slot) < 0) {
                RESULTS.add(into, w, s.outDepths[i], s.outDepths[i]);
                s.resultAt[slot] = into.size();
            }
        }
        for (int i = 0; i < n; i++) {
            int slot = s.outSlots[i];
            int gpu = slots.gpuSlotOf(slot);
            Worker w = slots.worker(slot);
            if (w != null && gpu >= 0) {
                int at = s.resultAt[gpu];
                if (at > 0) {
                    RESULTS.raiseAnyTier(into, at - 1, s.outDepths[i]);
                } else {
                    RESULTS.add(into, w, 0, s.outDepths[i]);
                }
            }
        }
        for (int i = 0; i < n; i++) {
            s.resultAt[s.outSlots[i]] = 0;
        }
    }
}
