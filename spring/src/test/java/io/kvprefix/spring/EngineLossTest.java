package io.kvprefix.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvprefix.standin.testing.StandinProcess;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Engines that die, as processes, behind the KV-aware route: one gone before a request reaches it (the
 * request is sent once more, to the other engine), and one killed in the middle of a stream (the
 * client gets the error event and {@code [DONE]}, as serve sends, the engine leaves routing, and
 * nothing stays in flight).
 */
class EngineLossTest {
    private static Gateway gateway(StandinProcess a, StandinProcess b, String healthInterval) {
        Map<String, Object> p = Gateway.routes(List.of(a.engine(0), b.engine(0)));
        p.put("kvprefix.health-interval", healthInterval);
        return Gateway.start(p);
    }

    private static StandinProcess of(String w, StandinProcess a, StandinProcess b) {
        return w.equals(a.engine(0).worker() + "/0") ? a : b;
    }

    @Test
    void anEngineGoneBeforeTheRequestReachesItIsSkippedOnce() throws Exception {
        try (StandinProcess a = StandinProcess.start("--worker-id", "1", "--time-scale", "0.05");
                StandinProcess b = StandinProcess.start("--worker-id", "2", "--time-scale", "0.05");
                // health checks far apart: only the request can find the engine gone
                Gateway g = gateway(a, b, "1h")) {
            // the start's one round of checks may have run out of time on a loaded machine: check again until both are
            // up
            Gateway.await("both engines up", 60, () -> {
                g.service.checkEnginesNow();
                return g.service.engines().stream().allMatch(e -> e.up());
            });
            a.awaitLive(g.service::scrape); // the first request's events must reach the index
            b.awaitLive(g.service::scrape);
            String prompt = Gateway.completion(7000, 7070, "\"max_tokens\":2");
            HttpResponse<String> first = g.post("/v1/completions", prompt);
            assertEquals(200, first.statusCode(), first.body());
            String w = first.headers().firstValue("x-kvprefix-worker").orElseThrow();
            Gateway.await("the index knows " + w + " holds the prompt", 30, () -> g.depth(prompt, w) >= 4);
            of(w, a, b).kill();
            HttpResponse<String> again = g.post("/v1/completions", prompt);
            assertEquals(200, again.statusCode(), "answered by the other engine: " + again.body());
            assertNotEquals(
                    w, again.headers().firstValue("x-kvprefix-worker").orElseThrow(), "the dead engine was skipped");
            assertTrue(g.service.scrape().contains("kvprefix_service_retries_total 1.0"), g.service.scrape());
            assertFalse(g.service.engines().stream()
                    .filter(e -> e.spec().worker().toString().equals(w))
                    .findFirst()
                    .orElseThrow()
                    .up());
            Gateway.await("nothing in flight", 30, () -> g.service.stats().inFlight() == 0);
        }
    }

    @Test
    void anEngineKilledMidStreamEndsTheStreamWithTheErrorEvent() throws Exception {
        try (StandinProcess a = StandinProcess.start("--worker-id", "1", "--time-scale", "1", "--speeds", "100,20000");
                StandinProcess b =
                        StandinProcess.start("--worker-id", "2", "--time-scale", "1", "--speeds", "100,20000");
                Gateway g = gateway(a, b, "200ms")) {
            HttpResponse<InputStream> r = g.http.send(
                    HttpRequest.newBuilder(g.uri("/v1/completions"))
                            .timeout(Duration.ofSeconds(120))
                            .header("content-type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(
                                    Gateway.completion(8000, 8040, "\"max_tokens\":500,\"stream\":true")))
                            .build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            assertEquals(200, r.statusCode());
            String w = r.headers().firstValue("x-kvprefix-worker").orElseThrow();
            List<String> lines = new ArrayList<>();
            int data = 0;
            try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
                for (String l; (l = in.readLine()) != null; ) {
                    lines.add(l);
                    if (l.startsWith("data: {") && ++data == 3) {
                        of(w, a, b).kill();
                    }
                }
            }
            assertTrue(data < 500, "the stream ended early: " + data);
            String error = lines.stream()
                    .filter(l -> l.startsWith("data: {\"error\""))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("no error event: " + lines));
            JsonNode e = Gateway.json(error.substring("data: ".length())).get("error");
            assertEquals("engine_unavailable", e.get("code").asText(), error);
            assertEquals("data: [DONE]", lines.get(lines.size() - 2), "then [DONE]: " + lines);
            Gateway.await("nothing in flight", 30, () -> g.service.stats().inFlight() == 0);
            HttpResponse<String> next = g.post("/v1/completions", Gateway.completion(9000, 9040, "\"max_tokens\":2"));
            assertEquals(200, next.statusCode(), next.body());
            assertNotEquals(
                    w, next.headers().firstValue("x-kvprefix-worker").orElseThrow(), "the dead engine left routing");
        }
    }
}
