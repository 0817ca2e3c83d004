package io.kvprefix.tokenizer;

import java.time.Duration;

/**
 * Settings for {@link Tokenizers#open(String, TokenizerOptions)} (docs/TOKENIZER.md sections 4 and 6).
 *
 * <p>Thread-safety: immutable.
 *
 * @param renderTimeout how long {@code render} mode waits for the renderer's reply, connecting included
 * @param segmentCacheEntries the most pieces {@code local} mode's segment cache holds; 0 turns it off
 * @param segmentCacheBytes about the most bytes the segment cache holds
 */
public record TokenizerOptions(Duration renderTimeout, int segmentCacheEntries, long segmentCacheBytes) {
    /** Checks the values. */
    public TokenizerOptions {
        if (renderTimeout == null || renderTimeout.isNegative() || renderTimeout.isZero()) {
            throw new IllegalArgumentException("renderTimeout must be positive, not " + renderTimeout);
        }
        if (segmentCacheEntries < 0 || segmentCacheBytes < 0) {
            throw new IllegalArgumentException("segment cache bounds must not be negative");
        }
    }

    /** 5 s render timeout (llm-d's for text), a segment cache of 65,536 pieces and 64 MiB. */
    public static TokenizerOptions defaults() {
        return new TokenizerOptions(Duration.ofSeconds(5), 65_536, 64L << 20);
    }

    /** These options with another render timeout. */
    public TokenizerOptions withRenderTimeout(Duration timeout) {
        return new TokenizerOptions(timeout, segmentCacheEntries, segmentCacheBytes);
    }

    /** These options with other segment cache bounds (0 entries: no cache). */
    public TokenizerOptions withSegmentCache(int entries, long bytes) {
        return new TokenizerOptions(renderTimeout, entries, bytes);
    }
}
