package io.kvprefix;

import java.util.List;
import java.util.Locale;

/**
 * The policies a {@link Router} can route with, each by the name {@link Router.Builder#policy(String)}
 * takes: {@link #DYNAMO_COST} (the default), {@link #SGLANG_CACHE_AWARE}, {@link #LLM_D_SCORERS},
 * kvprefix's own
 * {@link #KVPREFIX_TTFT}, and the cache-blind baseline {@link #ROUND_ROBIN}. The peers' policies are named after their projects and
 * follow their published source and defaults; docs/SPEC.md section 6 states each one exactly.
 *
 * <p>Thread-safety: immutable (an enum).
 */
public enum RoutingPolicy {
    /**
     * NVIDIA Dynamo's KV router cost ({@code lib/kv-router/src/scheduling/selector/default.rs}, defaults
     * of {@code config.rs}): {@code overlapWeight * prefill_blocks + decode_blocks}, lowest wins; the
     * default, and the only policy the overlap weight, temperature and miss spreading apply to.
     */
    DYNAMO_COST("dynamo-cost"),
    /**
     * SMG's {@code cache_aware} policy ({@code smg-project/smg}, {@code model_gateway/src/policies/cache_aware.rs},
     * CLI defaults {@code cache_threshold} 0.3, {@code balance_abs_threshold} 64, {@code balance_rel_threshold}
     * 1.5): load is the router's in-flight requests per worker. With an event-fed index the candidates are
     * the workers with any overlap (SMG's event-driven mode); with only predicted mode, the workers at the
     * deepest match, when it covers more than 30% of the request (SMG's tree mode).
     */
    SGLANG_CACHE_AWARE("sglang-cache-aware"),
    /**
     * llm-d's scheduler default profile ({@code llm-d/llm-d-router}, {@code pkg/epp/config/loader/defaults.go}):
     * {@code 2 * queue + 2 * kv_cache_utilization + 3 * prefix_cache}, highest wins, random ties. The
     * queue and utilization inputs are the engines' metrics as the caller reports them
     * ({@link Router#reportEngineMetrics}).
     */
    LLM_D_SCORERS("llm-d-scorers"),
    /**
     * kvprefix's policy: the least estimated time to first token, from the prefill backlog the router
     * has sent each worker, the progress the worker has made on it and the speed the router has
     * measured. It needs {@link RoutingDecision#prefillFinished()} calls on time (the router learns
     * each worker's prefill speed from them).
     */
    KVPREFIX_TTFT("kvprefix-ttft"),
    /**
     * The cache-blind baseline: the next registered worker in worker order after the previous decision's,
     * whatever the index holds and whatever the load (the match is still made and reported). For
     * comparisons, such as the demo's live leg, and for deployments that want a plain proxy.
     */
    ROUND_ROBIN("round-robin");

    private final String policyName;

    RoutingPolicy(String policyName) {
        this.policyName = policyName;
    }

    /** The policy's name, such as {@code dynamo-cost}. */
    public String policyName() {
        return policyName;
    }

    /**
     * The policy named {@code name} (case and surrounding blanks ignored).
     *
     * @throws IllegalArgumentException naming the known policies if there is none by that name
     */
    public static RoutingPolicy of(String name) {
        String n = name.strip().toLowerCase(Locale.ROOT);
        for (RoutingPolicy p : values()) {
            if (p.policyName.equals(n)) {
                return p;
            }
        }
        throw new IllegalArgumentException(
                "unknown routing policy '" + name + "': known policies are " + String.join(", ", names()));
    }

    /** Every policy's name, in declaration order. */
    public static List<String> names() {
        return List.of(values()).stream().map(RoutingPolicy::policyName).toList();
    }

    @Override
    public String toString() {
        return policyName;
    }
}
