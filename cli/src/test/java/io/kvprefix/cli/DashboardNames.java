package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvprefix.testing.RepoPaths;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Grafana dashboard's queries against what a process of this module really exports: the
 * metrics module's {@code DashboardTest} checks the names of its own binders, the service's
 * {@code ServiceDashboardTest} the router service's; the fleet row (relay, replica, snapshot) is
 * checked here against a scrape of the running command (docs/METRICS.md section 3).
 *
 * <p>Thread-safety: stateless.
 */
final class DashboardNames {
    private static final Pattern NAME = Pattern.compile("kvprefix_[a-z0-9_]+");

    private DashboardNames() {}

    /** Every metric name with one of {@code prefixes} a dashboard query names is in {@code scrape}. */
    static void assertExported(String scrape, String... prefixes) throws IOException {
        JsonNode root = new ObjectMapper()
                .readTree(Files.readString(RepoPaths.root().resolve("metrics/grafana/kvprefix-dashboard.json")));
        Set<String> used = new TreeSet<>();
        for (JsonNode expr : root.findValues("expr")) {
            Matcher m = NAME.matcher(expr.asText());
            while (m.find()) {
                for (String p : prefixes) {
                    if (m.group().startsWith(p)) {
                        used.add(m.group());
                    }
                }
            }
        }
        assertFalse(used.isEmpty(), "the dashboard charts nothing named " + List.of(prefixes));
        Set<String> scraped = new TreeSet<>();
        for (String l : scrape.split("\n")) {
            if (!l.isEmpty() && !l.startsWith("#")) {
                scraped.add(l.split("[{ ]", 2)[0]);
            }
        }
        List<String> missing = new ArrayList<>(used);
        missing.removeAll(scraped);
        assertEquals(List.of(), missing, "the dashboard names metrics the process does not export: " + scraped);
    }
}
