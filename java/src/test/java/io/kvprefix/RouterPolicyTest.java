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
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The cost function and selection of docs/SPEC.md section 6, with costs computed by hand. Every request
 * here is {@code A} = tokens 0..15 at block size 4 unless said otherwise: {@code isl = 16}, 4 blocks,
 * so with no load {@code cost = (16 - 4d)/4 + 4 = 8 - d}.
 */
class RouterPolicyTest {
    private final PrefixIndex index = heapIndex();
    private final int[] a = tokens(0, 16);

    @AfterEach
    void close() {
        index.close();
    }

    private Router.Builder router() {
        return Router.builder().index(index).worker(W1).worker(W2).worker(W3);
    }

    @Test
    void deepestMatchWinsWhenIdle() {
        store(index, W1, prefix(index, a, 2));
        store(index, W3, prefix(index, a, 3));
        Router r = router().build();
        RoutingDecision d = r.route(a);
        // costs: W1 2 + 4 = 6, W2 4 + 4 = 8, W3 1 + 4 = 5
        assertEquals(W3, d.worker());
        assertEquals(5.0, d.cost());
        assertEquals(3, d.overlapBlocks());
        assertEquals(4, d.prefillTokens());
        assertEquals(12, d.cachedTokens());
        assertEquals(4, d.decodeBlocks());
        assertEquals(16, d.inputTokens());
        assertEquals(4, r.activePrefillTokens(W3));
        assertEquals(4, r.activeDecodeBlocks(W3));
        assertEquals(1, r.activeRequests(W3));
        assertEquals(0, r.activePrefillTokens(W1));
    }

    @Test
    void loadFromEarlierDecisionsMovesLaterOnes() {
        store(index, W1, prefix(index, a, 2));
        store(index, W3, prefix(index, a, 3));
        Router r = router().build();
        RoutingDecision d1 = r.route(a);
        assertEquals(W3, d1.worker());
        // W3 now: prefill 4 tokens, decode 4 blocks -> (16 - 12 + 4)/4 + 4 + 4 = 10; W1 6; W2 8
        RoutingDecision d2 = r.route(a);
        assertEquals(W1, d2.worker());
        assertEquals(6.0, d2.cost());
        assertEquals(8, d2.prefillTokens());
        // W1 now: prefill 8, decode 4 -> (16 - 8 + 8)/4 + 8 = 12; W3 after its prefill finished:
        // (16 - 12 + 0)/4 + 8 = 9; W2 8
        d1.prefillFinished();
        assertEquals(0, r.activePrefillTokens(W3));
        assertEquals(4, r.activeDecodeBlocks(W3));
        RoutingDecision d3 = r.route(a);
        assertEquals(W2, d3.worker());
        assertEquals(8.0, d3.cost());
        // W2 now: prefill 16, decode 4 -> 16; W1 12; W3 9 -> W3
        RoutingDecision d4 = r.route(a);
        assertEquals(W3, d4.worker());
        assertEquals(9.0, d4.cost());
    }

    @Test
    void thisRequestsBlocksCountForEveryCandidate() {
        // With capacity weights the request's own decode blocks matter: W1 (weight 4) idle, no match:
        // (4 + 4) / 4 = 2. If they were left out for W1 it would cost 1; W2 (weight 1) with full match costs 0 + 4.
        store(index, W2, a);
        Router r = Router.builder().index(index).worker(W1, 4).worker(W2).build();
        RoutingDecision d = r.route(a);
        assertEquals(W1, d.worker());
        assertEquals(2.0, d.cost());
        // and with only W2's own load, its cost includes the request's 4 blocks on top of the active ones
        Router r2 = Router.builder().index(index).worker(W2).build();
        RoutingDecision first = r2.route(a);
        assertEquals(4.0, first.cost());
        RoutingDecision second = r2.route(a); // prefill 0 (full match) + (4 active + 4 own)
        assertEquals(8.0, second.cost());
    }

    @Test
    void tiesGoToTheWorkerHoldingFewerBlocks() {
        store(index, W1, prefix(index, a, 2));
        store(index, W1, tokens(1000, 12)); // 3 unrelated blocks: W1 holds 5
        store(index, W2, prefix(index, a, 2)); // W2 holds 2
        Router r = Router.builder().index(index).worker(W1).worker(W2).build();
        RoutingDecision d = r.route(a);
        assertEquals(W2, d.worker()); // both cost 6
        assertEquals(6.0, d.cost());
    }

    @Test
    void tiesWithEqualBlockCountsGoToTheLowerWorkerUnsigned() {
        Worker big = Worker.of(-1L); // 18446744073709551615: the highest id, unsigned
        Worker five = Worker.of(5);
        Worker fiveRank1 = Worker.of(5, 1);
        Router r = Router.builder()
                .index(index)
                .worker(big)
                .worker(fiveRank1)
                .worker(five)
                .build();
        assertEquals(List.of(five, fiveRank1, big), r.workers());
        assertEquals(five, r.route(a).worker());
        // five is loaded now; the next tie is between 5/1 and 2^64-1
        assertEquals(fiveRank1, r.route(a).worker());
        assertEquals(big, r.route(a).worker());
    }

    @Test
    void overlapWeightScalesThePrefillTerm() {
        store(index, W1, a);
        // weight 0: prefill ignored, both cost 0 + 4: tie, W2 holds fewer blocks
        RoutingDecision d = Router.builder()
                .index(index)
                .worker(W1)
                .worker(W2)
                .overlapWeight(0)
                .build()
                .route(a);
        assertEquals(W2, d.worker());
        assertEquals(4.0, d.cost());
        // weight 2: W1 2*0 + 4 = 4, W2 2*4 + 4 = 12
        RoutingDecision d2 = Router.builder()
                .index(index)
                .worker(W1)
                .worker(W2)
                .overlapWeight(2)
                .build()
                .route(a);
        assertEquals(W1, d2.worker());
        assertEquals(4.0, d2.cost());
    }

    @Test
    void prefillBlocksAreRealNumbers() {
        // isl 18 (4 full blocks + 2 tokens), W1 holds 1 block: prefill (18 - 4)/4 = 3.5, decode floor(18/4) = 4
        store(index, W1, prefix(index, a, 1));
        Router r = Router.builder().index(index).worker(W1).build();
        RoutingDecision d = r.route(tokens(0, 18));
        assertEquals(7.5, d.cost());
        assertEquals(14, d.prefillTokens());
        assertEquals(4, d.decodeBlocks());
    }

    @Test
    void saltedRequestsMatchOnlySaltedBlocks() {
        BlockHasher lora =
                BlockHasher.builder().blockSize(4).loraName("adapter-a").build();
        store(index, W1, a); // unsalted
        store(index, W2, a, lora); // salted
        Router r =
                Router.builder().index(index).worker(W1).worker(W2).worker(W3).build();
        RoutingDecision plain = r.route(a);
        assertEquals(W1, plain.worker());
        assertEquals(4, plain.overlapBlocks());
        RoutingDecision salted = r.route(a, 0, a.length, lora);
        assertEquals(W2, salted.worker());
        assertEquals(4, salted.overlapBlocks());
        // offset and length pick the request out of a bigger array
        int[] padded = new int[40];
        System.arraycopy(a, 0, padded, 7, 16);
        plain.finished();
        RoutingDecision off = r.route(padded, 7, 16, r.hasher());
        assertEquals(W1, off.worker());
        assertEquals(4, off.overlapBlocks());
        assertEquals(16, off.inputTokens());
    }

    @Test
    void hashesVariantMatchesTheTokensVariant() {
        store(index, W2, prefix(index, a, 3));
        Router r = router().build();
        long[] local = index.hasher().localHashes(a);
        RoutingDecision d = r.route(local, 18); // 4 blocks, 18 tokens: prefill (18 - 12)/4 = 1.5, decode 4
        assertEquals(W2, d.worker());
        assertEquals(5.5, d.cost());
        assertEquals(3, d.overlapBlocks());
        assertEquals(6, d.prefillTokens());
        assertThrows(IllegalArgumentException.class, () -> r.route(local, 15));
    }

    @Test
    void temperatureZeroIsDeterministicAndTemperatureSamplesWithTheSeed() {
        store(index, W2, prefix(index, a, 2));
        store(index, W3, a);
        List<Worker> first = draws(
                Router.builder()
                        .index(index)
                        .worker(W1)
                        .worker(W2)
                        .worker(W3)
                        .temperature(1)
                        .seed(7)
                        .build(),
                60);
        List<Worker> again = draws(
                Router.builder()
                        .index(index)
                        .worker(W1)
                        .worker(W2)
                        .worker(W3)
                        .temperature(1)
                        .seed(7)
                        .build(),
                60);
        List<Worker> other = draws(
                Router.builder()
                        .index(index)
                        .worker(W1)
                        .worker(W2)
                        .worker(W3)
                        .temperature(1)
                        .seed(8)
                        .build(),
                60);
        assertEquals(first, again);
        assertNotEquals(first, other);
        assertTrue(first.contains(W1) && first.contains(W2) && first.contains(W3), first.toString());
        List<Worker> greedy = draws(
                Router.builder().index(index).worker(W1).worker(W2).worker(W3).build(), 20);
        assertTrue(greedy.stream().allMatch(W3::equals), greedy.toString());
    }

    /** Routes {@code n} times, finishing each decision at once so the load stays zero. */
    private List<Worker> draws(Router r, int n) {
        List<Worker> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            RoutingDecision d = r.route(a);
            out.add(d.worker());
            d.finished();
        }
        return out;
    }

    @Test
    void softmaxDistributionMatchesTheFormula() {
        // depths 0, 2, 4 -> costs 8, 6, 4: min 4, max 8
        store(index, W2, prefix(index, a, 2));
        store(index, W3, a);
        for (double t : new double[] {1.0, 0.5}) {
            double[] weight = {Math.exp(-(8 - 4) / (4 * t)), Math.exp(-(6 - 4) / (4 * t)), 1.0};
            Router r = Router.builder()
                    .index(index)
                    .worker(W1)
                    .worker(W2)
                    .worker(W3)
                    .temperature(t)
                    .seed(12345)
                    .build();
            assertChiSquare(r, weight, 30_000);
        }
    }

    @Test
    void equalCostsAreSampledUniformly() {
        Router r = router().temperature(0.7).seed(99).build(); // empty index, no load: every cost is 8
        assertChiSquare(r, new double[] {1, 1, 1}, 30_000);
    }

    /** Draws {@code n} decisions and checks their frequencies against {@code weight} (chi-square, 2 dof, p = 0.001). */
    private void assertChiSquare(Router r, double[] weight, int n) {
        long[] seen = new long[3];
        for (int i = 0; i < n; i++) {
            RoutingDecision d = r.route(a);
            seen[(int) d.worker().workerId() - 1]++;
            d.finished();
        }
        double sum = weight[0] + weight[1] + weight[2];
        double chi2 = 0;
        for (int i = 0; i < 3; i++) {
            double expected = n * weight[i] / sum;
            chi2 += (seen[i] - expected) * (seen[i] - expected) / expected;
        }
        assertTrue(
                chi2 < 13.82,
                "chi-square " + chi2 + " for counts " + java.util.Arrays.toString(seen) + " against weights "
                        + java.util.Arrays.toString(weight));
    }

    @Test
    void belowTheMinimumMatchTheRequestIsRoutedByLoadAlone() {
        store(index, W1, prefix(index, a, 1)); // the "system prompt": 1 block, W1 holds 1
        store(index, W2, prefix(index, a, 1));
        store(index, W2, tokens(1000, 8)); // W2 holds 3
        store(index, W3, tokens(2000, 4)); // W3 holds 1, no match
        // no minimum: W1 and W2 cost 3 + 4 = 7, W3 8; tie W1/W2 -> W1 (fewer blocks)
        assertEquals(7.0, router().build().route(a).cost());
        // minimum 2 blocks: every depth counts 0, all cost 8: W1 and W3 hold 1 block each -> W1
        RoutingDecision d = router().minMatchBlocks(2).build().route(a);
        assertEquals(W1, d.worker());
        assertEquals(8.0, d.cost());
        assertEquals(1, d.overlapBlocks()); // the load charged uses the real depth
        assertEquals(12, d.prefillTokens());
        // loaded W1: routed by load alone the request goes elsewhere, although W1 holds its prefix
        Router r = router().minMatchBlocks(2).build();
        r.route(tokens(5000, 16)); // a miss, to W1 (cost 8 everywhere, fewest blocks, lowest)
        RoutingDecision next = r.route(a);
        assertEquals(W3, next.worker()); // W2 and W3 cost 8; W3 holds fewer blocks
        // minimum in tokens: 5 tokens at block size 4 = 2 blocks; 4 tokens = 1 block (no effect)
        assertEquals(8.0, router().minMatchTokens(5).build().route(a).cost());
        assertEquals(7.0, router().minMatchTokens(4).build().route(a).cost());
        // a match at the minimum counts
        store(index, W3, prefix(index, a, 2));
        RoutingDecision met = router().minMatchBlocks(2).build().route(a);
        assertEquals(W3, met.worker());
        assertEquals(6.0, met.cost());
    }

    @Test
    void missesAreSpreadRoundRobinWhenAsked() {
        Router plain = router().build();
        Router spread = router().spreadMisses(true).build();
        assertEquals(List.of(W1, W1, W1, W1), draws(plain, 4));
        assertEquals(List.of(W1, W2, W3, W1, W2, W3, W1), draws(spread, 7));
        // with W1 loaded, the tie is between W2 and W3 only
        Router loaded = router().spreadMisses(true).build();
        RoutingDecision held = loaded.route(tokens(100, 16));
        assertEquals(W1, held.worker());
        assertEquals(List.of(W2, W3, W2, W3), draws(loaded, 4));
        // hits are not spread
        store(index, W2, a);
        assertEquals(List.of(W2, W2, W2), draws(router().spreadMisses(true).build(), 3));
    }

    @Test
    void capacityWeightsDivideTheCost() {
        Router r = Router.builder().index(index).worker(W1, 2).worker(W2).build();
        // k requests on W1 (weight 2): (4 + 4k + 4k + 4) / 2 = 4 + 4k; m on W2: 8 + 8m
        List<Worker> got = new ArrayList<>();
        List<Double> costs = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            RoutingDecision d = r.route(a);
            got.add(d.worker());
            costs.add(d.cost());
        }
        assertEquals(List.of(W1, W1, W2, W1, W1, W2), got);
        assertEquals(List.of(4.0, 8.0, 8.0, 12.0, 16.0, 16.0), costs);
        // changing a weight keeps the load: W1 at weight 1 now costs 4 + 4*4 + 4*4 + 4 = 40 (4 requests), W2 8 + 16 =
        // 24
        assertFalse(r.addWorker(W1, 1.0));
        RoutingDecision d = r.route(a);
        assertEquals(W2, d.worker());
        assertEquals(24.0, d.cost());
        assertThrows(IllegalArgumentException.class, () -> r.addWorker(W3, 0));
        assertThrows(IllegalArgumentException.class, () -> r.addWorker(W3, Double.NaN));
    }

    @Test
    void prefillFinishedAndFinishedReleaseExactlyOnce() {
        store(index, W1, prefix(index, a, 1));
        Router r = Router.builder().index(index).worker(W1).build();
        RoutingDecision d1 = r.route(a); // prefill 12, decode 4
        RoutingDecision d2 = r.route(a);
        assertEquals(24, r.activePrefillTokens(W1));
        assertEquals(8, r.activeDecodeBlocks(W1));
        d1.prefillFinished();
        d1.prefillFinished();
        assertEquals(12, r.activePrefillTokens(W1));
        assertEquals(8, r.activeDecodeBlocks(W1));
        assertFalse(d1.isFinished());
        d1.finished();
        d1.finished();
        d1.prefillFinished();
        assertTrue(d1.isFinished());
        assertEquals(12, r.activePrefillTokens(W1));
        assertEquals(4, r.activeDecodeBlocks(W1));
        assertEquals(1, r.activeRequests(W1));
        d2.finished(); // without prefillFinished first: releases both
        d2.prefillFinished();
        d2.finished();
        assertEquals(0, r.activePrefillTokens(W1));
        assertEquals(0, r.activeDecodeBlocks(W1));
        assertEquals(0, r.activeRequests(W1));
    }

    @Test
    void workersJoinAndLeave() {
        store(index, W1, a);
        store(index, W3, a); // known to the index, never registered: ignored
        Router r = Router.builder().index(index).build();
        assertThrows(IllegalStateException.class, () -> r.route(a));
        assertTrue(r.addWorker(W2));
        assertFalse(r.addWorker(W2));
        RoutingDecision onW2 = r.route(a);
        assertEquals(W2, onW2.worker());
        assertEquals(0, onW2.overlapBlocks());
        assertTrue(r.addWorker(W1));
        RoutingDecision onW1 = r.route(a);
        assertEquals(W1, onW1.worker());
        assertEquals(4, onW1.overlapBlocks());
        assertEquals(List.of(W1, W2), r.workers());

        assertTrue(r.removeWorker(W1));
        assertFalse(r.removeWorker(W1));
        assertEquals(List.of(W2), r.workers());
        for (int i = 0; i < 3; i++) {
            assertEquals(W2, r.route(a).worker()); // W1 holds the prefix but is gone
        }
        onW1.prefillFinished(); // releasing a removed worker's decision is harmless
        onW1.finished();
        assertEquals(0, r.activePrefillTokens(W1));
        assertTrue(r.addWorker(W1)); // back with a fresh, empty load
        assertEquals(0, r.activeDecodeBlocks(W1));
        RoutingDecision back = r.route(a);
        assertEquals(W1, back.worker());
        assertEquals(4.0, back.cost());
        back.finished();
        assertEquals(0, r.activeDecodeBlocks(W1));
    }

    @Test
    void builderChecksItsOptions() {
        assertThrows(IllegalStateException.class, () -> Router.builder().build());
        assertThrows(
                IllegalStateException.class,
                () -> Router.builder()
                        .index(index)
                        .indexConfig(IndexConfig.defaults())
                        .build());
        assertThrows(IllegalArgumentException.class, () -> Router.builder().temperature(-1));
        assertThrows(IllegalArgumentException.class, () -> Router.builder().temperature(Double.POSITIVE_INFINITY));
        assertThrows(IllegalArgumentException.class, () -> Router.builder().overlapWeight(Double.NaN));
        assertThrows(IllegalArgumentException.class, () -> Router.builder().minMatchBlocks(-1));
        assertThrows(IllegalArgumentException.class, () -> Router.builder().minMatchTokens(-1));
        assertThrows(IllegalArgumentException.class, () -> Router.builder().predictedMaxBlocks(0));
        assertThrows(IllegalArgumentException.class, () -> Router.builder().predictedTtl(java.time.Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> Router.builder().worker(W1, -2));
    }

    @Test
    void aClosedRouterRefusesToRouteButStillReleases() {
        Router r = router().build();
        RoutingDecision d = r.route(a);
        r.close();
        r.close();
        assertThrows(IllegalStateException.class, () -> r.route(a));
        d.finished();
        assertEquals(0, r.activeDecodeBlocks(d.worker()));
    }
}
