package io.kvprefix.service;

import java.util.Arrays;

/**
 * The infinite-cache bound online in fixed memory (issue 31 item 3): per request, its leading full
 * blocks whose chain hash (naming the whole prefix) an earlier request had, as {@code simulate}
 * counts them offline. It keeps an exact set of a hash-sampled share {@code 2^-level} of the chains
 * (sampled when the top {@code level} bits of the mixed hash are zero); a table 3/4 full raises the
 * level and keeps the half still sampled, so a sampled chain is in the set exactly when it was seen.
 *
 * <p>Error, as a bracket that always holds: a request's run ends after its last sampled block found
 * and at or before its first sampled block not found, so {@link #lowerBound()} and
 * {@link #upperBound()} enclose the exact bound ({@link #hitBlocks()} is their midpoint), and they
 * meet while the level is 0. 8 bytes per slot. {@code InfiniteCacheSketchTest} checks each request's
 * bracket against the exact count and the total against {@code Simulator.infiniteCacheHitTokens}.
 *
 * <p>Thread-safety: thread-safe; every method takes this object's lock.
 */
public final class InfiniteCacheSketch {
    /** The default capacity: 2^20 slots, 8 MiB. */
    public static final int DEFAULT_CAPACITY = 1 << 20;

    private static final long EMPTY = 0L;
    private final long[] keys;
    private final int mask;
    private int size;
    private int level;
    private boolean zeroSeen;
    private long lower;
    private long upper;
    private long blocks;

    /**
     * A sketch of {@code capacity} slots.
     *
     * @throws IllegalArgumentException unless {@code capacity} is a power of two from 64 to 2^28
     */
    public InfiniteCacheSketch(int capacity) {
        if (capacity < 64 || capacity > 1 << 28 || Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("capacity must be a power of two from 64 to 2^28, got " + capacity);
        }
        keys = new long[capacity];
        mask = capacity - 1;
    }

    /**
     * Counts one request's full blocks, given as their chain hashes {@code chains[0..n)} in prefix
     * order, against every chain seen before it, then remembers them. Returns the request's estimated
     * hit blocks (the midpoint of its bracket).
     */
    public synchronized double observe(long[] chains, int n) {
        int lo = 0;
        int hi = n;
        for (int i = 0; i < n; i++) {
            long c = chains[i];
            if (sampled(c)) {
                if (contains(c)) {
                    lo = i + 1;
                } else {
                    hi = i;
                    break;
                }
            }
        }
        for (int i = 0; i < n; i++) {
            if (sampled(chains[i])) {
                insert(chains[i]);
            }
        }
        blocks += n;
        lower += lo;
        upper += hi;
        return (lo + hi) / 2.0;
    }

    /** The estimated full blocks of every request so far that the infinite cache would have held. */
    public synchronized double hitBlocks() {
        return (lower + upper) / 2.0;
    }

    /** At most the exact count of {@link #hitBlocks()}: the sampled blocks found, and those before them. */
    public synchronized long lowerBound() {
        return lower;
    }

    /** At least the exact count of {@link #hitBlocks()}: the blocks before each first sampled block not found. */
    public synchronized long upperBound() {
        return upper;
    }

    /** The full blocks of every request so far. */
    public synchronized long blocks() {
        return blocks;
    }

    /** The estimated hit share of the full blocks, 0 before any block. */
    public synchronized double hitRate() {
        return blocks == 0 ? 0 : (lower + upper) / 2.0 / blocks;
    }

    /** The sampling level: a chain is kept with probability {@code 2^-level}. */
    public synchronized int level() {
        return level;
    }

    /** The bytes the sketch's tables take. */
    public long memoryBytes() {
        return 8L * keys.length;
    }

    private boolean sampled(long chain) {
        return level == 0 || mix(chain) >>> (64 - level) == 0;
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 33)) * 0xFF51AFD7ED558CCDL;
        z = (z ^ (z >>> 33)) * 0xC4CEB9FE1A85EC53L;
        return z ^ (z >>> 33);
    }

    /** True if {@code c} is in the set (the chain 0 is kept aside, since 0 marks an empty slot). */
    private boolean contains(long c) {
        if (c == EMPTY) {
            return zeroSeen;
        }
        for (int i = (int) mix(c) & mask; ; i = (i + 1) & mask) {
            if (keys[i] == c) {
                return true;
            }
            if (keys[i] == EMPTY) {
                return false;
            }
        }
    }

    private void insert(long c) {
        if (c == EMPTY) {
            zeroSeen = true;
            return;
        }
        if (contains(c)) {
            return;
        }
        place(c);
        size++;
        while (size > keys.length / 4 * 3) {
            raiseLevel();
        }
    }

    private void place(long c) {
        int i = (int) mix(c) & mask;
        while (keys[i] != EMPTY) {
            i = (i + 1) & mask;
        }
        keys[i] = c;
    }

    /** Doubles the sampling interval: keeps the chains still sampled at the next level. */
    private void raiseLevel() {
        level++;
        long[] oldKeys = keys.clone();
        Arrays.fill(keys, EMPTY);
        size = 0;
        for (long k : oldKeys) {
            if (k != EMPTY && sampled(k)) {
                place(k);
                size++;
            }
        }
    }
}
