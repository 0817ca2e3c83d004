package io.kvprefix;

import static io.kvprefix.RouterTestSupport.W1;
import static io.kvprefix.RouterTestSupport.W2;
import static io.kvprefix.RouterTestSupport.W3;
import static io.kvprefix.RouterTestSupport.heapIndex;
import static io.kvprefix.RouterTestSupport.prefix;
import static io.kvprefix.RouterTestSupport.store;
import static io.kvprefix.RouterTestSupport.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * kvprefix-ttft (docs/SPEC.md section 6.4) with costs computed by hand: 4-token blocks, request
 * {@code A} = tokens 0..15 (4 blocks), and a fake clock so prefill timing is exact. Without speed
 * samples no progress is credited, so a worker's cost is its pending prefill tokens plus the request's
 * uncached tokens.
 */
class RouterTtftPolicyTest {
    private final PrefixIndex index = heapIndex();
    private final int[] a = tokens(0, 16);
    private final long[] now = {1_000_000};

    @AfterEach
    void close() {
        index.close();
    }

    private Router.Builder router() {
        return Router.builder().index(index).policy("kvprefix-ttft").clock(() -> now[0]);
    }

    private Router three() {
        return router().worker(W1).worker(W2).worker(W3).build();
    }

    @Test
    void idleTheLeastUncachedWins() {
        store(index, W1, prefix(index, a, 2));
        store(index, W3, prefix(index, a, 3));
        RoutingDecision d = three().route(a);
        assertEquals(W3, d.worker()); // uncached: W1 8, W2 16, W3 4
        assertEquals(4.0, d.cost());
        assertEquals(RoutingPolicy.KVPREFIX_TTFT, three().policy());
    }

    @Test
    void pendingPrefillsCountUntilTheyFinish() {
        store(index, W1, prefix(index, a, 3));
        Router r = three();
        RoutingDecision x = r.route(tokens(100, 16)); // nothing cached anywhere: all 16, W1 the lowest
        assertEquals(W1, x.worker());
        RoutingDecision d = r.route(a); // W1 16 + 4 = 20, W2 16, W3 16: a tie, W2 has fewer requests than W1
        assertEquals(W2, d.worker());
        assertEquals(16.0, d.cost());
        x.prefillFinished();
        RoutingDecision again = r.route(a); // W1 back to 4
        assertEquals(W1, again.worker());
        assertEquals(4.0, again.cost());
    }

    @Test
    void exactTiesGoToTheWorkerRoutedFewerRequests() {
        Router r = three();
        List<Worker> seen = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            RoutingDecision d = r.route(tokens(1000 * (i + 1), 16));
            seen.add(d.worker());
            d.finished();
        }
        assertEquals(List.of(W1, W2, W3, W1, W2, W3), seen);
    }

    /** Routes and finishes requests of {@code sizes} tokens, each prefill taking 1 us + 100 ns per token. */
    private void train(Router r, int nanosPerToken, int... sizes) {
        for (int i = 0; i < sizes.length; i++) {
            RoutingDecision d = r.route(tokens(50_000 + 1_000 * i + sizes[i], sizes[i]));
            now[0] += 1_000 + (long) nanosPerToken * d.prefillTokens();
            d.prefillFinished();
            d.finished();
        }
    }

    @Test
    void progressOnThePendingPrefillIsCreditedAtTheLearnedSpeed() {
        Router r = router().worker(W1).build();
        RoutingDecision p = r.route(tokens(10_000, 40));
        RoutingDecision q = r.route(tokens(20_000, 16));
        assertEquals(56.0, q.cost()); // no speed known yet: all 40 pending tokens count
        q.finished();
        p.finished();

        train(r, 100, 8, 16, 24, 32, 40, 48); // the fit gives 0.01 tokens per ns exactly
        p = r.route(tokens(10_000, 40));
        now[0] += 2_000; // 20 of its 40 tokens computed
        q = r.route(tokens(20_000, 16));
        assertEquals(20 + 16, q.cost(), 1e-6);
        q.finished();
        now[0] += 1_000_000; // credited at most 95%: 2 tokens left
        q = r.route(tokens(20_000, 16));
        assertEquals(2 + 16, q.cost(), 1e-6);
    }

    @Test
    void aWorkerMeasuredSlowerCostsMoreAndEqualOnesStayEqual() {
        int[] sizes = new int[40];
        for (int i = 0; i < sizes.length; i++) {
            sizes[i] = 8 * (1 + i % 4);
        }
        // Each worker learns alone while the ones before it are busy with a huge pending prefill.
        Router r = router().worker(W1).build();
        train(r, 100, sizes);
        RoutingDecision busy1 = r.route(tokens(1_000_000, 100_000));
        r.addWorker(W2);
        train(r, 100, sizes);
        RoutingDecision busy2 = r.route(tokens(2_000_000, 100_000));
        assertEquals(List.of(W1, W2), List.of(busy1.worker(), busy2.worker()));
        r.addWorker(W3);
        train(r, 300, sizes);
        busy1.finished();
        busy2.finished();
        // W1 and W2 fit 100 ns per token exactly, W3 300; the fleet's pooled fit lies between, so W1 and
        // W2 count as faster than the fleet by the same factor and W3 as slower: W3 loses, W1 and W2 tie.
        RoutingDecision d = r.route(tokens(90_000, 16));
        assertEquals(W1, d.worker());
        assertTrue(d.cost() < 16 * 0.8, "W1 counts as faster than the fleet: " + d.cost());
        RoutingDecision e = r.route(tokens(91_000, 16)); // W1 now has 16 pending: W2 at the same factor wins
        assertEquals(W2, e.worker());
        assertEquals(d.cost(), e.cost(), 1e-9);
        RoutingDecision f = r.route(tokens(92_000, 16)); // both 32 pending, still cheaper than W3's 16 at 3x
        assertEquals(W1, f.worker());
        assertEquals(2 * d.cost(), f.cost(), 1e-9);
    }

    @Test
    void aQueueingFleetChargesTheWorkAWorseCacheChoiceAdds() {
        store(index, W1, prefix(index, a, 3));
        Router r = router().worker(W1).worker(W2).build();
        RoutingDecision u1 = r.route(tokens(10_000, 420)); // W1 (a tie, the lower)
        RoutingDecision u2 = r.route(tokens(20_000, 400)); // W2: 400 against W1's 820
        assertEquals(W1, u1.worker());
        assertEquals(W2, u2.worker());
        // mean backlog 410 tokens = 25.6 requests like A: lambda = 24.625. W1: 420 + 4 = 424.
        // W2: 400 + 16 + 24.625 * 12 = 711.5. Without the charge W2 (416) would win.
        RoutingDecision d = r.route(a);
        assertEquals(W1, d.worker());
        assertEquals(424.0, d.cost(), 1e-9);
    }

    @Test
    void belowTheMinimumMatchDepthsCountAsZero() {
        store(index, W3, prefix(index, a, 2));
        Router r = router().worker(W1).worker(W2).worker(W3).minMatchBlocks(3).build();
        RoutingDecision d = r.route(a); // W3's 2 blocks do not count: a three-way tie, W1 the lowest
        assertEquals(W1, d.worker());
        assertEquals(16.0, d.cost());
        assertEquals(0, d.overlapBlocks());
    }

    @Test
    void theDynamoOnlyOptionsAreRefused() {
        assertThrows(IllegalStateException.class, () -> router().temperature(1).build());
        assertThrows(
                IllegalStateException.class, () -> router().overlapWeight(2).build());
        assertThrows(
                IllegalStateException.class, () -> router().spreadMisses(true).build());
        assertThrows(
                IllegalStateException.class,
                () -> Router.builder()
                        .index(index)
                        .policy(RoutingPolicy.SGLANG_CACHE_AWARE)
                        .minMatchBlocks(1)
                        .build());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> router().policy("fastest"));
        assertEquals(
                "unknown routing policy 'fastest': known policies are dynamo-cost, sglang-cache-aware, llm-d-scorers,"
                        + " kvprefix-ttft, round-robin",
                e.getMessage());
        assertEquals(RoutingPolicy.LLM_D_SCORERS, RoutingPolicy.of(" LLM-D-Scorers "));
    }
}
