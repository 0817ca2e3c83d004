package io.kvprefix;

import static io.kvprefix.RouterTestSupport.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Workers joining and leaving in any order: the router's registry (a dense array with swap-removal and
 * a hash map) against a sorted-set oracle, and membership changes that stay O(1) on a large fleet.
 */
class RouterMembershipTest {
    @Test
    void randomJoinsAndLeavesMatchASortedSet() {
        long seed = new SplittableRandom().nextLong();
        SplittableRandom rnd = new SplittableRandom(seed);
        for (RoutingPolicy p : RoutingPolicy.values()) {
            try (PrefixIndex index = RouterTestSupport.heapIndex();
                    Router r = Router.builder().index(index).policy(p).build()) {
                TreeSet<Worker> oracle = new TreeSet<>();
                int[] a = tokens(0, 16);
                for (int step = 0; step < 3_000; step++) {
                    Worker w = Worker.of(rnd.nextInt(40), rnd.nextInt(2));
                    if (rnd.nextInt(3) == 0) {
                        assertEquals(oracle.remove(w), r.removeWorker(w), "seed " + seed + " step " + step);
                    } else {
                        assertEquals(oracle.add(w), r.addWorker(w), "seed " + seed + " step " + step);
                    }
                    if (!oracle.isEmpty()) {
                        RoutingDecision d = r.route(a);
                        assertTrue(oracle.contains(d.worker()), p + " routed to " + d.worker() + ", seed " + seed);
                        d.finished();
                    }
                }
                assertEquals(new ArrayList<>(oracle), r.workers(), p + ", seed " + seed);
            }
        }
    }

    @Test
    void aLargeFleetJoinsAndLeavesInLinearTime() {
        int n = 200_000; // at the old re-sort on every join this took hours
        try (PrefixIndex index = RouterTestSupport.heapIndex();
                Router r = Router.builder().index(index).build()) {
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                r.addWorker(Worker.of(i));
            }
            for (int i = 0; i < n; i += 2) {
                r.removeWorker(Worker.of(i));
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            assertTrue(seconds < 20, n + " joins and " + n / 2 + " leaves took " + seconds + " s");
            List<Worker> ws = r.workers();
            assertEquals(n / 2, ws.size());
            assertEquals(Worker.of(1), ws.get(0));
            assertEquals(Worker.of(n - 1), ws.get(ws.size() - 1));
            RoutingDecision d = r.route(tokens(0, 16));
            assertEquals(Worker.of(1), d.worker()); // all idle and equal: the lowest
        }
    }
}
