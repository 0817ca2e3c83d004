package io.kvprefix.testing;

import java.util.SplittableRandom;

/**
 * Sizes of randomized tests and their seeds. {@code -Dkvprefix.test.scale=long} (the {@code -Plong}
 * Maven profile) multiplies the iteration counts; {@code -Dkvprefix.test.seed=N} replays one seed.
 *
 * <p>Thread-safety: stateless.
 */
public final class TestScale {
    private TestScale() {}

    /** True under {@code -Plong}. */
    public static boolean isLong() {
        return "long".equals(System.getProperty("kvprefix.test.scale"));
    }

    /** {@code normal} in the default suite, {@code longRun} under {@code -Plong}. */
    public static int iterations(int normal, int longRun) {
        return isLong() ? longRun : normal;
    }

    /** The seed to use: {@code -Dkvprefix.test.seed} if given, otherwise a fresh random one. */
    public static long seed() {
        String s = System.getProperty("kvprefix.test.seed");
        if (s != null && !s.isBlank()) {
            return Long.parseLong(s.strip());
        }
        return new SplittableRandom().nextLong();
    }

    /** A message naming the seed and how to replay it. */
    public static String replay(long seed) {
        return "seed " + seed + " (replay with -Dkvprefix.test.seed=" + seed + ")";
    }
}
