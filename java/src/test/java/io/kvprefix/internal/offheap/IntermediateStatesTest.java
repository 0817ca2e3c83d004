package io.kvprefix.internal.offheap;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.Implementation;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.Worker;
import io.kvprefix.testing.TestScale;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * docs/SPEC.md section 4's concurrency rule, checked at every step instead of by chance: a match that
 * overlaps an event may see any of the event's intermediate states, so each of them must give every
 * worker a depth between its depth before and after the event. A test hook runs a match after every
 * single bit change while events with renames (rule 4), removes, re-stores and clears are applied.
 */
class IntermediateStatesTest {

    @Test
    void everyIntermediateStateLiesBetweenTheDepthsBeforeAndAfterTheEvent() {
        long seed = TestScale.seed();
        SplittableRandom r = new SplittableRandom(seed);
        int rounds = TestScale.iterations(30, 300);
        long checked = 0;
        for (int round = 0; round < rounds; round++) {
            OffHeapConcurrencyTest.Workload wl = round % 2 == 0
                    ? OffHeapConcurrencyTest.renames(r, 3, 200)
                    : OffHeapConcurrencyTest.mixed(r, 3, 200);
            Implementation impl = round % 4 < 2 ? Implementation.PORTABLE : Implementation.NATIVE;
            IndexConfig cfg = IndexConfig.builder().implementation(impl).build();
            List<long[]> queries = wl.queries();
            try (OffHeapPrefixIndex ix = new OffHeapPrefixIndex(cfg)) {
                MatchResult m = new MatchResult();
                List<int[]> seen = new ArrayList<>();
                Worker[] current = new Worker[1];
                ix.watch.observer = () -> {
                    int[] d = new int[queries.size()];
                    for (int q = 0; q < d.length; q++) {
                        ix.match(queries.get(q), 0, queries.get(q).length, m);
                        d[q] = m.depthOf(current[0]);
                    }
                    seen.add(d);
                };
                for (Map.Entry<Worker, List<KvEvent>> e : wl.perWorker().entrySet()) {
                    current[0] = e.getKey();
                    for (KvEvent ev : e.getValue()) {
                        int[] before = depths(ix, queries, e.getKey(), m);
                        seen.clear();
                        ix.apply(ev);
                        int[] after = depths(ix, queries, e.getKey(), m);
                        for (int[] d : seen) {
                            for (int q = 0; q < d.length; q++) {
                                int lo = Math.min(before[q], after[q]), hi = Math.max(before[q], after[q]);
                                if (d[q] < lo || d[q] > hi) {
                                    throw new AssertionError(cfg + ", " + TestScale.replay(seed) + ": during " + ev
                                            + " a match saw depth " + d[q] + " for query " + q + ", but the worker had "
                                            + before[q] + " before and " + after[q] + " after");
                                }
                                checked++;
                            }
                        }
                    }
                }
                ix.watch.observer = null;
            }
        }
        assertTrue(checked > 1000, "too few intermediate states were checked: " + checked);
    }

    private static int[] depths(OffHeapPrefixIndex ix, List<long[]> queries, Worker w, MatchResult m) {
        int[] d = new int[queries.size()];
        for (int q = 0; q < d.length; q++) {
            ix.match(queries.get(q), 0, queries.get(q).length, m);
            d[q] = m.depthOf(w);
        }
        return d;
    }
}
