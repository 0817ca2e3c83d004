package io.kvprefix.standin.internal;

/**
 * The stand-in's output tokens: deterministic in the process's {@code --seed} and the prompt, so an
 * identical request gets the identical answer on any engine, and a longer {@code max_tokens} extends
 * a shorter one's answer. Token {@code i} is a SplitMix64 draw from the request's seed and {@code i},
 * below the model's vocabulary size.
 *
 * <p>Thread-safety: stateless.
 */
public final class OutputTokens {
    private OutputTokens() {}

    /** SplitMix64's finalizer. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** The seed of a request with {@code prompt}, for a process seeded {@code seed}. */
    public static long requestSeed(long seed, int[] prompt) {
        long h = mix(seed ^ 0x243F6A8885A308D3L);
        for (int t : prompt) {
            h = mix(h + 0x9E3779B97F4A7C15L + (t & 0xFFFFFFFFL));
        }
        return mix(h ^ prompt.length);
    }

    /** Output token {@code index} of the request seeded {@code requestSeed}, in {@code [0, vocab)}. */
    public static int token(long requestSeed, int index, int vocab) {
        return (int) Long.remainderUnsigned(mix(requestSeed + (index + 1) * 0x9E3779B97F4A7C15L), vocab);
    }
}
