package io.kvprefix;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kvprefix.testing.TestScale;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Randomized cross-check of the native and portable paths: random token arrays (lengths 0..10,000),
 * block sizes 1..600, random seeds, salts and multimodal extras. Prints the seed on failure.
 */
class HashCrossCheckTest {

    @Test
    void nativeEqualsPortableOnRandomInput() {
        long seed = TestScale.seed();
        int cases = TestScale.iterations(300, 5_000);
        SplittableRandom rnd = new SplittableRandom(seed);
        for (int c = 0; c < cases; c++) {
            String where = "case " + c + ", " + TestScale.replay(seed);
            int length = rnd.nextInt(10_001);
            int blockSize = 1 + rnd.nextInt(600);
            int offset = rnd.nextInt(4);
            int[] tokens = new int[offset + length + rnd.nextInt(4)];
            for (int i = 0; i < tokens.length; i++) {
                tokens[i] = rnd.nextInt(); // every u32 bit pattern
            }
            long baseSeed = rnd.nextBoolean() ? 1337 : rnd.nextLong();
            long chainSeed = rnd.nextInt(4) == 0 ? 0 : 1337;
            String lora = rnd.nextInt(3) == 0 ? "lora-" + rnd.nextInt(1000) : null;
            String ns = rnd.nextInt(3) == 0 ? "ns-\u00fc" + rnd.nextInt(1000) : null;
            BlockHasher nat = build(Implementation.NATIVE, blockSize, baseSeed, chainSeed, lora, ns);
            BlockHasher por = build(Implementation.PORTABLE, blockSize, baseSeed, chainSeed, lora, ns);
            assertEquals(nat.seed(), por.seed(), where);

            int blocks = length / blockSize;
            long[] ln = new long[blocks], cn = new long[blocks], lp = new long[blocks], cp = new long[blocks];
            assertEquals(blocks, nat.hashBlocks(tokens, offset, length, ln, cn), where);
            assertEquals(blocks, por.hashBlocks(tokens, offset, length, lp, cp), where);
            assertArrayEquals(lp, ln, where);
            assertArrayEquals(cp, cn, where);
            assertArrayEquals(lp, nat.localHashes(tokens, offset, length), where);
            assertArrayEquals(cp, por.chainHashes(lp), where);

            if (blocks > 0 && rnd.nextInt(4) == 0) {
                long[][] extras = new long[blocks][];
                for (int b = 0; b < blocks; b++) {
                    int k = rnd.nextInt(4) == 0 ? 0 : rnd.nextInt(5);
                    extras[b] = new long[k];
                    for (int i = 0; i < k; i++) {
                        extras[b][i] = rnd.nextLong();
                    }
                }
                long[] mn = new long[blocks], mcn = new long[blocks], mp = new long[blocks], mcp = new long[blocks];
                nat.hashBlocks(tokens, offset, length, extras, mn, mcn);
                por.hashBlocks(tokens, offset, length, extras, mp, mcp);
                assertArrayEquals(mp, mn, "multimodal " + where);
                assertArrayEquals(mcp, mcn, "multimodal chain " + where);
                assertArrayEquals(mp, nat.localHashes(tokens, offset, length, extras), "multimodal " + where);
            }
        }
    }

    private static BlockHasher build(
            Implementation impl, int blockSize, long seed, long chainSeed, String lora, String ns) {
        return BlockHasher.builder()
                .blockSize(blockSize)
                .seed(seed)
                .chainSeed(chainSeed)
                .loraName(lora)
                .cacheNamespace(ns)
                .implementation(impl)
                .build();
    }
}
