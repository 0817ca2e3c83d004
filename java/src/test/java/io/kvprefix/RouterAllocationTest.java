package io.kvprefix;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kvprefix.testing.ThreadAllocation;
import org.junit.jupiter.api.Test;

/**
 * The hot path allocates nothing but the decision: an 8k-token request at 16-token blocks, routed
 * over an off-heap index many times, allocates well under the size of a few small objects per call.
 */
class RouterAllocationTest {

    @Test
    void routingAllocatesOnlyTheDecision() throws ReflectiveOperationException {
        ThreadAllocation allocation = ThreadAllocation.counter();
        assumeTrue(allocation != null, "needs HotSpot's allocation counter");

        int[] request = new int[8192];
        for (int i = 0; i < request.length; i++) {
            request[i] = i * 7 + 1;
        }
        try (PrefixIndex index =
                PrefixIndex.create(IndexConfig.builder().blockSize(16).build())) {
            BlockHasher h = index.hasher();
            long[] local = h.localHashes(request);
            long[] chain = h.chainHashes(local);
            Router.Builder b = Router.builder().index(index);
            for (int w = 1; w <= 8; w++) {
                int depth = local.length * w / 8;
                index.apply(KvEvent.Stored.root(
                        Worker.of(w), java.util.Arrays.copyOf(chain, depth), java.util.Arrays.copyOf(local, depth)));
                b.worker(Worker.of(w));
            }
            try (Router router = b.build()) {
                for (int i = 0; i < 3_000; i++) {
                    router.route(request).finished();
                }
                int n = 2_000;
                long before = allocation.bytes();
                for (int i = 0; i < n; i++) {
                    RoutingDecision d = router.route(request);
                    d.prefillFinished();
                    d.finished();
                }
                long perCall = (allocation.bytes() - before) / n;
                // The decision is about 64 bytes; anything per block (512 blocks) would be kilobytes. The
                // native match itself allocates about 70 bytes per call today (heap-segment wrappers of
                // the request), which this bound leaves room for.
                assertTrue(
                        perCall <= 160,
                        "a decision allocated " + perCall + " bytes ("
                                + index.config().implementation() + ")");
            }
        }
    }
}
