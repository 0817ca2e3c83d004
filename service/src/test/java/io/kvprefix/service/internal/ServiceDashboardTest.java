package io.kvprefix.service.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvprefix.Worker;
import io.kvprefix.service.Usage;
import io.kvprefix.testing.RepoPaths;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The dashboard's router-service queries (the metrics module's {@code DashboardTest} checks the
 * rest): every {@code kvprefix_service_} metric a panel names exists in a scrape of the service's
 * meters, and the speed-of-light panel charts the three sources (docs/METRICS.md section 4).
 */
class ServiceDashboardTest {
    private static final Pattern METRIC = Pattern.compile("\\bkvprefix_service_[a-z0-9_]+");

    @Test
    void everyServiceMetricTheDashboardNamesExists() throws Exception {
        JsonNode dash = new ObjectMapper()
                .readTree(Files.readString(RepoPaths.root().resolve("metrics/grafana/kvprefix-dashboard.json")));
        List<String> exprs = new ArrayList<>();
        for (JsonNode panel : dash.path("panels")) {
            for (JsonNode t : panel.path("targets")) {
                exprs.add(t.path("expr").asText());
            }
        }
        Set<String> used = new TreeSet<>();
        for (String e : exprs) {
            for (Matcher m = METRIC.matcher(e); m.find(); ) {
                used.add(m.group());
            }
        }
        PrometheusMeterRegistry reg = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        ServiceMeters meters = new ServiceMeters(reg);
        meters.usage(Worker.of(1), new Usage(100, 1, 0), 64, 64, 16);
        meters.usage(Worker.of(1), new Usage(100, 1, 64), 0, 64, 16);
        Set<String> scraped = new TreeSet<>();
        for (String l : reg.scrape().split("\n")) {
            if (!l.isEmpty() && !l.startsWith("#")) {
                scraped.add(l.split("[{ ]", 2)[0]);
            }
        }
        List<String> missing = new ArrayList<>(used);
        missing.removeAll(scraped);
        assertEquals(List.of(), missing, "scraped: " + scraped);
        String all = String.join("\n", exprs);
        for (String source : List.of("engine", "index", "bound")) {
            assertTrue(all.contains("kvprefix_service_cached_tokens_total{source=\"" + source + "\"}"), source);
        }
        assertTrue(used.contains("kvprefix_service_cache_mismatch_total"), "" + used);
    }
}
