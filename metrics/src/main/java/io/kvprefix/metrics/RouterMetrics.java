package io.kvprefix.metrics;

import io.kvprefix.Router;
import io.kvprefix.RoutingDecision;
import io.kvprefix.RoutingObserver;
import io.kvprefix.Worker;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The meters of a {@link Router} (docs/METRICS.md section 1): decisions per worker
 * ({@code kvprefix_router_decisions_total{worker}}), the cached blocks of each decision as a histogram
 * ({@code kvprefix_router_cached_blocks}, buckets 0.5 (no cached block), 1, 2, 4, ... 4096 blocks), decisions below the
 * minimum match ({@code kvprefix_router_below_min_match_total}), and as gauges the registered workers
 * and the predicted blocks ({@code kvprefix_router_workers}, {@code kvprefix_router_predicted_blocks}).
 *
 * <p>{@link #bindTo} registers this object as a {@link RoutingObserver} of the router: per decision
 * one counter increment for its worker (a map lookup), one histogram record, and one more increment
 * for a decision below the minimum match. {@link #close()} stops observing. The {@code worker} label
 * is bounded by the router's members; past {@value #MAX_WORKER_LABELS} distinct workers the rest count
 * under {@code worker="other"}.
 *
 * <p>Thread-safety: thread-safe; the router calls it from its routing threads.
 */
public final class RouterMetrics implements MeterBinder, RoutingObserver, AutoCloseable {
    /** The most distinct {@code worker} label values. */
    public static final int MAX_WORKER_LABELS = 1024;

    private final Router router;
    private final Tags tags;
    private final ConcurrentHashMap<Worker, Counter> decisions = new ConcurrentHashMap<>();
    private volatile MeterRegistry registry;
    private Counter other;
    private Counter belowMinimum;
    private DistributionSummary cachedBlocks;

    /** Meters for {@code router}, without extra tags. */
    public RouterMetrics(Router router) {
        this(router, Tags.empty());
    }

    /** Meters for {@code router}, each with {@code tags}. */
    public RouterMetrics(Router router, Iterable<Tag> tags) {
        this.router = Objects.requireNonNull(router, "router");
        this.tags = Tags.of(tags);
    }

    @Override
    public synchronized void bindTo(MeterRegistry registry) {
        if (this.registry != null) {
            throw new IllegalStateException("RouterMetrics is bound already; make one per registry");
        }
        this.cachedBlocks = DistributionSummary.builder("kvprefix.router.cached.blocks")
                .description("Blocks of the request the chosen worker holds, per decision")
                .serviceLevelObjectives(0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
                .tags(tags)
                .register(registry);
        this.belowMinimum = Counter.builder("kvprefix.router.below.min.match")
                .description("Decisions whose deepest match was below the minimum match (load alone decided)")
                .tags(tags)
                .register(registry);
        this.other = decisionCounter(registry, "other");
        Gauge.builder("kvprefix.router.workers", router, r -> r.workers().size())
                .description("Workers registered with the router")
                .tags(tags)
                .register(registry);
        Gauge.builder("kvprefix.router.predicted.blocks", router, Router::predictedBlocks)
                .description("Predicted (worker, block) pairs (predicted mode)")
                .tags(tags)
                .register(registry);
        Gauge.builder("kvprefix.router.inflight.blocks", router, Router::inflightBlocks)
                .description("(worker, block) credits of in-flight prefills held (docs/SPEC.md section 6.7)")
                .tags(tags)
                .register(registry);
        FunctionCounter.builder("kvprefix.router.inflight.dropped", router, Router::inflightDropped)
                .description("Decisions not credited as in flight because the bound of 2^20 credits was reached")
                .tags(tags)
                .register(registry);
        this.registry = registry;
        for (Worker w : router.workers()) {
            counterFor(w);
        }
        router.addObserver(this);
    }

    private Counter decisionCounter(MeterRegistry registry, String worker) {
        return Counter.builder("kvprefix.router.decisions")
                .description("Routing decisions, by chosen worker")
                .tags(tags.and("worker", worker))
                .register(registry);
    }

    private Counter counterFor(Worker w) {
        Counter c = decisions.get(w);
        if (c != null) {
            return c;
        }
        if (decisions.size() >= MAX_WORKER_LABELS) {
            return other;
        }
        return decisions.computeIfAbsent(w, k -> decisionCounter(registry, k.toString()));
    }

    @Override
    public void decided(RoutingDecision d) {
        if (registry == null) {
            return;
        }
        counterFor(d.worker()).increment();
        cachedBlocks.record(d.overlapBlocks());
        if (d.belowMinimumMatch()) {
            belowMinimum.increment();
        }
    }

    /** Stops observing the router (the meters stay registered, and stop moving). */
    @Override
    public void close() {
        router.removeObserver(this);
    }
}
