package io.kvprefix.internal.offheap;

import static io.kvprefix.internal.offheap.ChainLayout.block;
import static io.kvprefix.internal.offheap.ChainLayout.entryCutoff;
import static io.kvprefix.internal.offheap.ChainLayout.entryUnreachable;
import static io.kvprefix.internal.offheap.ChainLayout.offsetOf;
import static io.kvprefix.internal.offheap.ChainLayout.runOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.MatchResult;
import io.kvprefix.Worker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The store and removal rooms on their own, over a bare {@link ChainState} (no facade; depths read
 * with the match kernel and {@link MatchReport}): what each
 * writes, read back from the records themselves. A store that continues its worker's run appends in
 * place; one that diverges inside a run branches there (the child table and the run's child list);
 * nothing else); removing a middle block makes what lies below it unreachable and storing it again
 * takes that back; the last holder leaving a run frees it and, in turn, its childless parent. Each
 * test was seen to fail against a room that breaks its rule (an append that never happens, a branch
 * not linked under its parent, a cutoff that does not shrink, a run not freed).
 */
class RoomsTest {
    private final ChainState state = ChainState.create(IndexConfig.defaults());
    private final Removals removals = new Removals(state);
    private final Stores stores = new Stores(state, removals);
    private final MatchReport report = new MatchReport(state);
    private final WriteScratch ws = new WriteScratch();
    private static final Worker A = Worker.of(1);
    private static final Worker B = Worker.of(2);

    @AfterEach
    void close() {
        state.close();
    }

    @Test
    void aStoreThatContinuesItsWorkersRunAppendsInPlace() {
        store(A, -1, new long[] {1, 2, 3}, new long[] {11, 12, 13});
        store(A, 3, new long[] {4, 5}, new long[] {14, 15});
        WorkerHoldings h = state.workers.get(A);
        int run = runOf(h.names.get(1));
        assertEquals(run, runOf(h.names.get(5)), "the continuation went to another run");
        assertEquals(4, offsetOf(h.names.get(5)));
        long a = state.arena.address(run);
        assertEquals(5, Runs.length(a));
        assertEquals(5, entryCutoff(Runs.entryOf(a, h.slot)));
        assertEquals(1, state.arena.liveRuns());
        assertEquals(5, h.distinct);
        assertEquals(5, depth(A, 11, 12, 13, 14, 15));
    }

    @Test
    void aStoreThatDivergesInsideARunBranchesThere() {
        store(A, -1, new long[] {1, 2, 3}, new long[] {11, 12, 13});
        store(B, -1, new long[] {21, 22}, new long[] {11, 12});
        store(B, 22, new long[] {23}, new long[] {99});
        WorkerHoldings b = state.workers.get(B);
        int parent = b.names.get(22);
        int child = runOf(b.names.get(23));
        int run = runOf(parent);
        assertEquals(runOf(state.workers.get(A).names.get(2)), run, "B's first blocks are not A's run");
        assertTrue(child != run);
        assertEquals(child, state.generations.children().find(parent, 99), "the branch is not in the child table");
        assertEquals(child, state.arena.links().first(run), "the branch is not in its parent's child list");
        assertEquals(offsetOf(parent) + 1, state.arena.links().attachBound(run));
        assertEquals(parent, Runs.parent(state.arena.address(child)));
        assertEquals(3, depth(B, 11, 12, 99));
        assertEquals(2, depth(A, 11, 12, 99));
    }

    @Test
    void removingAMiddleBlockHidesWhatLiesBelowUntilItIsStoredAgain() {
        store(A, -1, new long[] {1, 2, 3, 4, 5}, new long[] {11, 12, 13, 14, 15});
        WorkerHoldings h = state.workers.get(A);
        int run = runOf(h.names.get(1));
        long a = state.arena.address(run);
        assertEquals(EventStatus.OK, removals.remove(h, new long[] {3}, ws));
        assertEquals(2, entryCutoff(Runs.entryOf(a, h.slot)));
        assertEquals(2, entryUnreachable(Runs.entryOf(a, h.slot)));
        assertTrue(h.isUnreachable(block(run, 3)) && h.isUnreachable(block(run, 4)));
        assertEquals(4, h.distinct);
        assertEquals(2, depth(A, 11, 12, 13, 14, 15));
        store(A, 2, new long[] {30}, new long[] {13});
        assertEquals(5, entryCutoff(Runs.entryOf(a, h.slot)));
        assertEquals(0, entryUnreachable(Runs.entryOf(a, h.slot)));
        assertTrue(!h.hasUnreachable());
        assertEquals(5, depth(A, 11, 12, 13, 14, 15));
    }

    @Test
    void theLastHolderLeavingARunFreesItAndItsChildlessParent() {
        store(A, -1, new long[] {1, 2, 3}, new long[] {11, 12, 13});
        store(A, 2, new long[] {4}, new long[] {99}); // a branch hanging from block 2
        WorkerHoldings h = state.workers.get(A);
        int parent = h.names.get(2);
        int child = runOf(h.names.get(4));
        assertEquals(2, state.arena.liveRuns());
        assertEquals(EventStatus.OK, removals.remove(h, new long[] {4}, ws));
        assertEquals(-1, state.generations.children().find(parent, 99), "the dead run is still in the child table");
        assertEquals(-1, state.arena.links().first(runOf(parent)));
        state.generations.reclaimer().flush();
        assertEquals(1, state.arena.liveRuns(), "the dead run was not recycled");
        assertEquals(0, state.arena.address(child));
        assertEquals(3, removals.clear(h, ws));
        assertEquals(-1, state.generations.children().find(-1, 11), "the cleared run is still in the child table");
        state.generations.reclaimer().flush();
        assertEquals(0, state.arena.liveRuns());
    }

    private void store(Worker w, long parentName, long[] names, long[] locals) {
        WorkerHoldings h = state.workers.get(w);
        int parent = parentName < 0 ? -1 : h.names.get(parentName);
        assertEquals(EventStatus.OK, stores.storeAfter(h, w, parent, names, locals, names.length, ws));
    }

    private int depth(Worker w, long... locals) {
        ReadScratch s = new ReadScratch();
        s.ensure(locals.length, state.config.maxWorkers());
        int n = state.kernel.matchHashes(
                state.generations.children(), state.arena.runTable(), locals, 0, locals.length, s);
        MatchResult r = new MatchResult();
        report.report(r, s, n);
        return r.depthOf(w);
    }
}
