package io.kvprefix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** The router's credit for blocks on a lower tier (docs/SPEC.md sections 3.1 and 6). */
class RouterTiersTest {

    @Test
    void aLowerTierHitCountsAsTheConfiguredShareOfAGpuHit() {
        int[] tokens = new int[8 * 16];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = i;
        }
        try (PrefixIndex index = PrefixIndex.create(IndexConfig.defaults())) {
            long[] locals = index.hasher().localHashes(tokens);
            long[] names = {1, 2, 3, 4, 5, 6, 7, 8};
            // worker 1: the first 2 blocks on the GPU; worker 2: all 8, offloaded to the CPU, none left on the GPU
            index.apply(KvEvent.Stored.root(
                    Worker.of(1), java.util.Arrays.copyOf(names, 2), java.util.Arrays.copyOf(locals, 2)));
            index.apply(new KvEvent.Stored(Worker.of(2), OptionalLong.empty(), names, locals, Medium.CPU));
            for (double credit : new double[] {0.0, 0.2, 0.3, Router.DEFAULT_LOWER_TIER_CREDIT, 1.0}) {
                Router r = Router.builder()
                        .index(index)
                        .worker(Worker.of(1))
                        .worker(Worker.of(2))
                        .lowerTierCredit(credit)
                        .build();
                RoutingDecision d = r.route(tokens);
                // worker 2 counts as 8 * credit blocks: above worker 1's 2 from a credit of 0.25 on
                assertEquals(credit > 0.25 ? Worker.of(2) : Worker.of(1), d.worker(), "credit " + credit);
                d.finished();
            }
            Router dflt = Router.builder()
                    .index(index)
                    .worker(Worker.of(1))
                    .worker(Worker.of(2))
                    .build();
            assertEquals(Worker.of(2), dflt.route(tokens).worker(), "the default credit, 0.75");
        }
        assertThrows(IllegalArgumentException.class, () -> Router.builder().lowerTierCredit(1.5));
        assertThrows(IllegalArgumentException.class, () -> Router.builder().lowerTierCredit(Double.NaN));
    }
}
