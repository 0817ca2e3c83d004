package io.kvprefix.simulator.internal;

import io.kvprefix.BlockHasher;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.Medium;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Router;
import io.kvprefix.RoutingDecision;
import io.kvprefix.RoutingPolicy;
import io.kvprefix.Worker;
import io.kvprefix.simulator.SimSettings;
import java.util.function.LongSupplier;

/**
 * A policy backed by kvprefix's {@link Router} with one of its named policies
 * ({@link io.kvprefix.RoutingPolicy}): event-fed (its index hears the engines' KV events after the
 * event delay) or predicted (no events: the router records its own decisions). The router's clock is
 * the simulation's; the engines' metrics snapshots are reported to it
 * ({@link Router#reportEngineMetrics}) for the policies that read them.
 *
 * <p>Thread-safety: not thread-safe; one simulation thread drives it.
 */
final class RouterBacked implements Policy {
    private final String name;
    private final PrefixIndex index;
    private final Router router;
    private final BlockHasher hasher;

    private final boolean metrics;
    private final boolean gpuOnly;

    private RouterBacked(String name, PrefixIndex index, Router router, boolean gpuOnly) {
        this.name = name;
        this.index = index;
        this.router = router;
        this.hasher = router.hasher();
        this.metrics = router.policy() == RoutingPolicy.LLM_D_SCORERS;
        this.gpuOnly = gpuOnly;
    }

    /** A router builder for {@code policy} with the settings' options for it and the simulation's clock. */
    static Router.Builder builder(SimSettings s, RoutingPolicy policy, LongSupplier clock) {
        Router.Builder b = Router.builder().policy(policy).seed(s.seed()).clock(clock);
        if (policy == RoutingPolicy.DYNAMO_COST) {
            b.overlapWeight(s.overlapWeight()).temperature(s.temperature()).spreadMisses(s.spreadMisses());
        }
        if (policy == RoutingPolicy.DYNAMO_COST || policy == RoutingPolicy.KVPREFIX_TTFT) {
            b.minMatchBlocks(s.minMatchBlocks());
        }
        return b;
    }

    static IndexConfig config(SimSettings s, int blockSize) {
        return IndexConfig.builder()
                .blockSize(blockSize)
                .maxWorkers(Math.min(IndexConfig.MAX_WORKER_SLOTS, Math.max(1024, s.workers())))
                .build();
    }

    /** The router over an index fed with the engines' events. */
    static RouterBacked events(String name, Router.Builder b, SimSettings s, int blockSize) {
        PrefixIndex index = PrefixIndex.create(config(s, blockSize));
        return new RouterBacked(name, index, b.index(index).build(), false);
    }

    /** The router over an index fed the engines' GPU events only (their lower tiers' are dropped). */
    static RouterBacked gpuEventsOnly(String name, Router.Builder b, SimSettings s, int blockSize) {
        PrefixIndex index = PrefixIndex.create(config(s, blockSize));
        return new RouterBacked(name, index, b.index(index).build(), true);
    }

    /** The router predicting cache contents from its own decisions, with no events. */
    static RouterBacked predicted(String name, Router.Builder b, SimSettings s, int blockSize) {
        Router r = b.indexConfig(config(s, blockSize)).predicted(true).build();
        return new RouterBacked(name, null, r, false);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public void join(int worker) {
        router.addWorker(Worker.of(worker));
    }

    @Override
    public int route(SimRequest request, int[] tokens, int length) {
        RoutingDecision d = router.route(tokens, 0, length, hasher);
        request.decision(d);
        return (int) d.worker().workerId();
    }

    @Override
    public void prefillDone(SimRequest request) {
        request.decision().prefillFinished();
    }

    @Override
    public void finished(SimRequest request) {
        request.decision().finished();
        request.decision(null);
    }

    @Override
    public boolean wantsMetrics() {
        return metrics;
    }

    @Override
    public void metrics(int worker, int waiting, int running, double kvUsage) {
        router.reportEngineMetrics(Worker.of(worker), waiting, Math.min(1, kvUsage));
    }

    @Override
    public boolean wantsEvents() {
        return index != null;
    }

    @Override
    public void apply(KvEvent event) {
        boolean lower = switch (event) {
            case KvEvent.Copied c -> true;
            case KvEvent.Removed r -> r.medium() != Medium.GPU;
            case KvEvent.Stored st -> st.medium() != Medium.GPU;
            default -> false;
        };
        if (!(gpuOnly && lower)) {
            index.apply(event);
        }
    }

    @Override
    public void close() {
        router.close();
        if (index != null) {
            index.close();
        }
    }
}
