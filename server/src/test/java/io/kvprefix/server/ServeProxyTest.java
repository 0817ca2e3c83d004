package io.kvprefix.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvprefix.service.EngineSpec;
import io.kvprefix.standin.testing.StandinProcess;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code kvprefix serve} in front of two stand-in engines (a real process), driven by the JDK's HTTP
 * client: the models' union, the routing headers, bodies passed through, engine errors passed
 * through, the router's own errors as OpenAI bodies (400, 404, 413, 429, 503), the route API over HTTP,
 * and a pass-through path.
 */
class ServeProxyTest {
    private static StandinProcess engines;
    private static Serve serve;

    @BeforeAll
    static void start() throws Exception {
        engines = StandinProcess.start("--engines", "2", "--time-scale", "0.05");
        serve = Serve.start(
                engines.engines().stream().map(StandinProcess.Engine::spec).toList(), o -> {});
    }

    @AfterAll
    static void stop() throws Exception {
        if (serve != null) {
            serve.close();
        }
        if (engines != null) {
            engines.close();
        }
    }

    @Test
    void modelsAreTheUnionAndResponsesCarryTheRoutingHeaders() throws Exception {
        JsonNode models = Serve.json(serve.get("/v1/models").body());
        assertEquals("list", models.get("object").asText());
        assertEquals(1, models.get("data").size(), "two engines, one model: " + models);
        assertEquals(Serve.MODEL, models.get("data").get(0).get("id").asText());
        HttpResponse<String> health = serve.get("/health");
        assertEquals(200, health.statusCode(), health.body());
        HttpResponse<String> r = serve.post(
                "/v1/completions", Serve.completion(5001, 5040, "\"max_tokens\":3,\"x_unknown\":{\"keep\":[1,\"2\"]}"));
        assertEquals(200, r.statusCode(), r.body());
        String worker = r.headers().firstValue("x-kvprefix-worker").orElseThrow();
        assertTrue(worker.equals("1/0") || worker.equals("2/0"), worker);
        assertEquals(
                "0", r.headers().firstValue("x-kvprefix-cached-blocks").orElseThrow(), "a prompt no engine has seen");
        assertEquals("cache", r.headers().firstValue("x-kvprefix-route").orElseThrow());
        assertTrue(r.headers().firstValue("x-kvprefix-route-reason").isEmpty());
        JsonNode body = Serve.json(r.body());
        assertEquals("text_completion", body.get("object").asText());
        assertEquals(40, body.get("usage").get("prompt_tokens").asInt(), "the engine got the whole prompt: " + body);
        assertEquals(3, body.get("usage").get("completion_tokens").asInt());
        assertEquals(
                String.valueOf(r.body().length()),
                r.headers().firstValue("content-length").orElseThrow());
    }

    @Test
    void textWithoutATokenizerIsRoutedByLoadAndTheEnginesErrorPassesThrough() throws Exception {
        HttpResponse<String> r = serve.post(
                "/v1/completions", "{\"model\":\"" + Serve.MODEL + "\",\"prompt\":\"hello\",\"max_tokens\":2}");
        assertEquals("load-only", r.headers().firstValue("x-kvprefix-route").orElseThrow());
        assertEquals(
                "no_tokenizer",
                r.headers().firstValue("x-kvprefix-route-reason").orElseThrow());
        assertEquals(400, r.statusCode(), "the stand-in has no tokenizer and says so, as vLLM would: " + r.body());
        assertTrue(Serve.json(r.body()).has("error"), r.body());
    }

    @Test
    void theRoutersOwnErrorsAreOpenAiErrorBodies() throws Exception {
        assertError(serve.post("/v1/completions", "{\"model\":"), 400, "invalid_json");
        assertError(serve.post("/v1/chat/completions", "[1]"), 400, "invalid_json");
        assertError(serve.post("/v1/completions", "{\"model\":\"nosuch\",\"prompt\":[1]}"), 404, "model_not_found");
        try (Serve small = Serve.start(List.of(engines.engine(0).httpOnly()), o -> o.maxBodyBytes(1024))) {
            assertError(small.post("/v1/completions", Serve.completion(1, 400, null)), 413, "request_too_large");
            assertEquals(
                    200,
                    small.post("/v1/completions", Serve.completion(1, 20, "\"max_tokens\":1"))
                            .statusCode());
        }
        try (Serve none = Serve.start(List.of(EngineSpec.parse("9=http://127.0.0.1:1")), o -> {})) {
            assertError(none.post("/v1/completions", "{\"prompt\":[1,2,3]}"), 503, "no_engine_available");
            assertEquals(503, none.get("/health").statusCode());
        }
    }

    @Test
    void aFullQueueIs429() throws Exception {
        try (Serve one = Serve.start(
                List.of(engines.engine(0).httpOnly()), o -> o.maxInFlight(1).maxQueued(0))) {
            CountDownLatch streaming = new CountDownLatch(1);
            CompletableFuture<HttpResponse<List<Serve.Line>>> first = CompletableFuture.supplyAsync(() -> {
                try {
                    return one.stream(
                            "/v1/completions",
                            Serve.completion(1, 20, "\"max_tokens\":3000,\"stream\":true"),
                            l -> streaming.countDown());
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            assertTrue(streaming.await(60, TimeUnit.SECONDS), "the first request streams");
            assertError(one.post("/v1/completions", Serve.completion(1, 20, "\"max_tokens\":1")), 429, "queue_full");
            assertEquals(200, first.get(120, TimeUnit.SECONDS).statusCode());
            Serve.await("the slot is free", 30, () -> one.service.stats().inFlight() == 0);
            assertEquals(
                    200,
                    one.post("/v1/completions", Serve.completion(1, 20, "\"max_tokens\":1"))
                            .statusCode());
        }
    }

    @Test
    void theRouteApiOverHttp() throws Exception {
        HttpResponse<String> r = serve.post("/kvprefix/v1/route", Serve.completion(1000, 1063, null));
        assertEquals(200, r.statusCode(), r.body());
        JsonNode d = Serve.json(r.body());
        assertEquals(2, d.get("workers").size());
        String id = d.get("decision_id").asText();
        assertEquals(
                204, serve.post("/kvprefix/v1/route/" + id + "/first-token", "").statusCode());
        assertEquals(204, serve.post("/kvprefix/v1/route/" + id + "/done", "").statusCode());
        assertError(serve.post("/kvprefix/v1/route/" + id + "/done", ""), 404, "decision_not_found");
        HttpResponse<String> x = serve.post("/kvprefix/v1/explain", Serve.completion(1000, 1063, null));
        assertEquals(200, x.statusCode(), x.body());
        assertEquals(4, Serve.json(x.body()).get("query_blocks").asInt());
    }

    @Test
    void otherPathsPassThroughToAnEngineByLoad() throws Exception {
        HttpResponse<String> r = serve.post("/v1/completions/render", Serve.completion(1, 5, null));
        assertEquals("load-only", r.headers().firstValue("x-kvprefix-route").orElseThrow());
        assertEquals(
                "pass_through",
                r.headers().firstValue("x-kvprefix-route-reason").orElseThrow());
        assertEquals(200, r.statusCode(), r.body());
        HttpResponse<String> unknown = serve.get("/no/such/path");
        assertEquals(404, unknown.statusCode(), "the engine's own 404: " + unknown.body());
        assertTrue(unknown.headers().firstValue("x-kvprefix-worker").isPresent());
    }

    static void assertError(HttpResponse<String> r, int status, String code) {
        assertEquals(status, r.statusCode(), r.body());
        assertEquals("application/json", r.headers().firstValue("content-type").orElseThrow());
        JsonNode e = Serve.json(r.body()).get("error");
        assertEquals(code, e.get("code").asText(), r.body());
        assertTrue(e.get("message").asText().length() > 10, r.body());
        assertTrue(e.has("type") && e.has("param"), r.body());
    }
}
