package io.kvprefix;

import static io.kvprefix.RouterTestSupport.W1;
import static io.kvprefix.RouterTestSupport.W2;
import static io.kvprefix.RouterTestSupport.W3;
import static io.kvprefix.RouterTestSupport.heapIndex;
import static io.kvprefix.RouterTestSupport.prefix;
import static io.kvprefix.RouterTestSupport.store;
import static io.kvprefix.RouterTestSupport.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The peers' policies (docs/SPEC.md sections 6.2 and 6.3) on cases worked out by hand: 4-token
 * blocks, request {@code A} = tokens 0..15 (4 blocks).
 */
class RouterPeerPoliciesTest {
    private final PrefixIndex index = heapIndex();
    private final int[] a = tokens(0, 16);

    @AfterEach
    void close() {
        index.close();
    }

    private Router sglang() {
        return Router.builder()
                .index(index)
                .policy(RoutingPolicy.SGLANG_CACHE_AWARE)
                .worker(W1)
                .worker(W2)
                .worker(W3)
                .build();
    }

    @Test
    void sglangEventModeTakesTheDeepestOverlapWhateverTheLoad() {
        store(index, W1, prefix(index, a, 2));
        store(index, W2, prefix(index, a, 3));
        Router r = sglang();
        List<RoutingDecision> held = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            RoutingDecision d = r.route(a); // W2 is the deepest: it takes them all (10 is far below the spill)
            assertEquals(W2, d.worker());
            assertEquals(i, d.cost()); // the cost is the chosen worker's in-flight requests
            held.add(d);
        }
        RoutingDecision miss = r.route(tokens(500, 16)); // no overlap: the least loaded, (load, routed, worker)
        assertEquals(W1, miss.worker());
        assertEquals(W3, r.route(tokens(600, 16)).worker());
    }

    @Test
    void sglangSpillsAboveRelativeAndAbsoluteThresholds() {
        store(index, W2, a);
        Router r = sglang();
        // Before the k-th decision W2 carries k-1 requests and the mean is (k-1)/3: it spills once
        // k-1 > 1.5 * mean (always) and k-1 > mean + 64, that is from k-1 = 97.
        for (int k = 1; k <= 97; k++) {
            assertEquals(W2, r.route(a).worker(), "decision " + k);
        }
        assertEquals(W1, r.route(a).worker()); // spilled to the least loaded
        assertEquals(W3, r.route(a).worker());
        assertEquals(W2, r.route(a).worker()); // 97 > mean 33 + 64 no longer holds
    }

    @Test
    void sglangTreeModeNeedsMoreThanThirtyPercentOfTheRequest() {
        Router r = Router.builder()
                .indexConfig(IndexConfig.builder().blockSize(4).build())
                .predicted(true)
                .policy("sglang-cache-aware")
                .worker(W1)
                .worker(W2)
                .worker(W3)
                .build();
        assertEquals(W1, r.route(a).worker()); // an empty tree: the least loaded; A is recorded for W1
        assertEquals(W1, r.route(a).worker()); // 16 of 16 tokens matched on W1
        int[] oneBlock = a.clone();
        for (int i = 4; i < 16; i++) {
            oneBlock[i] = 900 + i;
        }
        assertEquals(W2, r.route(oneBlock).worker()); // 4 of 16 = 25%: a miss, the least loaded
        int[] twoBlocks = a.clone();
        for (int i = 8; i < 16; i++) {
            twoBlocks[i] = 800 + i;
        }
        assertEquals(W1, r.route(twoBlocks).worker()); // 8 of 16 = 50%: W1 holds them
    }

    private Router llmd() {
        return Router.builder()
                .index(index)
                .policy(RoutingPolicy.LLM_D_SCORERS)
                .worker(W1)
                .worker(W2)
                .worker(W3)
                .build();
    }

    @Test
    void llmdWeighsQueueUsageAndPrefix() {
        store(index, W3, a);
        store(index, W1, prefix(index, a, 2));
        Router r = llmd();
        // no metrics: queue 1 and usage 1 everywhere; prefix 1 (W3), 0.5 (W1), 0 (W2): 7, 5.5, 4
        RoutingDecision d = r.route(a);
        assertEquals(W3, d.worker());
        assertEquals(-7.0, d.cost());
        assertTrue(r.reportEngineMetrics(W3, 10, 0.0)); // W3's queue score 0, the others' 1: W3 5, W1 5.5
        d = r.route(a);
        assertEquals(W1, d.worker());
        assertEquals(-5.5, d.cost());
        assertTrue(r.reportEngineMetrics(W1, 0, 0.5)); // W1: 2 + 2 * 0.5 + 1.5 = 4.5 against W3's 5
        assertEquals(W3, r.route(a).worker());
        assertFalse(r.reportEngineMetrics(Worker.of(9), 1, 0.1)); // not registered: nothing recorded
        assertThrows(IllegalArgumentException.class, () -> r.reportEngineMetrics(W1, -1, 0.1));
        assertThrows(IllegalArgumentException.class, () -> r.reportEngineMetrics(W1, 1, 1.5));
    }

    @Test
    void llmdDrawsAmongEqualScores() {
        Router r = llmd(); // nothing cached, no metrics: every score is 4, drawn uniformly
        int[] seen = new int[4];
        for (int i = 0; i < 3_000; i++) {
            RoutingDecision d = r.route(a);
            seen[(int) d.worker().workerId()]++;
            d.finished();
        }
        for (int w = 1; w <= 3; w++) {
            assertTrue(seen[w] > 850 && seen[w] < 1150, "worker " + w + " drawn " + seen[w] + " times of 3000");
        }
    }

    @Test
    void explainRanksFirstWhatEveryPolicyThenChooses() {
        store(index, W2, prefix(index, a, 3));
        for (RoutingPolicy p : RoutingPolicy.values()) {
            if (p == RoutingPolicy.ROUND_ROBIN) {
                continue; // cache-blind: RouterRoundRobinTest
            }
            try (Router r = Router.builder()
                    .index(index)
                    .policy(p)
                    .worker(W1)
                    .worker(W2)
                    .worker(W3)
                    .build()) {
                RouteExplanation e = r.explain(a);
                RoutingDecision d = r.route(a);
                assertEquals(W2, e.preferred(), p.policyName());
                assertEquals(d.worker(), e.preferred(), p.policyName());
                assertEquals(d.cost(), e.of(W2).orElseThrow().cost(), 1e-12, p.policyName());
                assertEquals(3, e.of(W2).orElseThrow().depth(), p.policyName());
            }
        }
    }
}
