package io.kvprefix.workload;

/**
 * A small seeded pseudo-random generator (SplitMix64) whose output is fixed by this class alone, so
 * a stream generated from a seed is the same on every JDK (the JDK's generators make no such promise
 * for every method across versions).
 *
 * <p>Algorithm: the state advances by the constant {@code 0x9E3779B97F4A7C15} per draw and each draw
 * is the state passed through the SplitMix64 finalizer. {@link #nextInt(int)} is unbiased (rejection
 * on the low part of a 64-bit multiply), {@link #nextDouble()} takes the top 53 bits, and the
 * continuous distributions use {@link StrictMath}, whose results are the same on every platform.
 *
 * <p>Thread-safety: not thread-safe; one generator per thread.
 */
public final class Rng {
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;
    private long state;

    /** A generator whose whole output is determined by {@code seed}. */
    public Rng(long seed) {
        this.state = seed;
    }

    /** A generator for a sub-stream: the same seed with a different {@code stream} gives unrelated output. */
    public static Rng forStream(long seed, long stream) {
        return new Rng(mix(seed ^ mix(stream + GOLDEN)));
    }

    /** The SplitMix64 finalizer: a bijective 64-bit mixing function. */
    public static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** 64 random bits. */
    public long nextLong() {
        state += GOLDEN;
        return mix(state);
    }

    /** Uniform in {@code 0 .. bound-1}; {@code bound >= 1}. */
    public int nextInt(int bound) {
        if (bound < 1) {
            throw new IllegalArgumentException("bound must be >= 1, got " + bound);
        }
        // Lemire's method on 32 random bits: unbiased thanks to the rejection step.
        long m = (nextLong() >>> 32) * bound;
        long low = m & 0xFFFF_FFFFL;
        if (low < bound) {
            long threshold = (0x1_0000_0000L - bound) % bound;
            while (low < threshold) {
                m = (nextLong() >>> 32) * bound;
                low = m & 0xFFFF_FFFFL;
            }
        }
        return (int) (m >>> 32);
    }

    /** Uniform in {@code [0, 1)}. */
    public double nextDouble() {
        return (nextLong() >>> 11) * 0x1.0p-53;
    }

    /** True with probability {@code p}. */
    public boolean chance(double p) {
        return nextDouble() < p;
    }

    /** Exponentially distributed with the given mean. */
    public double exponential(double mean) {
        return -mean * StrictMath.log(1.0 - nextDouble());
    }

    /** Log-normally distributed: {@code exp(N(ln median, sigma^2))}. */
    public double logNormal(double median, double sigma) {
        return median * StrictMath.exp(sigma * gaussian());
    }

    /** Standard normal (Box-Muller; one value per call, the second is dropped to keep the state simple). */
    public double gaussian() {
        double u1 = 1.0 - nextDouble(); // (0, 1]
        double u2 = nextDouble();
        return StrictMath.sqrt(-2.0 * StrictMath.log(u1)) * StrictMath.cos(2.0 * StrictMath.PI * u2);
    }
}
