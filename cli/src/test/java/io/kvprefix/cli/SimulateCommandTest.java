package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.simulator.PolicyKind;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code kvprefix simulate} and {@code kvprefix demo} end to end, through the command line. */
class SimulateCommandTest {
    @TempDir
    Path dir;

    /**
     * A Mooncake-format trace built to have shared prefixes: 30 documents of 6 blocks each, every
     * request one document followed by 2 blocks of its own, in a shuffled order, one every 300 ms (a
     * light load on 4 workers). A router that follows the cache reuses each document after its first
     * request; round-robin spreads each document over about 3.6 of the 4 workers and misses each time.
     */
    private Path sharedPrefixTrace() throws IOException {
        Random rnd = new Random(7);
        StringBuilder sb = new StringBuilder();
        int unique = 10_000;
        for (int i = 0; i < 240; i++) {
            int doc = i < 30 ? i : rnd.nextInt(30);
            StringBuilder ids = new StringBuilder();
            for (int b = 0; b < 6; b++) {
                ids.append(doc * 10 + b).append(',');
            }
            ids.append(unique++).append(',').append(unique++);
            sb.append("{\"timestamp\": ")
                    .append(i * 300)
                    .append(", \"input_length\": 4096, \"output_length\": 20, \"hash_ids\": [")
                    .append(ids)
                    .append("]}\n");
        }
        Path f = dir.resolve("shared.jsonl");
        Files.writeString(f, sb);
        return f;
    }

    private static final Pattern POLICY =
            Pattern.compile("\"policy\" : \"([^\"]+)\",\\s*\"requests\" : (\\d+),\\s*\"hit_rate\" : ([0-9.Ee-]+)");

    private static Map<String, Double> hitRates(String json) {
        Map<String, Double> m = new HashMap<>();
        Matcher mt = POLICY.matcher(json);
        while (mt.find()) {
            m.put(mt.group(1), Double.parseDouble(mt.group(3)));
        }
        return m;
    }

    private static double number(String json, String key) {
        Matcher m = Pattern.compile("\"" + key + "\" : ([0-9.Ee-]+)").matcher(json);
        assertTrue(m.find(), key + " in " + json);
        return Double.parseDouble(m.group(1));
    }

    @Test
    void kvAwareRoutingBeatsRoundRobinOnSharedPrefixes() throws IOException {
        Path out = dir.resolve("report");
        CliRunner.Result r = CliRunner.run(
                "simulate", "--trace", sharedPrefixTrace().toString(), "--workers", "4", "--out", out.toString());
        assertEquals(0, r.exit(), r.err());
        List<String> lines = r.out().lines().toList();
        assertEquals("report: " + out.resolve("index.html").toAbsolutePath().normalize(), lines.get(lines.size() - 1));
        List<String> names = new java.util.ArrayList<>();
        for (PolicyKind k : PolicyKind.all()) {
            names.add(k.key());
        }
        for (String name : concat(names, List.of("infinite-cache bound", "TTFT floor", "rate sweep"))) {
            assertTrue(r.out().contains(name), name + " in the table:\n" + r.out());
        }
        String html = Files.readString(out.resolve("index.html"));
        assertTrue(
                html.contains("<svg") && html.contains("kvprefix-ttft") && !html.contains("<script"),
                "self-contained charts");
        assertTrue(html.contains("TTFT against request rate") && html.contains("knee"), "the rate sweep's charts");
        String json = Files.readString(out.resolve("report.json"));
        String sweep = json.substring(json.indexOf("\"sweep\" : ["));
        assertEquals(7, Pattern.compile("\"rate\" : ").matcher(sweep).results().count(), "seven swept rates");
        assertEquals(
                PolicyKind.all().size() * 7,
                Pattern.compile("\"policy\" : ").matcher(sweep).results().count());
        assertTrue(json.contains("\"knees\" : {"), json);
        Map<String, Double> hit = hitRates(json.substring(0, json.indexOf("\"sweep\" : [")));
        assertEquals(PolicyKind.all().size(), hit.size(), json);
        double bound = number(json, "infinite_cache_hit_rate");
        // by hand: 210 of 240 requests can reuse their 6-block document: 210 * 3072 / (240 * 4096)
        assertEquals(210.0 * 3072 / (240 * 4096), bound, 1e-9);
        double rr = hit.get("round-robin");
        for (String kv : PolicyKind.all().stream()
                .filter(PolicyKind::cacheAware)
                .map(PolicyKind::key)
                .toList()) {
            assertTrue(hit.get(kv) > rr + 0.1, kv + " " + hit.get(kv) + " vs round-robin " + rr);
            assertTrue(hit.get(kv) <= bound + 1e-12, kv + " above the bound");
        }
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> out = new java.util.ArrayList<>(a);
        out.addAll(b);
        return out;
    }

    @Test
    void demoRunsTheBuiltInWorkloadWithoutATrace() throws IOException {
        Path out = dir.resolve("demo");
        CliRunner.Result r = CliRunner.run("demo", "--requests", "300", "--no-live", "--out", out.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .strip()
                        .endsWith("report: "
                                + out.resolve("index.html").toAbsolutePath().normalize()),
                r.out());
        assertTrue(Files.size(out.resolve("report.json")) > 0);
        assertTrue(r.err().contains("built-in workload"), r.err());
    }

    @Test
    void badOptionsAreUsageErrors() {
        assertEquals(
                2,
                CliRunner.run("simulate", "--requests", "10", "--policies", "nope", "--out", dir.toString())
                        .exit());
        assertEquals(
                2,
                CliRunner.run("simulate", "--requests", "10", "--prefill-rate", "0", "--out", dir.toString())
                        .exit());
        for (String[] bad : List.of(
                new String[] {"--engine", "tgi"},
                new String[] {"--sweep-rates", "1,fast"},
                new String[] {"--sweep-rates", "0"},
                new String[] {"--join-at", "1"},
                new String[] {"--slow-factor", "0.5"},
                new String[] {"--event-delay-ms", "-1"},
                new String[] {"--max-batched-tokens", "0"},
                new String[] {"--threads", "0"})) {
            CliRunner.Result r =
                    CliRunner.run(concat(List.of("simulate", "--requests", "10", "--out", dir.toString()), List.of(bad))
                            .toArray(new String[0]));
            assertEquals(2, r.exit(), String.join(" ", bad) + ": " + r.err());
            assertEquals(1, r.err().strip().lines().count(), "one line: " + r.err());
        }
    }
}
