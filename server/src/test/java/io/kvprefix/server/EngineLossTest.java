package io.kvprefix.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvprefix.standin.testing.StandinProcess;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Engines that die, as processes: one that is gone before a request reaches it (the request is sent
 * again to the next engine), one killed in the middle of a stream (the client gets a clean error
 * event and {@code [DONE]}, the engine leaves routing, later requests go elsewhere, and the open
 * connections, exchanges and in-flight counts return to 0), and one that fails its health checks and
 * comes back.
 */
class EngineLossTest {
    private static String worker(HttpResponse<?> r) {
        return r.headers()
                .firstValue("x-kvprefix-worker")
                .orElseThrow(() -> new AssertionError("no routing header: " + r.statusCode() + " " + r.body()));
    }

    /** The worker of {@code a} or {@code b} named {@code w}. */
    private static StandinProcess of(String w, StandinProcess a, StandinProcess b) {
        return w.equals(a.engine(0).worker() + "/0") ? a : b;
    }

    @Test
    void anEngineGoneBeforeTheRequestReachesItIsSkippedOnce() throws Exception {
        try (StandinProcess a = StandinProcess.start("--worker-id", "1", "--time-scale", "0.05");
                StandinProcess b = StandinProcess.start("--worker-id", "2", "--time-scale", "0.05");
                // health checks far apart: only the request can find the engine gone
                Serve serve = Serve.start(
                        List.of(a.engine(0).spec(), b.engine(0).spec()), o -> o.healthInterval(Duration.ofHours(1)))) {
            a.awaitLive(serve.service::scrape); // the first request's events must reach the index
            b.awaitLive(serve.service::scrape);
            String prompt = Serve.completion(7000, 7070, "\"max_tokens\":2");
            HttpResponse<String> first = serve.post("/v1/completions", prompt);
            assertEquals(200, first.statusCode(), first.body());
            String w = worker(first);
            StandinProcess held = of(w, a, b);
            Serve.await("the index knows " + w + " holds the prompt", 30, () -> depth(serve, prompt, w) >= 4);
            held.kill();
            HttpResponse<String> again = serve.post("/v1/completions", prompt);
            assertEquals(200, again.statusCode(), "answered by the other engine: " + again.body());
            assertFalse(worker(again).equals(w), "the dead engine " + w + " was skipped");
            JsonNode health = Serve.json(serve.get("/health").body());
            JsonNode dead = engineOf(health, w);
            assertFalse(dead.get("up").asBoolean(), health.toString());
            assertTrue(dead.get("reason").asText().startsWith("request: "), health.toString());
            assertTrue(serve.service.scrape().contains("kvprefix_service_retries_total 1.0"));
            assertEquals(0, serve.service.stats().inFlight());
        }
    }

    @Test
    void anEngineKilledMidStreamEndsItCleanlyLeavesRoutingAndLeaksNothing() throws Exception {
        try (StandinProcess a = StandinProcess.start("--worker-id", "1", "--time-scale", "1", "--speeds", "100,20000");
                StandinProcess b =
                        StandinProcess.start("--worker-id", "2", "--time-scale", "1", "--speeds", "100,20000");
                Serve serve =
                        Serve.start(List.of(a.engine(0).spec(), b.engine(0).spec()), o -> {})) {
            HttpClient client =
                    HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            CountDownLatch three = new CountDownLatch(3);
            String[] who = new String[1];
            CompletableFuture<List<String>> stream = CompletableFuture.supplyAsync(() -> {
                try {
                    HttpResponse<java.util.stream.Stream<String>> r = client.send(
                            HttpRequest.newBuilder(serve.uri("/v1/completions"))
                                    .header("content-type", "application/json")
                                    .POST(HttpRequest.BodyPublishers.ofString(
                                            Serve.completion(8000, 8040, "\"max_tokens\":500,\"stream\":true")))
                                    .build(),
                            HttpResponse.BodyHandlers.ofLines());
                    who[0] = worker(r);
                    return r.body()
                            .peek(l -> {
                                if (l.startsWith("data: {")) {
                                    three.countDown();
                                }
                            })
                            .toList();
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            assertTrue(three.await(60, TimeUnit.SECONDS), "the stream began");
            StandinProcess serving = of(who[0], a, b);
            serving.kill();
            List<String> lines = stream.get(60, TimeUnit.SECONDS);
            List<String> data =
                    lines.stream().filter(l -> l.startsWith("data: ")).toList();
            assertTrue(data.size() < 500, "the stream was cut short");
            assertEquals(
                    "data: [DONE]",
                    data.get(data.size() - 1),
                    "a clean end: " + lines.subList(Math.max(0, lines.size() - 4), lines.size()));
            JsonNode error = Serve.json(data.get(data.size() - 2).substring(6)).get("error");
            assertEquals("engine_unavailable", error.get("code").asText(), error.toString());
            JsonNode health = Serve.json(serve.get("/health").body());
            assertFalse(engineOf(health, who[0]).get("up").asBoolean(), "the engine left routing: " + health);
            for (int i = 0; i < 5; i++) {
                HttpResponse<String> r =
                        serve.post("/v1/completions", Serve.completion(8000 + i, 8040, "\"max_tokens\":1"));
                assertEquals(200, r.statusCode(), r.body());
                assertFalse(worker(r).equals(who[0]), "later requests go elsewhere");
            }
            client.close();
            serve.http.close();
            Serve.await("no exchange open", 30, () -> serve.server.stats().exchanges() == 0);
            Serve.await(
                    "no client connection open", 30, () -> serve.server.stats().clientConnections() == 0);
            assertEquals(0, serve.service.stats().inFlight());
            assertEquals(0, serve.service.stats().engineInFlight());
            of(who[0].equals("1/0") ? "2/0" : "1/0", a, b).kill();
            Serve.await(
                    "no engine connection open", 30, () -> serve.server.stats().engineConnections() == 0);
        }
    }

    @Test
    void anEngineThatFailsItsHealthCheckLeavesRoutingAndComesBack() throws Exception {
        StandinProcess a = StandinProcess.start("--worker-id", "1", "--time-scale", "0.05");
        try (StandinProcess b = StandinProcess.start("--worker-id", "2", "--time-scale", "0.05");
                Serve serve =
                        Serve.start(List.of(a.engine(0).httpOnly(), b.engine(0).httpOnly()), o -> {})) {
            a.kill();
            Serve.await("engine 1 is down", 30, () -> !up(serve, "1/0"));
            assertTrue(serve.service.scrape().contains("kvprefix_service_engine_up{worker=\"1/0\"} 0.0"));
            for (int i = 0; i < 5; i++) {
                HttpResponse<String> r =
                        serve.post("/v1/completions", Serve.completion(9000, 9030 + i, "\"max_tokens\":1"));
                assertEquals("2/0", worker(r), "only engine 2 is routed to");
            }
            a = a.restartOnSamePorts();
            Serve.await("engine 1 is back", 60, () -> up(serve, "1/0"));
            HttpResponse<String> x = serve.post("/kvprefix/v1/explain", Serve.completion(9000, 9030, null));
            JsonNode one = engineOf(Serve.json(x.body()), "1/0");
            assertFalse(one.get("verdict").asText().equals("not_a_member"), x.body());
        } finally {
            a.close();
        }
    }

    private static boolean up(Serve serve, String w) {
        try {
            return engineOf(Serve.json(serve.get("/health").body()), w)
                    .get("up")
                    .asBoolean();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static JsonNode engineOf(JsonNode health, String w) {
        for (JsonNode e : health.get(health.has("engines") ? "engines" : "workers")) {
            if (e.get("worker").asText().equals(w)) {
                return e;
            }
        }
        throw new AssertionError(w + " not in " + health);
    }

    /** The depth the index gives {@code w} for the prompt of {@code body}. */
    static int depth(Serve serve, String body, String w) {
        try {
            JsonNode x = Serve.json(serve.post("/kvprefix/v1/explain", body).body());
            return engineOf(x, w).get("depth").asInt();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
