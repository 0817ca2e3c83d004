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
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.RouteExplanation.Candidate;
import io.kvprefix.RouteExplanation.Verdict;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link Router#explain} against costs computed by hand (docs/SPEC.md sections 4.1 and 6), one case
 * for every {@link Verdict}; it changes nothing, and the decision made next agrees with it. Also the
 * {@link RoutingObserver} hook.
 */
class RouterExplainTest {
    private static final Worker W4 = Worker.of(4);
    private static final int[] T = tokens(1, 16); // 4 blocks of 4 tokens

    private static Candidate candidate(RouteExplanation e, Worker w) {
        return e.of(w).orElseThrow(() -> new AssertionError(w + " missing in " + e));
    }

    @Test
    void preferredOutweighedCandidateAndNotAMember() {
        try (PrefixIndex index = heapIndex()) {
            store(index, W1, prefix(index, T, 2));
            store(index, W2, T);
            store(index, W4, T);
            // W2 holds everything but weighs 0.01: its cost is (0 + 4) / 0.01 = 400
            Router router = Router.builder()
                    .index(index)
                    .worker(W1)
                    .worker(W2, 0.01)
                    .worker(W3)
                    .build();
            RouteExplanation e = router.explain(T);
            assertEquals(W1, e.preferred());
            assertFalse(e.belowMinimumMatch());
            assertEquals(1, e.minimumDepth());
            Candidate c1 = candidate(e, W1); // (16 - 2*4)/4 + 4 = 6
            assertEquals(Verdict.PREFERRED, c1.verdict());
            assertEquals(2, c1.depth());
            assertEquals(6.0, c1.cost(), 1e-12);
            assertEquals(MatchExplanation.Stop.ABSENT, c1.stop().stop());
            Candidate c2 = candidate(e, W2);
            assertEquals(Verdict.OUTWEIGHED, c2.verdict());
            assertEquals(4, c2.depth());
            assertEquals(400.0, c2.cost(), 1e-9);
            Candidate c3 = candidate(e, W3); // not in the index: 16/4 + 4 = 8
            assertEquals(Verdict.CANDIDATE, c3.verdict());
            assertEquals(8.0, c3.cost(), 1e-12);
            assertEquals(MatchExplanation.Stop.ABSENT, c3.stop().stop());
            Candidate c4 = candidate(e, W4);
            assertEquals(Verdict.NOT_A_MEMBER, c4.verdict());
            assertEquals(4, c4.depth());
            assertTrue(Double.isNaN(c4.cost()));
            assertEquals(
                    List.of(W1, W2, W3, W4),
                    e.workers().stream().map(Candidate::worker).toList());

            // nothing was charged; the decision made now is the preferred worker
            assertEquals(0, router.activeRequests(W1));
            RoutingDecision d = router.route(T);
            assertEquals(W1, d.worker());
            assertFalse(d.belowMinimumMatch());
        }
    }

    @Test
    void belowTheMinimumMatchEveryDepthCountsAsZero() {
        try (PrefixIndex index = heapIndex()) {
            store(index, W1, prefix(index, T, 2));
            store(index, W2, T); // deeper, but not registered
            Router router = Router.builder()
                    .index(index)
                    .worker(W1)
                    .worker(W3)
                    .minMatchBlocks(3)
                    .build();
            RouteExplanation e = router.explain(T);
            assertTrue(e.belowMinimumMatch());
            assertEquals(3, e.minimumDepth());
            // both cost 16/4 + 4 = 8: the tie goes to the worker holding fewer blocks, W3 (0 < 2)
            assertEquals(W3, e.preferred());
            assertEquals(Verdict.BELOW_MIN_MATCH, candidate(e, W1).verdict());
            assertEquals(8.0, candidate(e, W1).cost(), 1e-12);
            assertEquals(Verdict.PREFERRED, candidate(e, W3).verdict());
            assertEquals(Verdict.NOT_A_MEMBER, candidate(e, W2).verdict());
            RoutingDecision d = router.route(T);
            assertEquals(W3, d.worker());
            assertTrue(d.belowMinimumMatch());
        }
    }

    @Test
    void predictedModeCountsThePredictedDepthAndTheLoad() {
        long[] now = {0};
        try (Router router = Router.builder()
                .predicted(true)
                .indexConfig(IndexConfig.builder().blockSize(4).build())
                .predictedTtl(Duration.ofSeconds(10))
                .clock(() -> now[0])
                .worker(W1)
                .worker(W2)
                .build()) {
            RoutingDecision d = router.route(T); // a tie on an empty cluster: W1
            assertEquals(W1, d.worker());
            RouteExplanation e = router.explain(T);
            // W1: depth 4 predicted, but 16 prefill tokens and 4 decode blocks still charged:
            // (16 - 16 + 16)/4 + (4 + 4) = 12; W2: 16/4 + 4 = 8
            Candidate c1 = candidate(e, W1);
            assertEquals(4, c1.predictedDepth());
            assertEquals(4, c1.depth());
            assertEquals(12.0, c1.cost(), 1e-12);
            assertEquals(Verdict.OUTWEIGHED, c1.verdict());
            assertEquals(W2, e.preferred());
            assertEquals(MatchExplanation.Stop.COMPLETE, c1.stop().stop());
            d.finished(); // W1: 0 + 4 = 4
            assertEquals(W1, router.explain(T).preferred());
        }
    }

    @Test
    void observersSeeEveryDecisionUntilRemoved() {
        try (PrefixIndex index = heapIndex()) {
            store(index, W1, prefix(index, T, 3));
            Router router = Router.builder().index(index).worker(W1).worker(W2).build();
            List<RoutingDecision> seen = new ArrayList<>();
            RoutingObserver o = seen::add;
            router.addObserver(o);
            RoutingDecision d = router.route(T);
            assertEquals(List.of(d), seen);
            assertEquals(3, seen.get(0).overlapBlocks());
            assertTrue(router.removeObserver(o));
            assertFalse(router.removeObserver(o));
            router.route(T);
            assertEquals(1, seen.size());
        }
    }
}
