package io.kvprefix;

import static io.kvprefix.RouterTestSupport.W1;
import static io.kvprefix.RouterTestSupport.W2;
import static io.kvprefix.RouterTestSupport.heapIndex;
import static io.kvprefix.RouterTestSupport.prefix;
import static io.kvprefix.RouterTestSupport.store;
import static io.kvprefix.RouterTestSupport.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Predicted mode: the router records its own decisions' blocks with a TTL and a size bound, on a fake
 * clock. Requests are 16 tokens at block size 4 (4 blocks), so with no load {@code cost = 8 - depth}.
 */
class RouterPredictedTest {
    private static final long SEC = 1_000_000_000L;
    private final AtomicLong now = new AtomicLong();
    private final int[] a = tokens(0, 16);
    private final int[] b = tokens(100, 16);

    private Router.Builder predictedOnly() {
        return Router.builder()
                .predicted(true)
                .indexConfig(IndexConfig.builder().blockSize(4).build())
                .worker(W1)
                .worker(W2)
                .clock(now::get)
                .predictedTtl(Duration.ofSeconds(10));
    }

    /** Routes and finishes at once, so only the predicted blocks carry over. */
    private static RoutingDecision once(Router r, int[] tokens) {
        RoutingDecision d = r.route(tokens);
        d.finished();
        return d;
    }

    private static int[] concat(int[] x, int[] y) {
        int[] out = java.util.Arrays.copyOf(x, x.length + y.length);
        System.arraycopy(y, 0, out, x.length, y.length);
        return out;
    }

    @Test
    void predictedAloneLearnsFromItsOwnDecisions() {
        try (Router r = predictedOnly().build()) {
            assertTrue(r.isPredicted());
            RoutingDecision first = once(r, a);
            assertEquals(W1, first.worker());
            assertEquals(0, first.overlapBlocks());
            assertEquals(4, r.predictedBlocks());
            assertEquals(4, r.predictedBlocks(W1));

            RoutingDecision again = once(r, a);
            assertEquals(W1, again.worker());
            assertEquals(4, again.overlapBlocks());
            assertEquals(4.0, again.cost());
            assertEquals(4, r.predictedBlocks()); // re-recording refreshes, never duplicates

            // a miss: both cost 8; W1 holds 4 predicted blocks, W2 none
            assertEquals(W2, once(r, b).worker());
            assertEquals(4, r.predictedBlocks(W2));

            // shares a's first two blocks: W1 (16 - 8)/4 + 4 = 6, W2 8
            int[] c = concat(java.util.Arrays.copyOf(a, 8), tokens(500, 8));
            RoutingDecision dc = once(r, c);
            assertEquals(W1, dc.worker());
            assertEquals(2, dc.overlapBlocks());
            assertEquals(6.0, dc.cost());
            assertEquals(6, r.predictedBlocks(W1)); // c's two new blocks continue a's first two
            assertEquals(10, r.predictedBlocks());
        }
    }

    @Test
    void hashesAndTokensNameTheSamePredictedBlocks() {
        try (Router r = predictedOnly().build()) {
            long[] local = r.hasher().localHashes(a);
            RoutingDecision byHashes = r.route(local, 16);
            assertEquals(W1, byHashes.worker());
            byHashes.finished();
            RoutingDecision d = once(r, a);
            assertEquals(4, d.overlapBlocks());
            assertEquals(4, r.predictedBlocks());
            BlockHasher lora = BlockHasher.builder().blockSize(4).loraName("x").build();
            RoutingDecision salted = r.route(a, 0, 16, lora);
            assertEquals(0, salted.overlapBlocks()); // a salted request shares nothing with the plain one
            assertEquals(8, r.predictedBlocks());
            BlockHasher otherChain =
                    BlockHasher.builder().blockSize(4).chainSeed(0).build();
            assertThrows(IllegalArgumentException.class, () -> r.route(a, 0, 16, otherChain));
        }
    }

    @Test
    void blocksExpireAfterTheirTtlAndRoutingRefreshesThem() {
        try (Router r = predictedOnly().build()) {
            once(r, a); // t = 0: a's 4 blocks on W1
            now.set(5 * SEC);
            int[] a2 = java.util.Arrays.copyOf(a, 8); // a's first 2 blocks, refreshed at t = 5
            RoutingDecision d = once(r, a2);
            assertEquals(W1, d.worker());
            assertEquals(2, d.overlapBlocks());
            now.set(10 * SEC - 1);
            assertEquals(0, r.expire());
            assertEquals(4, r.predictedBlocks());
            now.set(10 * SEC);
            assertEquals(2, r.expire()); // blocks 2 and 3, last routed at t = 0
            assertEquals(2, r.predictedBlocks(W1));
            assertEquals(0, r.expire());
            RoutingDecision back = once(r, a); // t = 10: depth 2 left; all 4 recorded again
            assertEquals(2, back.overlapBlocks());
            assertEquals(4, r.predictedBlocks(W1));

            now.set(20 * SEC); // everything of a is due; expiry runs inline
            RoutingDecision db = once(r, b); // miss; both hold 0 blocks once a has expired -> W1
            assertEquals(W1, db.worker());
            assertEquals(4, r.predictedBlocks());
            assertEquals(W2, once(r, a).worker()); // a is gone: a miss, and W1 holds b's 4 blocks
        }
    }

    @Test
    void aClockSteppingBackIsTreatedAsStandingStill() {
        try (Router r = predictedOnly().build()) {
            now.set(100 * SEC);
            once(r, a);
            now.set(50 * SEC);
            assertEquals(0, r.expire());
            now.set(109 * SEC);
            assertEquals(0, r.expire());
            now.set(110 * SEC);
            assertEquals(4, r.expire());
        }
    }

    @Test
    void theSizeBoundExpiresTheOldestAndDeepestFirst() {
        try (Router r = predictedOnly()
                .predictedMaxBlocks(6)
                .predictedTtl(Duration.ofHours(1))
                .build()) {
            once(r, a); // t = 0: W1 holds a (4)
            now.set(SEC);
            assertEquals(W2, once(r, b).worker()); // t = 1: W2 holds b (4); 8 > 6: a's blocks 3, 2 go
            assertEquals(6, r.predictedBlocks());
            assertEquals(2, r.predictedBlocks(W1));
            assertEquals(4, r.predictedBlocks(W2));
            now.set(2 * SEC);
            RoutingDecision da = once(r, a); // depth 2 kept: the prefix, not arbitrary blocks
            assertEquals(W1, da.worker());
            assertEquals(2, da.overlapBlocks());
            assertEquals(6, r.predictedBlocks()); // a whole again; b's (older) blocks 3, 2 went
            assertEquals(4, r.predictedBlocks(W1));
            RoutingDecision db = once(r, b);
            assertEquals(W2, db.worker());
            assertEquals(2, db.overlapBlocks());
        }
        try (Router r = predictedOnly().predictedMaxBlocks(3).build()) {
            once(r, a); // a request longer than the bound keeps its first 3
            assertEquals(3, r.predictedBlocks());
            assertEquals(3, once(r, a).overlapBlocks());
        }
    }

    @Test
    void predictedNextToEventsTakesTheDeeperOfTheTwo() {
        try (PrefixIndex index = heapIndex()) {
            store(index, W2, prefix(index, a, 1));
            try (Router r = Router.builder()
                    .index(index)
                    .predicted(true)
                    .worker(W1)
                    .worker(W2)
                    .clock(now::get)
                    .predictedTtl(Duration.ofSeconds(10))
                    .build()) {
                RoutingDecision d1 = once(r, a); // events: W2 depth 1 -> 7 vs 8
                assertEquals(W2, d1.worker());
                assertEquals(1, d1.overlapBlocks());
                RoutingDecision d2 = once(r, a); // predicted says 4 for W2
                assertEquals(W2, d2.worker());
                assertEquals(4, d2.overlapBlocks());
                assertEquals(4.0, d2.cost());

                store(index, W1, b); // events deeper than predicted
                RoutingDecision d3 = once(r, b);
                assertEquals(W1, d3.worker());
                assertEquals(4, d3.overlapBlocks());

                // a miss ties at 8: in the event index W1 holds 4 blocks and W2 1 (predicted: 4 and 4)
                assertEquals(W2, once(r, tokens(900, 16)).worker());

                now.set(60 * SEC);
                r.expire();
                assertEquals(0, r.predictedBlocks());
                RoutingDecision d4 = once(r, a); // only the events are left: depth 1
                assertEquals(W2, d4.worker());
                assertEquals(1, d4.overlapBlocks());
            }
        }
    }

    @Test
    void removingAWorkerDropsItsPredictedBlocksOnly() {
        Worker r0 = Worker.of(1, 0);
        Worker r1 = Worker.of(1, 1);
        try (Router r = Router.builder()
                .predicted(true)
                .indexConfig(IndexConfig.builder().blockSize(4).build())
                .worker(r0)
                .worker(r1)
                .clock(now::get)
                .build()) {
            assertEquals(r0, once(r, a).worker());
            assertEquals(r1, once(r, b).worker());
            RoutingDecision pending = r.route(a);
            assertEquals(r0, pending.worker());
            assertTrue(r.removeWorker(r0));
            assertEquals(0, r.predictedBlocks(r0));
            assertEquals(4, r.predictedBlocks(r1)); // the other dp rank of the same id keeps its blocks
            assertEquals(4, r.predictedBlocks());
            pending.finished();
            assertFalse(r.removeWorker(r0));
            RoutingDecision db = once(r, b);
            assertEquals(r1, db.worker());
            assertEquals(4, db.overlapBlocks());
            assertTrue(r.addWorker(r0));
            RoutingDecision da = once(r, a); // r0 came back empty: a is a miss; r1 holds more
            assertEquals(r0, da.worker());
            assertEquals(0, da.overlapBlocks());
            assertTrue(r.removeWorker(r1)); // r0 still has blocks: cleared, not remove_worker
            assertEquals(4, r.predictedBlocks(r0));
            assertEquals(4, r.predictedBlocks());
        }
    }

    @Test
    void closingTheRouterClosesOnlyWhatItOwns() {
        try (PrefixIndex index = heapIndex()) {
            Router r = Router.builder()
                    .index(index)
                    .predicted(true)
                    .worker(W1)
                    .clock(now::get)
                    .build();
            RoutingDecision d = r.route(a);
            r.close();
            assertThrows(IllegalStateException.class, () -> r.route(a));
            assertEquals(0, r.expire());
            d.finished();
            assertEquals(0, index.blockCount(W1));
            index.match(a); // the event index is still open
        }
    }
}
