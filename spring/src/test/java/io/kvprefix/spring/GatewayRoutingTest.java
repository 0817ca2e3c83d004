package io.kvprefix.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvprefix.standin.testing.StandinProcess;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The starter in a real Spring Cloud Gateway in front of two stand-in engines with real KV events: the
 * KV-aware route sends each request where the router service's own explanation of it, on the same
 * index at the same moment, prefers, with serve's headers; the ordinary round-robin route beside it
 * misses the cache the KV-aware route finds; the router's errors are OpenAI error bodies; and the
 * service's meters are on Spring Boot's {@code /actuator/prometheus}.
 */
class GatewayRoutingTest {
    private static StandinProcess engines;
    private static Gateway gateway;

    @BeforeAll
    static void start() throws Exception {
        engines = StandinProcess.start("--engines", "2", "--time-scale", "0.05", "--enable-prompt-tokens-details");
        gateway = Gateway.start(Gateway.routes(engines.engines()));
        engines.awaitLive(gateway.service::scrape); // a test's first request must reach the index
    }

    @AfterAll
    static void stop() {
        if (gateway != null) {
            gateway.close();
        }
        if (engines != null) {
            engines.close();
        }
    }

    private static String header(HttpResponse<?> r, String name) {
        return r.headers()
                .firstValue(name)
                .orElseThrow(() -> new AssertionError("no " + name + ": " + r.statusCode() + " " + r.body()));
    }

    @Test
    void routesWhereTheServiceDecidesOnTheSameIndex() throws Exception {
        // prompts that share prefixes with each other in several ways, each sent after the index caught up
        int[][] prompts = {{0, 69}, {0, 69}, {5000, 5069}, {0, 40}, {5000, 5100}, {9000, 9010}, {0, 90}};
        int cachedRoutes = 0;
        for (int[] p : prompts) {
            String body = Gateway.completion(p[0], p[1], "\"max_tokens\":2");
            // the explanation and the route must see one state: the previous request's load released
            Gateway.await(
                    "the previous request ended",
                    30,
                    () -> gateway.service.stats().inFlight() == 0);
            JsonNode x = gateway.explain(body);
            String preferred = x.get("preferred").asText();
            int depth = gateway.depth(body, preferred);
            HttpResponse<String> r = gateway.post("/v1/completions", body);
            assertEquals(200, r.statusCode(), r.body());
            assertEquals(preferred, header(r, "x-kvprefix-worker"), "the service's choice for " + x);
            assertEquals(Integer.toString(depth), header(r, "x-kvprefix-cached-blocks"));
            assertEquals("cache", header(r, "x-kvprefix-route"));
            cachedRoutes += depth > 0 ? 1 : 0;
            int blocks = (p[1] - p[0] + 1) / 16;
            Gateway.await("the index has the prompt's blocks", 30, () -> gateway.depth(body, preferred) >= blocks);
        }
        assertTrue(cachedRoutes >= 3, "several prompts found their prefix cached: " + cachedRoutes);
        Gateway.await("every request ended", 30, () -> gateway.service.stats().inFlight() == 0);
    }

    @Test
    void theRoundRobinRouteMissesTheCacheTheKvRouteFinds() throws Exception {
        String body = Gateway.completion(20_000, 20_069, "\"max_tokens\":2");
        HttpResponse<String> first = gateway.post("/plain/v1/completions", body);
        assertEquals(200, first.statusCode(), first.body());
        assertTrue(
                first.headers().firstValue("x-kvprefix-worker").isEmpty(), "the plain route is not routed by kvprefix");
        Gateway.await("an engine holds the prompt", 30, () -> {
            for (JsonNode w : gateway.explain(body).get("workers")) {
                if (w.get("depth").asInt() >= 4) {
                    return true;
                }
            }
            return false;
        });
        HttpResponse<String> second = gateway.post("/plain/v1/completions", body);
        assertEquals(0, cached(second), "round robin sent it to the other engine: " + second.body());
        HttpResponse<String> kv = gateway.post("/v1/completions", body);
        assertEquals("4", header(kv, "x-kvprefix-cached-blocks"));
        assertEquals(64, cached(kv), "the engine that holds it says so: " + kv.body());
    }

    private static int cached(HttpResponse<String> r) {
        return Gateway.json(r.body())
                .get("usage")
                .get("prompt_tokens_details")
                .get("cached_tokens")
                .asInt();
    }

    @Test
    void theRoutersErrorsAreOpenAiErrorBodies() throws Exception {
        HttpResponse<String> unknown =
                gateway.post("/v1/completions", "{\"model\":\"no-such-model\",\"prompt\":[1,2,3]}");
        assertEquals(404, unknown.statusCode(), unknown.body());
        JsonNode e = Gateway.json(unknown.body()).get("error");
        assertEquals("model_not_found", e.get("code").asText());
        assertEquals("invalid_request_error", e.get("type").asText());
        assertEquals(
                "application/json", unknown.headers().firstValue("content-type").orElseThrow());
        HttpResponse<String> bad = gateway.post("/v1/completions", "{\"model\":");
        assertEquals(400, bad.statusCode(), bad.body());
        assertEquals(
                "invalid_json",
                Gateway.json(bad.body()).get("error").get("code").asText());
    }

    @Test
    void theServicesMetersAreOnActuatorPrometheus() throws Exception {
        HttpResponse<String> ok =
                gateway.post("/v1/completions", Gateway.completion(30_000, 30_020, "\"max_tokens\":1"));
        assertEquals(200, ok.statusCode(), ok.body());
        HttpResponse<String> m = gateway.get("/actuator/prometheus");
        assertEquals(200, m.statusCode(), m.body());
        assertTrue(m.body().contains("kvprefix_service_requests_total"), m.body());
        assertTrue(m.body().contains("kvprefix_service_engine_up"), m.body());
        assertNotEquals(-1, m.body().indexOf("kvprefix_index"), "the index's meters: " + m.body());
    }
}
