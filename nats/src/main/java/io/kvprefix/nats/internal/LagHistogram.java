package io.kvprefix.nats.internal;

/**
 * Lags in microseconds, counted in log-scale buckets 2^(1/16) wide (quantiles are exact to within
 * 4.4 %), from 1 µs to about 1.2 h; larger values land in the last bucket.
 *
 * <p>Thread-safety: every method is {@code synchronized}.
 */
public final class LagHistogram {
    private static final int PER_OCTAVE = 16;
    private static final int BUCKETS = 32 * PER_OCTAVE;
    private final long[] counts = new long[BUCKETS];
    private long total;
    private long max;

    /** Counts one lag. */
    public synchronized void add(long micros) {
        long v = Math.max(1, micros);
        int b = (int) Math.min(BUCKETS - 1, Math.floor(Math.log(v) / Math.log(2) * PER_OCTAVE));
        counts[b]++;
        total++;
        max = Math.max(max, micros);
    }

    /** How many lags were counted. */
    public synchronized long count() {
        return total;
    }

    /** The largest lag counted, in microseconds (0 if none). */
    public synchronized long max() {
        return max;
    }

    /** The {@code q} quantile (0 to 1) in microseconds, the upper edge of its bucket; -1 if nothing was counted. */
    public synchronized long quantile(double q) {
        if (total == 0) {
            return -1;
        }
        long rank = (long) Math.ceil(q * total);
        long seen = 0;
        for (int b = 0; b < BUCKETS; b++) {
            seen += counts[b];
            if (seen >= Math.max(1, rank)) {
                return Math.min(max, (long) Math.ceil(Math.pow(2, (b + 1) / (double) PER_OCTAVE)));
            }
        }
        return max;
    }
}
