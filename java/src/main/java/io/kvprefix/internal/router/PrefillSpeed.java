package io.kvprefix.internal.router;

/**
 * A worker's (or the fleet's) prefill speed, learned from finished prefills: a least-squares line
 * {@code duration = a + tokens / speed} over samples {@code (tokens, duration)}, each older sample
 * weighing {@code forgetting} times less than the next. Fitting the intercept keeps the speed
 * unbiased by the fixed part of every prefill (waiting for the step in progress, the last partial
 * step), which a plain tokens-over-time ratio would charge to the tokens.
 *
 * <p>Thread-safety: not thread-safe; used under its {@link LoadTable}'s lock.
 */
final class PrefillSpeed {
    /** Forgetting per sample of one worker's fit: about the last 100 prefills count. */
    static final double WORKER_FORGETTING = 0.99;
    /** Forgetting per sample of the fleet's fit: about the last 1,000 prefills count. */
    static final double FLEET_FORGETTING = 0.999;
    /** Samples (weighted) a fit needs before it gives a speed. */
    static final double MIN_SAMPLES = 5;

    private final double forgetting;
    private double n;
    private double su;
    private double sd;
    private double suu;
    private double sud;
    /** {@link #tokensPerNano()} as of the last sample: decisions read it for every worker. */
    private double speed;

    PrefillSpeed(double forgetting) {
        this.forgetting = forgetting;
    }

    /** Adds a prefill of {@code tokens} uncached tokens that took {@code nanos} nanoseconds. */
    void add(long tokens, long nanos) {
        n = n * forgetting + 1;
        su = su * forgetting + tokens;
        sd = sd * forgetting + nanos;
        suu = suu * forgetting + (double) tokens * tokens;
        sud = sud * forgetting + (double) tokens * nanos;
        speed = fit();
    }

    /** The weighted mean of the samples' tokens (0 without samples). */
    double meanTokens() {
        return n == 0 ? 0 : su / n;
    }

    /** The weighted number of samples. */
    double samples() {
        return n;
    }

    /**
     * Tokens per nanosecond: the inverse of the fitted slope, or 0 when unknown (fewer than
     * {@link #MIN_SAMPLES} samples, samples all of one size, or a slope that is not positive).
     */
    double tokensPerNano() {
        return speed;
    }

    private double fit() {
        if (n < MIN_SAMPLES) {
            return 0;
        }
        double den = n * suu - su * su;
        if (!(den > 1e-9 * n * suu)) {
            return 0;
        }
        double slope = (n * sud - su * sd) / den;
        return slope > 0 ? 1 / slope : 0;
    }
}
