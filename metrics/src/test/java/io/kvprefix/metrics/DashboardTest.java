package io.kvprefix.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.kvprefix.IndexConfig;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Router;
import io.kvprefix.Worker;
import io.kvprefix.testing.RepoPaths;
import io.kvprefix.zmq.EngineEndpoint;
import io.kvprefix.zmq.KvEventSubscriber;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The Grafana dashboard {@code metrics/grafana/kvprefix-dashboard.json}: valid JSON, a panel for each
 * thing an operator watches, and every metric its queries name exists in a scrape of a registry with
 * all three binders bound (docs/METRICS.md).
 */
class DashboardTest {
    static final Path DASHBOARD = RepoPaths.root().resolve("metrics/grafana/kvprefix-dashboard.json");
    private static final Pattern METRIC = Pattern.compile("\\bkvprefix_[a-z0-9_]+");

    /** Every "expr" and every "title" of the dashboard (a strict JSON parse). */
    static List<List<String>> exprsAndTitles(String json) throws IOException {
        List<String> exprs = new ArrayList<>();
        List<String> titles = new ArrayList<>();
        try (JsonParser p = new JsonFactory().createParser(json)) {
            for (JsonToken t; (t = p.nextToken()) != null; ) {
                if (t == JsonToken.VALUE_STRING && "expr".equals(p.currentName())) {
                    exprs.add(p.getText());
                } else if (t == JsonToken.VALUE_STRING && "title".equals(p.currentName())) {
                    titles.add(p.getText());
                }
            }
        }
        return List.of(exprs, titles);
    }

    /** The metric names a query names ({@code kvprefix_...}). */
    static Set<String> names(List<String> exprs) {
        Set<String> out = new TreeSet<>();
        for (String e : exprs) {
            Matcher m = METRIC.matcher(e);
            while (m.find()) {
                out.add(m.group());
            }
        }
        return out;
    }

    /** The sample names of a Prometheus text scrape. */
    static Set<String> sampleNames(String text) {
        Set<String> out = new TreeSet<>();
        for (String l : text.split("\n")) {
            if (!l.isEmpty() && !l.startsWith("#")) {
                int end = 0;
                while (end < l.length() && l.charAt(end) != '{' && l.charAt(end) != ' ') {
                    end++;
                }
                out.add(l.substring(0, end));
            }
        }
        return out;
    }

    @Test
    void everyMetricTheDashboardNamesExists() throws Exception {
        List<List<String>> parsed = exprsAndTitles(Files.readString(DASHBOARD));
        List<String> exprs = parsed.get(0);
        Set<String> used = names(exprs);
        assertTrue(used.size() >= 15, "metrics the dashboard charts: " + used);

        Set<String> scraped = sampleNames(scrapeWithEveryBinder());
        List<String> missing = new ArrayList<>();
        for (String name : used) {
            // the router service's meters live in kvprefix-service, which depends on this module:
            // its ServiceDashboardTest checks those names against a scrape of them
            // and the fleet row's (relay, replica, snapshot) are cli's: its DashboardNames checks them
            // against a scrape of the running command
            if (!scraped.contains(name)
                    && !name.startsWith("kvprefix_service_")
                    && !name.startsWith("kvprefix_relay_")
                    && !name.startsWith("kvprefix_replica_")
                    && !name.startsWith("kvprefix_snapshot_")) {
                missing.add(name);
            }
        }
        assertEquals(List.of(), missing, "the dashboard names metrics that do not exist; they are " + scraped);

        // what the issue asks the dashboard to chart
        String all = String.join("\n", exprs);
        for (String needed : List.of(
                "kvprefix_subscriber_events_total",
                "kvprefix_subscriber_lag_seconds",
                "kvprefix_router_cached_blocks_bucket",
                "histogram_quantile(0.99, sum by (le) (rate(kvprefix_index_match_seconds_bucket",
                "kvprefix_index_memory_bytes")) {
            assertTrue(all.contains(needed), needed);
        }
    }

    @Test
    void theCheckFindsAMisspelledMetric() {
        Set<String> scraped = Set.of("kvprefix_index_blocks");
        Set<String> used = names(List.of("sum(kvprefix_index_blocks) + kvprefix_index_blokcs"));
        assertEquals(Set.of("kvprefix_index_blocks", "kvprefix_index_blokcs"), used);
        assertTrue(!scraped.containsAll(used));
    }

    /** A scrape of a registry with an index, a router and a subscriber bound (an engine that is not there). */
    static String scrapeWithEveryBinder() throws IOException {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        try (PrefixIndex index = PrefixIndexMetrics.timed(PrefixIndex.create(IndexConfig.defaults()), registry);
                KvEventSubscriber sub = KvEventSubscriber.builder(index).build()) {
            new PrefixIndexMetrics(index).bindTo(registry);
            Router router = Router.builder().index(index).worker(Worker.of(1)).build();
            new RouterMetrics(router).bindTo(registry);
            sub.addEngine(EngineEndpoint.parse("tcp://127.0.0.1:" + port + "=1"));
            SubscriberMetrics sm = new SubscriberMetrics(sub);
            sm.bindTo(registry);
            router.route(new int[64]);
            index.match(new long[] {1}, 0, 1, new MatchResult());
            sm.refresh();
            return registry.scrape();
        }
    }
}
