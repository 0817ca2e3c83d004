package io.kvprefix.internal.offheap;

import io.kvprefix.BlockHasher;
import io.kvprefix.MatchResult;
import io.kvprefix.Worker;
import io.kvprefix.internal.MatchResults;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The read room: a match (docs/SPEC.md section 4) walks the child table and the run table with a
 * {@link MatchKernel} and turns the slots and depths it leaves into a {@link MatchResult}, pairing
 * a worker's GPU slot with its any-tier view's when there are views (section 3.1). Reads write
 * nothing shared and allocate nothing once the thread's {@link ReadScratch} has grown.
 *
 * <p>Locks: enters the reader gate for the walk; takes no lock and waits for no writer.
 *
 * <p>Thread-safety: any number of threads at any time, also while events are applied.
 */
final class Matches {
    private static final MatchResults RESULTS = MatchResults.access();

    private final ChainState state;
    private final Generations generations;
    private final RunArena arena;
    private final MatchKernel kernel;
    private final WorkerSlots slots;
    private final AtomicInteger tierViews;
    private final int maxWorkers;
    private final ThreadLocal<ReadScratch> scratch;

    Matches(ChainState state) {
        this.state = state;
        this.generations = state.generations;
        this.arena = state.arena;
        this.kernel = state.kernel;
        this.slots = state.slots;
        this.tierViews = state.tierViews;
        this.maxWorkers = state.config.maxWorkers();
        this.scratch = state.readScratch;
    }

    /** Matches {@code localHashes[offset .. offset+length)} into {@code into}; the caller checked the ranges. */
    void match(long[] localHashes, int offset, int length, MatchResult into) {
        ReadScratch s = scratch.get();
        int token = generations.enterRead();
        try {
            state.checkOpen();
            s.ensure(length, maxWorkers);
            RESULTS.reset(into, length);
            if (length > 0) {
                report(
                        into,
                        s,
                        kernel.matchHashes(generations.children(), arena.runTable(), localHashes, offset, length, s));
            }
        } finally {
            generations.exitRead(token);
        }
    }

    /** Hashes {@code tokens[offset .. offset+length)} with {@code h} and matches them; the caller checked the ranges and seed. */
    void match(int[] tokens, int offset, int length, BlockHasher h, MatchResult into) {
        ReadScratch s = scratch.get();
        int blocks = h.blockCount(length);
        int token = generations.enterRead();
        try {
            state.checkOpen();
            s.ensure(blocks, maxWorkers);
            RESULTS.reset(into, blocks);
            if (blocks > 0) {
                report(
                        into,
                        s,
                        kernel.matchTokens(generations.children(), arena.runTable(), tokens, offset, length, h, s));
            }
        } finally {
            generations.exitRead(token);
        }
    }

    private void report(MatchResult into, ReadScratch s, int n) {
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
