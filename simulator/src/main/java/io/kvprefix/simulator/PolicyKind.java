package io.kvprefix.simulator;

import io.kvprefix.RoutingPolicy;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The policies a simulation can compare, by the name {@code --policies} takes and reports show. The
 * cache-aware ones are kvprefix's {@link io.kvprefix.Router} with one of its named policies
 * ({@link RoutingPolicy}, docs/SPEC.md section 6), in the mode its project runs by default and in the
 * other mode (with or without KV events); all run on the same engines, events and seeds.
 *
 * <p>Thread-safety: immutable (an enum).
 */
public enum PolicyKind {
    /** kvprefix's policy, the least estimated time to first token, over the event-fed index. */
    KVPREFIX_TTFT("kvprefix-ttft", "kvprefix: least estimated TTFT (backlog, progress, learned speed), KV events"),
    /**
     * kvprefix-ttft with predicted blocks on top of the events (the router's own decisions, Dynamo's
     * TTL of 120 s), which cover the blocks routed but not yet in any event: the event lag, which past
     * saturation is the queueing time.
     */
    KVPREFIX_TTFT_PREDICTED(
            "kvprefix-ttft-predicted",
            "kvprefix-ttft + the router's own decisions as predicted blocks (TTL 120 s) over the event lag"),
    /**
     * kvprefix-ttft counting in-flight prefills (docs/SPEC.md section 6.7): a request's blocks count
     * as cached on its worker from the decision until the engine's events cover them or it finishes.
     */
    KVPREFIX_TTFT_INFLIGHT(
            "kvprefix-ttft-inflight",
            "kvprefix-ttft + each routed request's blocks counted on its worker until its events or its end"),
    /** Dynamo's KV router cost over an index fed with the engines' KV events (Dynamo's default mode). */
    DYNAMO_COST("dynamo-cost", "NVIDIA Dynamo: overlap x prefill + decode blocks, KV events (its default)"),
    /** Dynamo's cost without events: the router predicts cache contents from its decisions (TTL 120 s). */
    DYNAMO_COST_APPROX("dynamo-cost-approx", "NVIDIA Dynamo without KV events: predicted blocks, TTL 120 s"),
    /** SMG's cache-aware policy in its default tree mode: the tree is the routing history, no events. */
    SGLANG_CACHE_AWARE(
            "sglang-cache-aware", "SGLang gateway (SMG) cache_aware: tree of routed prompts, threshold 0.3 (default)"),
    /** SMG's cache-aware policy in its event-driven mode. */
    SGLANG_CACHE_AWARE_EVENTS("sglang-cache-aware-events", "SGLang gateway (SMG) cache_aware, event-driven mode"),
    /** llm-d's default scorer profile with its default approximate prefix producer (no events). */
    LLM_D_SCORERS(
            "llm-d-scorers", "llm-d: 2 queue + 2 kv-util + 3 prefix, approximate prefix (routed prompts, default)"),
    /** llm-d's scorers with the precise (KV-event-fed) prefix producer. */
    LLM_D_SCORERS_PRECISE("llm-d-scorers-precise", "llm-d: the same scorers, precise prefix (KV events)"),
    /**
     * dynamo-cost fed only the GPU's events (the engines' lower-tier events dropped): what kvprefix did
     * before it knew of lower tiers. A diagnostic for {@code --cpu-blocks}, not in {@code all}.
     */
    DYNAMO_COST_GPU_ONLY(
            "dynamo-cost-gpu-only", "dynamo-cost fed the GPU's KV events only (a diagnostic for --cpu-blocks)"),
    /** Worker {@code i mod N} for the {@code i}-th request. */
    ROUND_ROBIN("round-robin", "the next worker in turn"),
    /** A uniformly random worker (seeded). */
    RANDOM("random", "a uniformly random worker"),
    /** The worker with the fewest requests in flight (ties: fewest queued prefill tokens, then the lowest). */
    LEAST_LOADED("least-loaded", "the fewest requests in flight");

    private final String key;
    private final String description;

    PolicyKind(String key, String description) {
        this.key = key;
        this.description = description;
    }

    /** The name: the {@code --policies} key and the name in reports. */
    public String key() {
        return key;
    }

    /** One line on what the policy is. */
    public String description() {
        return description;
    }

    /** True for the policies that look at the cache (everything but the load-only baselines). */
    public boolean cacheAware() {
        return this != ROUND_ROBIN && this != RANDOM && this != LEAST_LOADED;
    }

    /** True for the policies {@code all} names: every one but the diagnostic {@link #DYNAMO_COST_GPU_ONLY}. */
    public boolean inAll() {
        return this != DYNAMO_COST_GPU_ONLY;
    }

    /** Every kind {@code all} names, in order. */
    public static List<PolicyKind> all() {
        return List.of(values()).stream().filter(PolicyKind::inAll).toList();
    }

    /** The kinds named by {@code names} (keys; {@code all} is {@link #all()}), in order, once each. */
    public static List<PolicyKind> parse(List<String> names) {
        List<PolicyKind> out = new ArrayList<>();
        for (String n : names) {
            for (PolicyKind k : n.strip().equalsIgnoreCase("all") ? all() : List.of(of(n))) {
                if (!out.contains(k)) {
                    out.add(k);
                }
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("--policies names no policy");
        }
        return List.copyOf(out);
    }

    /** The kind with this key. */
    public static PolicyKind of(String key) {
        String k = key.strip().toLowerCase(Locale.ROOT);
        for (PolicyKind kind : values()) {
            if (kind.key.equals(k)) {
                return kind;
            }
        }
        throw new IllegalArgumentException("unknown policy '" + key + "': known policies are all, "
                + String.join(
                        ", ", List.of(values()).stream().map(PolicyKind::key).toList()));
    }
}
