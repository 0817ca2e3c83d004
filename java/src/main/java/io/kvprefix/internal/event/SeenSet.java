package io.kvprefix.internal.event;

/**
 * A set of 64-bit values for one duplicate check at a time: open addressing over a stamped table,
 * so starting a new check is one increment instead of clearing the table. Rule 1 of a store asks
 * whether an engine hash repeats among dozens of blocks; this answers with a few instructions a
 * block where a general hash set costs tens of nanoseconds.
 *
 * <p>Thread-safety: not thread-safe; one instance per writing thread.
 */
final class SeenSet {
    private long[] keys = new long[64];
    private int[] stamps = new int[64];
    private int stamp;

    /** Starts a new check for up to {@code n} values. */
    void start(int n) {
        if (keys.length < 2 * n) {
            int cap = Integer.highestOneBit(Math.max(64, 2 * n) - 1) << 1;
            keys = new long[cap];
            stamps = new int[cap];
            stamp = 0;
        }
        if (++stamp == 0) { // wrapped: old stamps could look current
            java.util.Arrays.fill(stamps, 0);
            stamp = 1;
        }
    }

    /** Adds {@code v}; false if it was added already in this check. */
    boolean add(long v) {
        int mask = keys.length - 1;
        long h = v * 0x9E3779B97F4A7C15L;
        int i = (int) (h ^ (h >>> 32)) & mask;
        while (stamps[i] == stamp) {
            if (keys[i] == v) {
                return false;
            }
            i = (i + 1) & mask;
        }
        stamps[i] = stamp;
        keys[i] = v;
        return true;
    }

    /** True if {@code v} was added in this check. */
    boolean contains(long v) {
        int mask = keys.length - 1;
        long h = v * 0x9E3779B97F4A7C15L;
        int i = (int) (h ^ (h >>> 32)) & mask;
        while (stamps[i] == stamp) {
            if (keys[i] == v) {
                return true;
            }
            i = (i + 1) & mask;
        }
        return false;
    }
}
