package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kvprefix demo}'s live leg (docs/OPERATING.md section 12), tiny: real stand-in engines and a
 * real {@code kvprefix serve} as child processes, real HTTP. The report's live figures must come from
 * them: every request answered and counted by the router's own meter, cached tokens reported by the
 * engines, kvprefix-ttft keeping more of the cache than round-robin, round-robin using every engine,
 * and no child process left behind.
 */
class DemoLiveLegTest {
    private static final int REQUESTS = 120;

    @TempDir
    Path dir;

    @Test
    void aTinyLiveLegReportsMeasuredFiguresBesideTheSimulatedOnes() throws Exception {
        Path out = dir.resolve("demo");
        CliRunner.Result r =
                CliRunner.run("demo", "--requests", "200", "--live-requests", "" + REQUESTS, "--out", out.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("live leg"), r.out());
        JsonNode live =
                new ObjectMapper().readTree(out.resolve("report.json").toFile()).get("live");
        Map<String, JsonNode> byPolicy = new HashMap<>();
        for (JsonNode p : live.get("policies")) {
            byPolicy.put(p.get("policy").asText(), p);
            String name = p.get("policy").asText();
            assertEquals(REQUESTS, p.get("requests").asInt(), name);
            assertEquals(0, p.get("errors").asInt(), name + ": " + p.get("first_error"));
            assertEquals(REQUESTS, p.get("decisions").asLong(), name + ": the router's meter counts each request once");
            assertTrue(p.get("decision_mean_us").asDouble() > 0, name);
            double p50 = p.get("ttft_p50_ms").asDouble();
            assertTrue(p50 > 0 && p50 <= p.get("ttft_p99_ms").asDouble(), name + " " + p);
            assertTrue(p.get("engine_prompt_tokens").asLong() > 0, name);
            assertTrue(p.get("simulated").get("ttft_mean_ms").asDouble() > 0, name);
        }
        assertEquals(2, byPolicy.size(), live.toString());
        JsonNode kv = byPolicy.get("kvprefix-ttft");
        JsonNode rr = byPolicy.get("round-robin");
        assertTrue(kv.get("engine_cached_tokens").asLong() > 0, kv.toString());
        assertTrue(
                kv.get("engine_hit_rate").asDouble() > rr.get("engine_hit_rate").asDouble(),
                "kvprefix-ttft " + kv.get("engine_hit_rate") + " vs round-robin " + rr.get("engine_hit_rate"));
        // the index predicted hits from the engines' events (fewer than they found while the events lag)
        assertTrue(kv.get("index_cached_tokens").asDouble() > 0, kv.toString());
        assertEquals(LiveLeg.ENGINES, rr.get("workers_used").asInt(), rr.toString());
        String html = Files.readString(out.resolve("index.html"), StandardCharsets.UTF_8);
        assertTrue(html.contains("The live leg") && html.trim().endsWith("</html>"), html);
        assertEquals(
                0,
                ProcessHandle.current()
                        .descendants()
                        .filter(ProcessHandle::isAlive)
                        .count(),
                "the stand-ins and kvprefix serve are stopped");
    }
}
