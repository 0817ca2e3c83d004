package io.kvprefix;

import static io.kvprefix.RouterTestSupport.store;
import static io.kvprefix.RouterTestSupport.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Routing among a subset of the members (a gateway's subset hint, {@link Router#route(int[], int, int,
 * BlockHasher, java.util.function.Predicate)}): every policy picks only allowed workers, and a
 * deterministic policy picks exactly what a router whose only members are the subset picks, load
 * included, request after request.
 */
class RouterAmongTest {
    @Test
    void everyPolicyPicksOnlyAmongTheAllowedWorkers() {
        long seed = new SplittableRandom().nextLong();
        SplittableRandom rnd = new SplittableRandom(seed);
        for (RoutingPolicy p : RoutingPolicy.values()) {
            try (PrefixIndex index = RouterTestSupport.heapIndex();
                    Router r = Router.builder().index(index).policy(p).build()) {
                for (int w = 1; w <= 6; w++) {
                    r.addWorker(Worker.of(w));
                    store(index, Worker.of(w), tokens(w * 100, 4 * w));
                }
                for (int step = 0; step < 300; step++) {
                    Set<Worker> allowed = new HashSet<>();
                    allowed.add(Worker.of(1 + rnd.nextInt(6)));
                    allowed.add(Worker.of(1 + rnd.nextInt(6)));
                    int[] t = tokens((1 + rnd.nextInt(6)) * 100, 24);
                    RoutingDecision d = r.route(t, 0, t.length, index.hasher(), allowed::contains);
                    assertTrue(allowed.contains(d.worker()), p + " routed to " + d.worker() + ", seed " + seed);
                    if (rnd.nextBoolean()) {
                        d.finished();
                    }
                }
            }
        }
    }

    @Test
    void aSubsetDecidesAsARouterOfThoseWorkersAlone() {
        for (RoutingPolicy p : List.of(RoutingPolicy.DYNAMO_COST, RoutingPolicy.KVPREFIX_TTFT)) {
            try (PrefixIndex index = RouterTestSupport.heapIndex();
                    Router all = Router.builder().index(index).policy(p).build();
                    Router only = Router.builder().index(index).policy(p).build()) {
                Set<Worker> allowed = Set.of(Worker.of(2), Worker.of(4), Worker.of(5));
                for (int w = 1; w <= 6; w++) {
                    all.addWorker(Worker.of(w));
                    if (allowed.contains(Worker.of(w))) {
                        only.addWorker(Worker.of(w));
                    }
                    store(index, Worker.of(w), tokens(1000 + w * 8, 16 + 4 * w));
                }
                List<Worker> a = new ArrayList<>();
                List<Worker> b = new ArrayList<>();
                for (int i = 0; i < 40; i++) {
                    int[] t = tokens(1000 + (i % 7) * 8, 40);
                    a.add(all.route(t, 0, t.length, index.hasher(), allowed::contains)
                            .worker());
                    b.add(only.route(t).worker());
                }
                assertEquals(b, a, p.policyName());
                assertTrue(Set.copyOf(a).size() > 1, "the load moved the choice: " + a);
            }
        }
    }

    @Test
    void noAllowedMemberIsRefused() {
        try (PrefixIndex index = RouterTestSupport.heapIndex();
                Router r = Router.builder().index(index).worker(Worker.of(1)).build()) {
            IllegalStateException e = assertThrows(
                    IllegalStateException.class, () -> r.route(new long[0], 8, w -> w.equals(Worker.of(9))));
            assertTrue(e.getMessage().contains("allowed"), e.getMessage());
        }
    }
}
