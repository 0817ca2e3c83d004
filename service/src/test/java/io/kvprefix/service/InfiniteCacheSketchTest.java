package io.kvprefix.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.BlockHasher;
import io.kvprefix.simulator.Simulator;
import io.kvprefix.workload.SyntheticTrace;
import io.kvprefix.workload.Trace;
import io.kvprefix.workload.TraceRequest;
import java.util.Arrays;
import java.util.HashSet;
import org.junit.jupiter.api.Test;

/**
 * The online infinite-cache bound against the exact offline one of {@code simulate}
 * ({@link Simulator#infiniteCacheHitTokens}) on the built-in workload: exact while nothing is
 * sampled away, within its stated standard error once a small table forces sampling, and in fixed
 * memory throughout.
 */
class InfiniteCacheSketchTest {
    private static final BlockHasher CHAINS =
            BlockHasher.builder().blockSize(16).build();

    @Test
    void aLargeSketchIsExact() {
        Trace t = SyntheticTrace.generate(2000, 42);
        InfiniteCacheSketch s = feed(t, new InfiniteCacheSketch(1 << 20));
        assertEquals(0, s.level());
        assertEquals(exactHitBlocks(t), s.lowerBound());
        assertEquals(exactHitBlocks(t), s.upperBound());
        assertEquals(t.totalFullBlocks(), s.blocks());
    }

    /** A table far smaller than the distinct chains samples them, and its bracket still holds the exact bound. */
    @Test
    void aSmallSketchBracketsTheExactBound() {
        for (long seed : new long[] {42, 7, 1234}) {
            Trace t = SyntheticTrace.generate(4000, seed);
            long exact = exactHitBlocks(t);
            for (int capacity : new int[] {1 << 8, 1 << 12}) {
                InfiniteCacheSketch s = feed(t, new InfiniteCacheSketch(capacity));
                String at = "seed " + seed + ", capacity " + capacity + ": " + s.lowerBound() + " <= " + exact + " <= "
                        + s.upperBound() + " at level " + s.level() + ", estimate " + s.hitBlocks();
                assertTrue(s.level() >= 2, at);
                assertTrue(s.lowerBound() <= exact && exact <= s.upperBound(), at);
                assertEquals(8L * capacity, s.memoryBytes());
                if (capacity == 1 << 12) { // 32 KiB for about 28,000 distinct chains: within 5% of the blocks
                    assertTrue(Math.abs(s.hitBlocks() - exact) <= 0.05 * s.blocks(), at);
                }
            }
        }
    }

    @Test
    void aBadCapacityIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new InfiniteCacheSketch(100));
        assertThrows(IllegalArgumentException.class, () -> new InfiniteCacheSketch(32));
    }

    /**
     * Feeds every request's full blocks as chain hashes (any collision-free chain gives the same bound),
     * checking each request's bracket against its exact hit blocks, counted as {@code simulate} counts
     * them (the leading blocks seen before); the exact counts must add up to {@code simulate}'s total.
     */
    private static InfiniteCacheSketch feed(Trace t, InfiniteCacheSketch s) {
        HashSet<Long> seen = new HashSet<>();
        long exactTotal = 0;
        for (TraceRequest r : t.requests()) {
            int full = r.fullBlocks(t.tokensPerBlock());
            long[] chains = CHAINS.chainHashes(Arrays.copyOf(r.hashIds(), full));
            int exact = 0;
            while (exact < full && seen.contains(chains[exact])) {
                exact++;
            }
            for (int i = 0; i < full; i++) {
                seen.add(chains[i]);
            }
            exactTotal += exact;
            long lo = s.lowerBound();
            long hi = s.upperBound();
            s.observe(chains, full);
            long l = s.lowerBound() - lo;
            long h = s.upperBound() - hi;
            assertTrue(l <= exact && exact <= h, "request " + r.index() + ": " + l + " <= " + exact + " <= " + h);
        }
        assertEquals(exactHitBlocks(t), exactTotal);
        return s;
    }

    private static long exactHitBlocks(Trace t) {
        return Simulator.infiniteCacheHitTokens(t) / t.tokensPerBlock();
    }
}
