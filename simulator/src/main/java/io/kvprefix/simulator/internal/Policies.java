package io.kvprefix.simulator.internal;

import io.kvprefix.RoutingPolicy;
import io.kvprefix.simulator.PolicyKind;
import io.kvprefix.simulator.SimSettings;
import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * Makes the policy of each {@link PolicyKind}: the cache-aware ones as kvprefix's
 * {@link io.kvprefix.Router} in the mode the kind names ({@link RouterBacked}), the baselines
 * ({@link Policy}).
 *
 * <p>Thread-safety: stateless.
 */
public final class Policies {
    /**
     * SMG's {@code max_tree_size} CLI default (2^26 tokens, {@code model_gateway/src/main.rs}); its tree
     * has no time to live, only this bound (least recently used first).
     */
    static final long SGLANG_MAX_TREE_TOKENS = 1L << 26;
    /** No time to live: SMG's tree and llm-d's LRU evict by size only. */
    static final Duration NO_TTL = Duration.ofDays(36_500);

    private Policies() {}

    /** A fresh policy of {@code kind} for a simulation with {@code settings} at {@code blockSize}. */
    public static Policy create(PolicyKind kind, SimSettings s, int blockSize, LongSupplier clock) {
        String key = kind.key();
        return switch (kind) {
            case KVPREFIX_TTFT -> events(key, RoutingPolicy.KVPREFIX_TTFT, s, blockSize, clock);
            case KVPREFIX_TTFT_PREDICTED ->
                RouterBacked.events(
                        key,
                        RouterBacked.builder(s, RoutingPolicy.KVPREFIX_TTFT, clock)
                                .predicted(true)
                                .predictedTtl(s.predictedTtl())
                                .predictedMaxBlocks(s.predictedMaxBlocks()),
                        s,
                        blockSize);
            case KVPREFIX_TTFT_INFLIGHT ->
                RouterBacked.events(
                        key,
                        RouterBacked.builder(s, RoutingPolicy.KVPREFIX_TTFT, clock)
                                .inflightPrefills(true),
                        s,
                        blockSize);
            case DYNAMO_COST -> events(key, RoutingPolicy.DYNAMO_COST, s, blockSize, clock);
            case DYNAMO_COST_GPU_ONLY ->
                RouterBacked.gpuEventsOnly(
                        key, RouterBacked.builder(s, RoutingPolicy.DYNAMO_COST, clock), s, blockSize);
            case DYNAMO_COST_APPROX ->
                RouterBacked.predicted(
                        key,
                        RouterBacked.builder(s, RoutingPolicy.DYNAMO_COST, clock)
                                .predictedTtl(s.predictedTtl())
                                .predictedMaxBlocks(s.predictedMaxBlocks()),
                        s,
                        blockSize);
            case SGLANG_CACHE_AWARE ->
                RouterBacked.predicted(
                        key,
                        RouterBacked.builder(s, RoutingPolicy.SGLANG_CACHE_AWARE, clock)
                                .predictedTtl(NO_TTL)
                                .predictedMaxBlocks(Math.max(1, SGLANG_MAX_TREE_TOKENS / blockSize)),
                        s,
                        blockSize);
            case SGLANG_CACHE_AWARE_EVENTS -> events(key, RoutingPolicy.SGLANG_CACHE_AWARE, s, blockSize, clock);
            // llm-d's approximate producer keeps one LRU per server sized by the engine's block count
            // (autoTune); here one LRU of the fleet's total stands in for them
            case LLM_D_SCORERS ->
                RouterBacked.predicted(
                        key,
                        RouterBacked.builder(s, RoutingPolicy.LLM_D_SCORERS, clock)
                                .predictedTtl(NO_TTL)
                                .predictedMaxBlocks((long) s.workers() * s.cacheBlocks()),
                        s,
                        blockSize);
            case LLM_D_SCORERS_PRECISE -> events(key, RoutingPolicy.LLM_D_SCORERS, s, blockSize, clock);
            case ROUND_ROBIN -> new Policy.RoundRobin(key);
            case RANDOM -> new Policy.RandomPolicy(key, s.seed());
            case LEAST_LOADED -> new Policy.LeastLoaded(key, s.workers());
        };
    }

    private static Policy events(String key, RoutingPolicy p, SimSettings s, int blockSize, LongSupplier clock) {
        return RouterBacked.events(key, RouterBacked.builder(s, p, clock), s, blockSize);
    }
}
