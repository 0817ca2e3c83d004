package io.kvprefix.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The generator behind every seeded stream: the published SplitMix64 sequence, and sane draws. */
class RngTest {

    @Test
    void isSplitMix64() {
        // the reference SplitMix64 outputs for seed 0
        Rng r = new Rng(0);
        assertEquals(0xE220A8397B1DCDAFL, r.nextLong());
        assertEquals(0x6E789E6AA1B965F4L, r.nextLong());
        assertEquals(0x06C45D188009454FL, r.nextLong());
    }

    @Test
    void boundedDrawsAreInRangeAndRoughlyUniform() {
        Rng r = new Rng(123);
        int[] counts = new int[7];
        for (int i = 0; i < 70_000; i++) {
            counts[r.nextInt(7)]++;
        }
        for (int c : counts) {
            assertTrue(c > 9_500 && c < 10_500, java.util.Arrays.toString(counts));
        }
        assertEquals(0, new Rng(5).nextInt(1));
        assertThrows(IllegalArgumentException.class, () -> r.nextInt(0));
        for (int i = 0; i < 10_000; i++) {
            double d = r.nextDouble();
            assertTrue(d >= 0 && d < 1);
        }
        double sum = 0;
        for (int i = 0; i < 100_000; i++) {
            sum += r.exponential(3.0);
        }
        assertEquals(3.0, sum / 100_000, 0.05);
        assertNotEquals(Rng.forStream(1, 1).nextLong(), Rng.forStream(1, 2).nextLong());
    }
}
