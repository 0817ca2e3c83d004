package io.kvprefix.internal.router;

/**
 * Argument checks shared by {@link io.kvprefix.Router} and its builder: each returns its value or
 * throws {@link IllegalArgumentException} with a one-line message naming the option.
 *
 * <p>Thread-safety: stateless.
 */
public final class OptionChecks {
    private OptionChecks() {}

    /** The block size of {@code h}, after checking that {@code localHashes} fit in {@code inputTokens}. */
    public static int fits(io.kvprefix.BlockHasher h, long[] localHashes, int inputTokens) {
        int bs = h.blockSize();
        if (inputTokens < (long) java.util.Objects.requireNonNull(localHashes, "localHashes").length * bs) {
            throw new IllegalArgumentException(
                    localHashes.length + " blocks of " + bs + " tokens do not fit in " + inputTokens + " input tokens");
        }
        return bs;
    }

    /** Checks that {@code h} has the router hasher {@code mine}'s chain seed. */
    public static void sameChainSeed(io.kvprefix.BlockHasher mine, io.kvprefix.BlockHasher h) {
        if (h.chainSeed() != mine.chainSeed()) {
            throw new IllegalArgumentException("the hasher's chain seed " + Long.toUnsignedString(h.chainSeed())
                    + " differs from the router's " + Long.toUnsignedString(mine.chainSeed()));
        }
    }

    /** {@code v} if it is finite and {@code >= 0}. */
    public static double finiteNonNegative(double v, String what) {
        if (!(v >= 0) || Double.isInfinite(v)) {
            throw new IllegalArgumentException(what + " must be a finite number >= 0, got " + v);
        }
        return v;
    }

    /** {@code w} if it is a finite capacity weight {@code > 0}. */
    public static double weight(double w) {
        if (!(w > 0) || Double.isInfinite(w)) {
            throw new IllegalArgumentException("capacity weight must be a finite number > 0, got " + w);
        }
        return w;
    }

    /** {@code v} if it lies in [0, 1]. */
    public static double unit(double v, String what) {
        if (!(v >= 0 && v <= 1)) {
            throw new IllegalArgumentException(what + " must be between 0 and 1, got " + v);
        }
        return v;
    }

    /** {@code n} if it is {@code >= 0}. */
    public static int nonNegative(int n, String what) {
        if (n < 0) {
            throw new IllegalArgumentException(what + " must be >= 0, got " + n);
        }
        return n;
    }
}
