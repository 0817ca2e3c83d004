package io.kvprefix;

import static io.kvprefix.RouterTestSupport.W1;
import static io.kvprefix.RouterTestSupport.W2;
import static io.kvprefix.RouterTestSupport.W3;
import static io.kvprefix.RouterTestSupport.heapIndex;
import static io.kvprefix.RouterTestSupport.prefix;
import static io.kvprefix.RouterTestSupport.store;
import static io.kvprefix.RouterTestSupport.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The cache-blind baseline (docs/SPEC.md section 6.6): the next worker in worker order whatever the
 * index holds and whatever the load, the match still reported, and the turn kept across joins and
 * leaves.
 */
class RouterRoundRobinTest {
    private final PrefixIndex index = heapIndex();
    private final int[] a = tokens(0, 16);

    @AfterEach
    void close() {
        index.close();
    }

    private Router roundRobin() {
        // registered out of order: the turn is in worker order, not registration order
        return Router.builder()
                .index(index)
                .policy("round-robin")
                .worker(W3)
                .worker(W1)
                .worker(W2)
                .build();
    }

    @Test
    void takesEachWorkerInTurnWhateverIsCachedAndReportsTheDepth() {
        store(index, W2, prefix(index, a, 3));
        try (Router r = roundRobin()) {
            List<Worker> chosen = new ArrayList<>();
            List<Integer> depths = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                RoutingDecision d = r.route(a); // never finished: load must not change the turn either
                chosen.add(d.worker());
                depths.add(d.overlapBlocks());
            }
            assertEquals(List.of(W1, W2, W3, W1, W2, W3), chosen);
            assertEquals(List.of(0, 3, 0, 0, 3, 0), depths);
        }
    }

    @Test
    void theTurnContinuesAcrossJoinsAndLeaves() {
        try (Router r = roundRobin()) {
            assertEquals(W1, r.route(a).worker());
            r.removeWorker(W2);
            assertEquals(W3, r.route(a).worker());
            Worker w0 = Worker.of(0);
            r.addWorker(w0);
            assertEquals(w0, r.route(a).worker(), "after the highest comes the lowest");
            assertEquals(W1, r.route(a).worker());
        }
    }

    @Test
    void explainPreviewsTheNextTurnWithoutTakingIt() {
        try (Router r = roundRobin()) {
            assertEquals(W1, r.explain(a).preferred());
            assertEquals(W1, r.explain(a).preferred());
            assertEquals(W1, r.route(a).worker());
            assertEquals(W2, r.explain(a).preferred());
            assertEquals(RoutingPolicy.ROUND_ROBIN, RoutingPolicy.of(" Round-Robin "));
        }
    }
}
