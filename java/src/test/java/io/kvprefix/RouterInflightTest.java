package io.kvprefix;

import static io.kvprefix.RouterTestSupport.W1;
import static io.kvprefix.RouterTestSupport.W2;
import static io.kvprefix.RouterTestSupport.store;
import static io.kvprefix.RouterTestSupport.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * In-flight prefills (docs/SPEC.md section 6.7) under kvprefix-ttft with costs by hand: 4-token
 * blocks, {@code A} = tokens 0..15 (4 blocks), {@code C} = tokens 100..107 (2 blocks), no speed
 * samples (so a worker's cost is its pending prefill tokens plus the request's uncached tokens). A
 * goes to W1 (a tie, the lower worker), C to W2 (8 against 16 + 8); a second A then costs 16 + 0 on
 * W1 when A's blocks count there, 16 + 16 when they do not, against 8 + 16 on W2.
 */
class RouterInflightTest {
    private final int[] a = tokens(0, 16);
    private final int[] c = tokens(100, 8);

    static Stream<Supplier<PrefixIndex>> indexes() {
        IndexConfig.Builder b = IndexConfig.builder().blockSize(4);
        return Stream.of(
                () -> PrefixIndex.heap(b.implementation(Implementation.PORTABLE).build()),
                () -> PrefixIndex.offHeap(
                        b.implementation(Implementation.PORTABLE).build()),
                () -> PrefixIndex.offHeap(
                        b.implementation(Implementation.NATIVE).build()));
    }

    private static Router router(PrefixIndex index, boolean inflight) {
        return Router.builder()
                .index(index)
                .policy("kvprefix-ttft")
                .inflightPrefills(inflight)
                .clock(() -> 1_000_000L)
                .worker(W1)
                .worker(W2)
                .build();
    }

    @ParameterizedTest
    @MethodSource("indexes")
    void aSecondIdenticalRequestWhileTheFirstPrefillsGoesToItsWorker(Supplier<PrefixIndex> make) {
        try (PrefixIndex index = make.get()) {
            Router r = router(index, true);
            RoutingDecision first = r.route(a);
            assertEquals(W1, first.worker());
            assertEquals(W2, r.route(c).worker());
            assertEquals(6, r.inflightBlocks());
            RoutingDecision second = r.route(a); // no event yet: W1 16 + 0 against W2 8 + 16
            assertEquals(W1, second.worker());
            assertEquals(4, second.overlapBlocks());
            assertEquals(0, second.prefillTokens());
            assertEquals(16.0, second.cost());
        }
    }

    @ParameterizedTest
    @MethodSource("indexes")
    void withoutTheOptionItGoesElsewhere(Supplier<PrefixIndex> make) {
        try (PrefixIndex index = make.get()) {
            Router r = router(index, false);
            assertEquals(W1, r.route(a).worker());
            assertEquals(W2, r.route(c).worker());
            RoutingDecision second = r.route(a); // W1 16 + 16 against W2 8 + 16
            assertEquals(W2, second.worker());
            assertEquals(0, second.overlapBlocks());
            assertEquals(0, r.inflightBlocks());
        }
    }

    @ParameterizedTest
    @MethodSource("indexes")
    void theCreditEndsWhenTheRequestFinishes(Supplier<PrefixIndex> make) {
        try (PrefixIndex index = make.get()) {
            Router r = router(index, true);
            RoutingDecision first = r.route(a);
            RoutingDecision other = r.route(c);
            first.prefillFinished();
            first.finished(); // its 4 blocks are no longer counted; C's 2 still are
            assertEquals(2, r.inflightBlocks());
            RoutingDecision again = r.route(a); // W1 0 + 16 against W2 8 + 16
            assertEquals(W1, again.worker());
            assertEquals(0, again.overlapBlocks());
            other.finished();
            again.finished();
            assertEquals(0, r.inflightBlocks());
        }
    }

    @ParameterizedTest
    @MethodSource("indexes")
    void pathsThatBranchAreCountedToTheirBranchPoint(Supplier<PrefixIndex> make) {
        try (PrefixIndex index = make.get()) {
            Router r = router(index, true);
            int[] b = tokens(0, 16);
            System.arraycopy(tokens(50, 8), 0, b, 8, 8); // A's first 2 blocks, then its own 2
            RoutingDecision first = r.route(a);
            RoutingDecision branch = r.route(b); // W1 16 + 8 (A's 2 shared blocks count there) against W2 0 + 16
            assertEquals(W2, branch.worker());
            assertEquals(0, branch.overlapBlocks());
            RoutingDecision again = r.route(a); // W1 16 + 0 against W2 16 + 8 (B's 2 shared blocks there)
            assertEquals(W1, again.worker());
            assertEquals(4, again.overlapBlocks());
            first.finished();
            again.finished();
            assertEquals(4, r.inflightBlocks()); // B's credit, through the branch point, is kept
            RoutingDecision third = r.route(a); // W1 0 + 16 against W2 16 + 8
            assertEquals(W1, third.worker());
            assertEquals(0, third.overlapBlocks());
            assertEquals(2, r.route(a, 0, 16, r.hasher(), W2::equals).overlapBlocks()); // up to the branch point
            assertEquals(4 + 4 + 4, r.inflightBlocks());
        }
    }

    @ParameterizedTest
    @MethodSource("indexes")
    void theCreditEndsOnceTheIndexHoldsTheBlocks(Supplier<PrefixIndex> make) {
        try (PrefixIndex index = make.get()) {
            Router r = router(index, true);
            RoutingDecision first = r.route(a);
            r.route(c);
            first.prefillFinished();
            r.route(tokens(200, 4)); // checks A: the index does not hold it yet, so it stays
            assertEquals(4 + 2 + 1, r.inflightBlocks());
            store(index, W1, tokens(0, 12)); // three of A's four blocks
            r.route(tokens(300, 4));
            assertEquals(4 + 2 + 1 + 1, r.inflightBlocks());
            store(index, W1, a);
            r.route(tokens(400, 4)); // now it holds all four: A's credit is taken back
            assertEquals(2 + 1 + 1 + 1, r.inflightBlocks());
            first.finished(); // already taken back: nothing changes
            assertEquals(5, r.inflightBlocks());
        }
    }

    @ParameterizedTest
    @MethodSource("indexes")
    void localHashRequestsArePredictedOnesAreCreditedToo(Supplier<PrefixIndex> make) {
        try (PrefixIndex index = make.get()) {
            Router r = router(index, true);
            RoutingDecision first = r.route(index.hasher().localHashes(a), 16);
            r.route(c);
            assertEquals(W1, r.route(index.hasher().localHashes(a), 16).worker());
            first.finished();
        }
        try (Router p = Router.builder()
                .indexConfig(IndexConfig.builder().blockSize(4).build())
                .predicted(true)
                .policy("kvprefix-ttft")
                .inflightPrefills(true)
                .worker(W1)
                .worker(W2)
                .build()) {
            p.route(a);
            assertEquals(4, p.inflightBlocks());
        }
    }

    @ParameterizedTest
    @MethodSource("indexes")
    void theBoundDropsAndCounts(Supplier<PrefixIndex> make) {
        try (PrefixIndex index = make.get()) {
            Router r = router(index, true);
            int[] huge = new int[4 * ((1 << 20) + 1)]; // one block more than the bound
            RoutingDecision d = r.route(huge);
            assertEquals(0, r.inflightBlocks());
            assertEquals(1, r.inflightDropped());
            d.finished();
        }
    }

    @ParameterizedTest
    @MethodSource("indexes")
    void thePeerPoliciesRefuseIt(Supplier<PrefixIndex> make) {
        try (PrefixIndex index = make.get()) {
            for (String p : new String[] {"sglang-cache-aware", "llm-d-scorers", "round-robin"}) {
                Router.Builder b = Router.builder()
                        .index(index)
                        .policy(p)
                        .inflightPrefills(true)
                        .worker(W1);
                assertThrows(IllegalStateException.class, b::build, p);
            }
        }
    }
}
