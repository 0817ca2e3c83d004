package io.kvprefix.simulator;

import java.util.Objects;

/**
 * The settings of one {@link Engine}: its scheduler and its speeds (the package description,
 * <i>The engine model</i>, has the step rule they enter). {@link SimSettings#engineSettings(double)}
 * gives a simulation's; a stand-in engine builds its own from {@link #defaults()}.
 *
 * <p>Thread-safety: immutable.
 *
 * @param model the scheduler
 * @param prefillTokensPerS prefill speed, uncached tokens per second
 * @param decodeTokensPerS decode speed of one request on an idle engine, tokens per second
 *     ({@code vllm-chunked}: decode-only steps per second)
 * @param maxBatchedTokens token budget of one step ({@code vllm-chunked}; vLLM's {@code max_num_batched_tokens})
 * @param maxNumSeqs most running requests ({@code vllm-chunked}; vLLM's {@code max_num_seqs})
 * @param onloadTokensPerS how fast blocks are loaded back from the cache's CPU tier, tokens per second
 * @param slowness how many times longer than these speeds say every step takes (1: as set)
 * @param decodeRuns whether a run of identical decode-only steps is one timer ({@code vllm-chunked}):
 *     the same times as stepping one by one, far fewer timers, but the run's tokens are reported when
 *     it ends; a driver that streams tokens as they are decoded turns it off
 */
public record EngineSettings(
        EngineModel model,
        double prefillTokensPerS,
        double decodeTokensPerS,
        int maxBatchedTokens,
        int maxNumSeqs,
        double onloadTokensPerS,
        double slowness,
        boolean decodeRuns) {

    public EngineSettings {
        Objects.requireNonNull(model, "model");
        positive(prefillTokensPerS, "prefill tokens per second");
        positive(decodeTokensPerS, "decode tokens per second");
        positive(onloadTokensPerS, "onload tokens per second");
        if (maxBatchedTokens < 1 || maxNumSeqs < 1) {
            throw new IllegalArgumentException("max batched tokens and max running requests must be >= 1, got "
                    + maxBatchedTokens + " and " + maxNumSeqs);
        }
        if (!(slowness >= 1) || Double.isInfinite(slowness)) {
            throw new IllegalArgumentException("slowness must be a finite number >= 1, got " + slowness);
        }
    }

    /** The simulation's defaults: {@code vllm-chunked}, the speeds of {@link SimSettings}'s constants, decode runs on. */
    public static EngineSettings defaults() {
        return new EngineSettings(
                EngineModel.VLLM_CHUNKED,
                SimSettings.DEFAULT_PREFILL_TOKENS_PER_S,
                SimSettings.DEFAULT_DECODE_TOKENS_PER_S,
                SimSettings.DEFAULT_MAX_BATCHED_TOKENS,
                SimSettings.DEFAULT_MAX_NUM_SEQS,
                SimSettings.DEFAULT_ONLOAD_TOKENS_PER_S,
                1,
                true);
    }

    /** These settings with another scheduler. */
    public EngineSettings withModel(EngineModel m) {
        return new EngineSettings(
                m,
                prefillTokensPerS,
                decodeTokensPerS,
                maxBatchedTokens,
                maxNumSeqs,
                onloadTokensPerS,
                slowness,
                decodeRuns);
    }

    /** These settings with other prefill and decode speeds, tokens per second. */
    public EngineSettings withSpeeds(double prefill, double decode) {
        return new EngineSettings(
                model, prefill, decode, maxBatchedTokens, maxNumSeqs, onloadTokensPerS, slowness, decodeRuns);
    }

    /** These settings with another step budget and most running requests. */
    public EngineSettings withLimits(int batchedTokens, int numSeqs) {
        return new EngineSettings(
                model,
                prefillTokensPerS,
                decodeTokensPerS,
                batchedTokens,
                numSeqs,
                onloadTokensPerS,
                slowness,
                decodeRuns);
    }

    /** These settings with decode runs on or off. */
    public EngineSettings withDecodeRuns(boolean on) {
        return new EngineSettings(
                model,
                prefillTokensPerS,
                decodeTokensPerS,
                maxBatchedTokens,
                maxNumSeqs,
                onloadTokensPerS,
                slowness,
                on);
    }

    private static void positive(double v, String what) {
        if (!(v > 0) || Double.isInfinite(v)) {
            throw new IllegalArgumentException(what + " must be a positive number, got " + v);
        }
    }
}
