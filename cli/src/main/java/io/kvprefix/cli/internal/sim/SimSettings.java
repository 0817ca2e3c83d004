package io.kvprefix.cli.internal.sim;

import io.kvprefix.workload.MockEngine;
import java.time.Duration;

/**
 * The settings of a routing simulation: the deployment, the cost model and the router's options.
 *
 * <p>The cost model is fixed so results compare from run to run (flags may change it; the defaults
 * stay): each worker runs one prefill at a time, first come first served, at {@code prefillTokensPerS}
 * uncached tokens per second; a request's time to first token is its queueing plus its own prefill;
 * decode runs beside prefill at {@code decodeTokensPerS} tokens per second per request, and the
 * request's blocks stay pinned in its engine (and count as active decode load in the router) until it
 * finishes.
 *
 * <p>Thread-safety: immutable.
 *
 * @param workers number of workers (mock engines), at least 1
 * @param cacheBlocks blocks per mock engine's prefix cache, at least 1
 * @param prefillTokensPerS prefill speed of one worker, uncached tokens per second, {@code > 0}
 * @param decodeTokensPerS decode speed of one request, tokens per second, {@code > 0}
 * @param seed seed of the random policy and of the router's sampling
 * @param overlapWeight the router's overlap weight
 * @param temperature the router's temperature
 * @param minMatchBlocks the router's minimum match in blocks
 * @param spreadMisses whether the router spreads misses
 * @param predictedTtl the predicted router's block time to live (simulated time)
 * @param predictedMaxBlocks the predicted router's bound on predicted blocks
 * @param cpuBlocks blocks of each mock engine's CPU tier (0: none): the GPU's evicted blocks go there,
 *     and a request whose prefix continues there loads those blocks instead of computing them
 * @param onloadTokensPerS how fast a worker loads tokens back from its CPU tier, {@code > 0}
 */
public record SimSettings(
        int workers,
        int cacheBlocks,
        double prefillTokensPerS,
        double decodeTokensPerS,
        long seed,
        double overlapWeight,
        double temperature,
        int minMatchBlocks,
        boolean spreadMisses,
        Duration predictedTtl,
        long predictedMaxBlocks,
        int cpuBlocks,
        double onloadTokensPerS) {
    /** Prefill speed of the fixed cost model: 10,000 uncached tokens per second per worker. */
    public static final double DEFAULT_PREFILL_TOKENS_PER_S = 10_000;
    /** Decode speed of the fixed cost model: 50 tokens per second per request. */
    public static final double DEFAULT_DECODE_TOKENS_PER_S = 50;
    /**
     * Onload speed from the CPU tier: 400,000 tokens per second, 40 times the prefill rate. From a
     * published measurement (H20, Qwen3-Coder-30B-A3B, vLLM 0.18.1's offloading connector, agentic-kvc):
     * a 64K-token prompt took 272 ms as a CPU hit and 111 ms as a GPU hit, so about 161 ms to load
     * 64K tokens over PCIe.
     */
    public static final double DEFAULT_ONLOAD_TOKENS_PER_S = 400_000;

    public SimSettings {
        if (workers < 1) {
            throw new IllegalArgumentException("--workers must be >= 1, got " + workers);
        }
        if (cacheBlocks < 1) {
            throw new IllegalArgumentException("--cache-blocks must be >= 1, got " + cacheBlocks);
        }
        if (!(prefillTokensPerS > 0) || Double.isInfinite(prefillTokensPerS)) {
            throw new IllegalArgumentException("--prefill-rate must be a positive number, got " + prefillTokensPerS);
        }
        if (!(decodeTokensPerS > 0) || Double.isInfinite(decodeTokensPerS)) {
            throw new IllegalArgumentException("--decode-rate must be a positive number, got " + decodeTokensPerS);
        }
        if (cpuBlocks < 0) {
            throw new IllegalArgumentException("--cpu-blocks must be >= 0, got " + cpuBlocks);
        }
        if (!(onloadTokensPerS > 0) || Double.isInfinite(onloadTokensPerS)) {
            throw new IllegalArgumentException("--onload-rate must be a positive number, got " + onloadTokensPerS);
        }
    }

    /** The defaults: 16 workers of 16,384 blocks, the fixed cost model, the router's defaults, seed 42. */
    public static SimSettings defaults() {
        return new SimSettings(
                16,
                MockEngine.DEFAULT_CAPACITY,
                DEFAULT_PREFILL_TOKENS_PER_S,
                DEFAULT_DECODE_TOKENS_PER_S,
                42,
                1.0,
                0.0,
                0,
                false,
                Duration.ofSeconds(120),
                1L << 20,
                0,
                DEFAULT_ONLOAD_TOKENS_PER_S);
    }
}
