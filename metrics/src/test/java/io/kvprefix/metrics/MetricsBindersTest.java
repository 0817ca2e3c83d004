package io.kvprefix.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.BlockHasher;
import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.IndexStats;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Router;
import io.kvprefix.RoutingDecision;
import io.kvprefix.Worker;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The index and router binders: each meter against the object's own numbers, and the Prometheus names. */
class MetricsBindersTest {
    private static final Worker W1 = Worker.of(1);
    private static final Worker W2 = Worker.of(2);

    private static int[] tokens(int first, int n) {
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = first + i;
        }
        return t;
    }

    private static void store(PrefixIndex index, Worker w, int[] tokens) {
        BlockHasher h = index.hasher();
        long[] local = h.localHashes(tokens);
        assertEquals(EventStatus.OK, index.apply(KvEvent.Stored.root(w, h.chainHashes(local), local)));
    }

    @Test
    void indexMetersAreTheIndexsStatsAndTheTimerCountsEveryMatch() {
        MeterRegistry registry = new SimpleMeterRegistry();
        PrefixIndex index = PrefixIndexMetrics.timed(
                PrefixIndex.offHeap(IndexConfig.builder().blockSize(4).build()), registry);
        new PrefixIndexMetrics(index).bindTo(registry);
        store(index, W1, tokens(1, 16));
        store(index, W2, tokens(1, 8));
        index.apply(new KvEvent.Removed(W2, new long[] {12345})); // block_not_found
        PrefixIndexMetrics m = new PrefixIndexMetrics(index);
        MatchResult r = new MatchResult();
        for (int i = 0; i < 7; i++) {
            index.match(tokens(1, 16), 0, 16, index.hasher(), r);
        }
        index.match(new long[] {1, 2}, 0, 2, r);
        IndexStats s = index.stats();
        assertEquals(8, registry.get(PrefixIndexMetrics.MATCH_TIMER).timer().count());
        assertTrue(registry.get(PrefixIndexMetrics.MATCH_TIMER)
                        .timer()
                        .totalTime(java.util.concurrent.TimeUnit.NANOSECONDS)
                > 0);
        assertEquals(s.workers(), registry.get("kvprefix.index.workers").gauge().value());
        assertEquals(s.blocks(), registry.get("kvprefix.index.blocks").gauge().value());
        assertEquals(6, s.blocks());
        assertEquals(s.entries(), registry.get("kvprefix.index.entries").gauge().value());
        assertEquals(
                s.nativeBytes(),
                registry.get("kvprefix.index.memory")
                        .tag("area", "native")
                        .gauge()
                        .value());
        assertEquals(
                2,
                registry.get("kvprefix.index.events")
                        .tag("status", "ok")
                        .functionCounter()
                        .count());
        assertEquals(
                1,
                registry.get("kvprefix.index.events")
                        .tag("status", "block_not_found")
                        .functionCounter()
                        .count());
        index.close();
        m.refresh();
        new PrefixIndexMetrics(index).refresh();
        // a closed index: the snapshot is refused and the gauges say NaN (after the memo's second, or a refresh)
        PrefixIndexMetrics closed = new PrefixIndexMetrics(index);
        MeterRegistry other = new SimpleMeterRegistry();
        closed.bindTo(other);
        assertTrue(Double.isNaN(other.get("kvprefix.index.blocks").gauge().value()));
    }

    @Test
    void routerMetersCountDecisionsPerWorkerCachedBlocksAndMisses() {
        try (PrefixIndex index =
                PrefixIndex.heap(IndexConfig.builder().blockSize(4).build())) {
            store(index, W1, tokens(1, 12)); // 3 blocks
            Router router = Router.builder()
                    .index(index)
                    .worker(W1)
                    .worker(W2)
                    .minMatchBlocks(2)
                    .build();
            MeterRegistry registry = new SimpleMeterRegistry();
            RouterMetrics m = new RouterMetrics(router);
            m.bindTo(registry);
            Map<Worker, Integer> byWorker = new HashMap<>();
            long cached = 0;
            int below = 0;
            for (int i = 0; i < 20; i++) {
                int[] t = i % 4 == 0 ? tokens(1000 + i, 8) : tokens(1, 12); // a miss every fourth request
                RoutingDecision d = router.route(t);
                byWorker.merge(d.worker(), 1, Integer::sum);
                cached += d.overlapBlocks();
                below += d.belowMinimumMatch() ? 1 : 0;
                if (i % 2 == 0) {
                    d.finished();
                }
            }
            assertEquals(5, below);
            for (var e : byWorker.entrySet()) {
                assertEquals(
                        (double) e.getValue(),
                        registry.get("kvprefix.router.decisions")
                                .tag("worker", e.getKey().toString())
                                .counter()
                                .count());
            }
            assertEquals(
                    20, registry.get("kvprefix.router.cached.blocks").summary().count());
            assertEquals(
                    cached,
                    registry.get("kvprefix.router.cached.blocks").summary().totalAmount());
            assertEquals(
                    below,
                    registry.get("kvprefix.router.below.min.match").counter().count());
            assertEquals(2, registry.get("kvprefix.router.workers").gauge().value());
            m.close();
            router.route(tokens(1, 12));
            assertEquals(
                    20, registry.get("kvprefix.router.cached.blocks").summary().count(), "closed: not observing");
            assertThrows(IllegalStateException.class, () -> m.bindTo(registry));
        }
    }

    @Test
    void prometheusNamesFollowItsConventions() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (PrefixIndex index = PrefixIndexMetrics.timed(PrefixIndex.heap(IndexConfig.defaults()), registry)) {
            new PrefixIndexMetrics(index).bindTo(registry);
            Router router = Router.builder().predicted(true).worker(W1).build();
            new RouterMetrics(router).bindTo(registry);
            router.route(tokens(1, 64));
            index.match(new long[] {1}, 0, 1, new MatchResult());
            String text = registry.scrape();
            for (String name : new String[] {
                "kvprefix_index_match_seconds_bucket{le=\"1.0E-5\"}",
                "kvprefix_index_match_seconds_count 1",
                "kvprefix_index_memory_bytes{area=\"native\"}",
                "kvprefix_index_events_total{status=\"ok\"}",
                "kvprefix_index_rebuilds_total",
                "kvprefix_router_decisions_total{worker=\"1/0\"} 1.0",
                "kvprefix_router_cached_blocks_bucket{le=\"0.5\"} 1",
                "kvprefix_router_cached_blocks_count 1",
                "kvprefix_router_below_min_match_total 1.0",
                "kvprefix_router_predicted_blocks 4.0",
                "# TYPE kvprefix_router_cached_blocks histogram",
                "# TYPE kvprefix_index_match_seconds histogram"
            }) {
                assertTrue(text.contains(name), name + " in\n" + text);
            }
        }
    }
}
