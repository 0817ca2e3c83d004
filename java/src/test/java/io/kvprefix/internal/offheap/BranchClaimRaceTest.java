package io.kvprefix.internal.offheap;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.MatchResult;
import io.kvprefix.Worker;
import io.kvprefix.testing.TestScale;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The child record's claim on real threads and real off-heap records (the model checker does not
 * see off-heap memory, so this race is checked by repetition): several workers branch off one shared
 * run at the same block with the same hash at once, without the parent's lock
 * (java/src/main/java/io/kvprefix/internal/offheap/package-info.java, the protocol of a branch).
 * Exactly one branch run may come of it, every worker must reach through it, and the parent's child
 * list must hold it once. Seen to fail (four runs) with a writer that loses the claim keeping its
 * own run. More rounds with {@code -Dkvprefix.test.scale=long}.
 */
class BranchClaimRaceTest {
    private static final int WRITERS = 3;

    @Test
    void workersBranchingAtOnceAtOneKeyShareOneRun() throws Exception {
        int rounds = TestScale.iterations(300, 5_000);
        for (int round = 0; round < rounds; round++) {
            oneRound(round);
        }
    }

    private static void oneRound(int round) throws Exception {
        ChainState state = ChainState.create(IndexConfig.defaults());
        try {
            Removals removals = new Removals(state);
            Stores stores = new Stores(state, removals);
            WriteScratch ws0 = new WriteScratch();
            Worker owner = Worker.of(100);
            store(stores, state, owner, -1, new long[] {1, 2, 3, 4}, new long[] {11, 12, 13, 14}, ws0);
            Worker[] ws = new Worker[WRITERS];
            for (int t = 0; t < WRITERS; t++) {
                ws[t] = Worker.of(t);
                store(stores, state, ws[t], -1, new long[] {t * 10 + 1, t * 10 + 2}, new long[] {11, 12}, ws0);
            }
            CyclicBarrier start = new CyclicBarrier(WRITERS);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread[] threads = new Thread[WRITERS];
            for (int t = 0; t < WRITERS; t++) {
                int me = t;
                threads[t] = new Thread(() -> {
                    try {
                        WriteScratch s = new WriteScratch();
                        start.await();
                        store(
                                stores,
                                state,
                                ws[me],
                                me * 10 + 2,
                                new long[] {me * 10 + 3, me * 10 + 4},
                                new long[] {77, 78},
                                s);
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
                threads[t].start();
            }
            for (Thread th : threads) {
                th.join();
            }
            if (failure.get() != null) {
                throw new AssertionError("round " + round, failure.get());
            }
            assertEquals(2, state.arena.liveRuns(), "round " + round + ": the branch was made more than once");
            for (Worker w : ws) {
                assertEquals(4, depth(state, w, 11, 12, 77, 78), "round " + round + ": " + w);
            }
            int run = ChainLayout.runOf(state.workers.get(owner).names.get(2));
            RunLinks links = state.arena.links();
            int children = 0;
            for (int c = links.first(run); c >= 0; c = links.next(c)) {
                children++;
            }
            assertEquals(1, children, "round " + round + ": the shared run's child list");
        } finally {
            state.close();
        }
    }

    private static void store(
            Stores stores, ChainState state, Worker w, long parentName, long[] names, long[] locals, WriteScratch s) {
        WorkerHoldings h = state.workers.get(w);
        int parent = parentName < 0 ? -1 : h.names.get(parentName);
        assertEquals(EventStatus.OK, stores.storeAfter(h, w, parent, names, locals, names.length, s));
    }

    private static int depth(ChainState state, Worker w, long... locals) {
        ReadScratch s = new ReadScratch();
        s.ensure(locals.length, state.config.maxWorkers());
        int n = state.kernel.matchHashes(
                state.generations.children(), state.arena.runTable(), locals, 0, locals.length, s);
        MatchResult r = new MatchResult();
        new MatchReport(state).report(r, s, n);
        return r.depthOf(w);
    }
}
