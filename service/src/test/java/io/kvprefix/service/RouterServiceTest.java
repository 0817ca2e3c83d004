package io.kvprefix.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.service.internal.Classifier;
import io.kvprefix.service.internal.EngineRegistry;
import io.kvprefix.tokenizer.Tokenizers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ExecutionException;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The router service without a front door: classification, routing by cache and by load per model,
 * LoRA salting, the lifecycle's load and counts returning to 0, the retry on the next engine, the
 * route API, admission and no engine. The engines' up/down state is set by hand here (their URLs
 * answer nothing and the health checks are far apart); the front door's tests check it against real
 * stand-in engines.
 */
class RouterServiceTest {
    private static final int BS = 4;
    private final PrefixIndex index =
            PrefixIndex.create(IndexConfig.builder().blockSize(BS).build());
    private RouterService service;

    @BeforeEach
    void start() {
        service = RouterService.builder()
                .index(index)
                .engine(EngineSpec.of(1, "http://127.0.0.1:1"))
                .engine(EngineSpec.of(2, "http://127.0.0.1:1/two"))
                .policy("kvprefix-ttft")
                .healthInterval(Duration.ofHours(1))
                .healthTimeout(Duration.ofMillis(500))
                .tokenizer("tok", Tokenizers.open("tokens"))
                .maxInFlight(2)
                .maxQueued(0)
                .build();
        up(1, Map.of("m", card("m", null), "tok", card("tok", null)));
        up(2, Map.of("m", card("m", null), "tok", card("tok", null), "lora-a", card("lora-a", "m")));
    }

    @AfterEach
    void stop() {
        service.close();
        index.close();
    }

    private void up(long worker, Map<String, JsonNode> models) {
        EngineRegistry r = service.registry();
        r.healthy(r.engine(Worker.of(worker)), models);
    }

    private static JsonNode card(String id, String parent) {
        var c = Classifier.JSON.createObjectNode().put("id", id).put("object", "model");
        if (parent != null) {
            c.put("parent", parent);
        }
        return c;
    }

    private static int[] tokens(int n) {
        return IntStream.rangeClosed(1, n).toArray();
    }

    private void store(long worker, int[] tokens, String lora) {
        long[] hashes = new long[tokens.length / BS];
        for (int i = 0; i < hashes.length; i++) {
            hashes[i] = worker * 1000 + i + (lora == null ? 0 : 500);
        }
        EventStatus s = index.apply(
                new KvEvent.StoredTokens(Worker.of(worker), OptionalLong.empty(), tokens, BS, hashes, lora, null));
        assertEquals(EventStatus.OK, s);
    }

    private static byte[] completion(String model, int[] prompt) {
        StringBuilder sb = new StringBuilder("{\"model\":\"" + model + "\",\"max_tokens\":1,\"prompt\":[");
        for (int i = 0; i < prompt.length; i++) {
            sb.append(i == 0 ? "" : ",").append(prompt[i]);
        }
        return sb.append("]}").toString().getBytes(StandardCharsets.UTF_8);
    }

    private RoutedRequest route(byte[] body) throws Exception {
        ClassifiedRequest c = service.classify("POST", "/v1/completions", body);
        return service.route(c, service.admit().get());
    }

    @Test
    void tokenIdsRouteByCacheAndTheLoadComesBackToZero() throws Exception {
        store(2, tokens(16), null);
        RoutedRequest r = route(completion("m", tokens(20)));
        assertEquals(Worker.of(2), r.worker());
        assertEquals(4, r.cachedBlocks());
        assertTrue(r.routedByCache());
        assertEquals("2/0", r.headers().get("x-kvprefix-worker"));
        assertEquals("4", r.headers().get("x-kvprefix-cached-blocks"));
        assertEquals("cache", r.headers().get("x-kvprefix-route"));
        assertNull(r.headers().get("x-kvprefix-route-reason"));
        assertEquals(
                "http://127.0.0.1:1/two/v1/completions?x=1",
                r.target("/v1/completions?x=1").toString());
        assertEquals(1, service.stats().inFlight());
        assertEquals(1, service.stats().engineInFlight());
        assertEquals(4, service.router("m").activePrefillTokens(Worker.of(2)), "20 tokens, 16 of them cached");
        r.firstByte();
        assertEquals(0, service.router("m").activePrefillTokens(Worker.of(2)));
        assertEquals(1, service.router("m").activeRequests(Worker.of(2)));
        byte[] body =
                "{\"usage\":{\"prompt_tokens\":20,\"completion_tokens\":1,\"prompt_tokens_details\":{\"cached_tokens\":16}}}"
                        .getBytes(StandardCharsets.UTF_8);
        r.responseStarted(200, "application/json");
        r.responseBytes(body, 0, body.length);
        r.completed();
        r.cancelled(); // a second end does nothing
        assertEquals(new Usage(20, 1, 16), r.usage());
        assertEquals(0, service.router("m").activeRequests(Worker.of(2)));
        assertEquals(0, service.stats().inFlight());
        assertEquals(0, service.stats().engineInFlight());
        assertEquals(1, service.stats().decisions());
        String metrics = service.scrape();
        assertTrue(
                metrics.contains("kvprefix_service_cached_tokens_total{source=\"engine\",worker=\"2/0\"} 16.0"),
                metrics);
        assertTrue(
                metrics.contains("kvprefix_service_cached_tokens_total{source=\"index\",worker=\"2/0\"} 16.0"),
                metrics);
        assertTrue(
                metrics.contains("kvprefix_service_requests_total{outcome=\"ok\",route=\"cache\",worker=\"2/0\"} 1.0"),
                metrics);
        // the first request the service saw: an infinite cache shared by the fleet held none of it yet
        assertTrue(
                metrics.contains("kvprefix_service_cached_tokens_total{source=\"bound\",worker=\"2/0\"} 0.0"), metrics);
        assertEquals(5, service.infiniteCacheBound().blocks(), "20 tokens at 4-token blocks");
        route(completion("m", tokens(20))).completed(); // the same prompt again: all 5 blocks seen before
        assertEquals(5.0, service.infiniteCacheBound().hitBlocks());
    }

    /**
     * The infinite-cache bound counts each request by the hashes its routing call made (the adapter's
     * salt included), with in-flight prefills counted or not: an adapter's prompt and the same tokens
     * for the base model are different chains, so the second finds nothing; each seen again finds all.
     * A bound made from other hashes (unsalted, or none handed back) would count the second as a hit.
     */
    @Test
    void theBoundCountsTheHashesOfTheRoutingCall() throws Exception {
        for (boolean inflight : new boolean[] {false, true}) {
            if (inflight) {
                service.close();
                service = RouterService.builder()
                        .index(index)
                        .engine(EngineSpec.of(1, "http://127.0.0.1:1"))
                        .engine(EngineSpec.of(2, "http://127.0.0.1:1/two"))
                        .policy("kvprefix-ttft")
                        .inflightPrefills(true)
                        .healthInterval(Duration.ofHours(1))
                        .build();
                up(1, Map.of("m", card("m", null)));
                up(2, Map.of("m", card("m", null), "lora-a", card("lora-a", "m")));
            }
            InfiniteCacheSketch bound = service.infiniteCacheBound();
            route(completion("lora-a", tokens(16))).completed();
            assertEquals(0.0, bound.hitBlocks(), "the first request: nothing seen before");
            route(completion("m", tokens(16))).completed();
            assertEquals(8, bound.blocks());
            assertEquals(
                    0.0, bound.hitBlocks(), "inflight " + inflight + ": the base model's chains are not the adapter's");
            route(completion("lora-a", tokens(16))).completed();
            route(completion("m", tokens(22))).completed(); // 5 full blocks, the first 4 seen
            assertEquals(17, bound.blocks());
            assertEquals(8.0, bound.hitBlocks(), "inflight " + inflight + ": each prompt seen again");
        }
    }

    @Test
    void aLoraAdapterSaltsTheHashesAsItsStoresAre() throws Exception {
        store(2, tokens(16), "lora-a");
        RoutedRequest lora = route(completion("lora-a", tokens(16)));
        assertEquals(4, lora.cachedBlocks(), "the adapter's blocks, hashed with its name");
        lora.completed();
        RoutedRequest base = route(completion("m", tokens(16)));
        assertEquals(0, base.cachedBlocks(), "the base model's hashes are not the adapter's");
        base.completed();
        assertEquals(Worker.of(2), lora.worker(), "only engine 2 serves the adapter");
    }

    @Test
    void textWithoutATokenizerOrWithoutTokensRoutesByLoadAndSaysWhy() throws Exception {
        RoutedRequest text = service.route(
                service.classify("POST", "/v1/completions", "{\"model\":\"m\",\"prompt\":\"hello\"}".getBytes()), null);
        assertFalse(text.routedByCache());
        assertEquals("load-only", text.headers().get("x-kvprefix-route"));
        assertEquals("no_tokenizer", text.headers().get("x-kvprefix-route-reason"));
        text.completed();
        ClassifiedRequest chat = service.classify(
                "POST",
                "/v1/chat/completions",
                "{\"model\":\"tok\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}".getBytes());
        assertFalse(service.needsBlockingRoute(chat), "the tokens mode does not block");
        RoutedRequest r = service.route(chat, null);
        assertEquals("needs_token_ids", r.loadOnlyReason(), "the tokenizer's reason reaches the header");
        r.completed();
        RoutedRequest other =
                service.route(service.classify("POST", "/v1/embeddings", "{\"model\":\"m\"}".getBytes()), null);
        assertEquals("pass_through", other.loadOnlyReason());
        other.cancelled();
        assertEquals(0, service.stats().engineInFlight());
    }

    @Test
    void refusalsAreTheContractsErrors() {
        ServiceException unknown = assertThrows(
                ServiceException.class,
                () -> service.classify("POST", "/v1/completions", completion("nope", tokens(4))));
        assertEquals(404, unknown.status());
        assertEquals("model_not_found", unknown.code());
        ServiceException noModel = assertThrows(
                ServiceException.class, () -> route("{\"prompt\":[1,2,3]}".getBytes(StandardCharsets.UTF_8)));
        assertEquals("model_required", noModel.code());
        assertEquals(0, service.stats().inFlight(), "a refused route frees its slot");
        EngineRegistry reg = service.registry();
        reg.down(reg.engine(Worker.of(1)), "test");
        reg.down(reg.engine(Worker.of(2)), "test");
        ServiceException none = assertThrows(ServiceException.class, () -> route(completion("m", tokens(4))));
        assertEquals(503, none.status());
        assertEquals("no_engine_available", none.code());
        assertNotNull(service.notReady());
        assertEquals(0, service.stats().inFlight());
    }

    @Test
    void aFailureBeforeTheFirstByteIsRetriedOnceOnTheNextEngine() throws Exception {
        store(2, tokens(16), null);
        RoutedRequest first = route(completion("m", tokens(16)));
        assertEquals(Worker.of(2), first.worker());
        assertEquals(Worker.of(1), first.fallbacks(3).get(0).worker(), "the other engine is the fallback");
        RoutedRequest second = first.retry("connection refused");
        assertEquals(Worker.of(1), second.worker(), "the failed engine left routing");
        assertTrue(second.retried());
        assertFalse(service.registry().engine(Worker.of(2)).up());
        assertEquals(1, service.stats().inFlight(), "the slot passed to the retry");
        ServiceException e = assertThrows(ServiceException.class, () -> second.retry("refused again"));
        assertEquals(502, e.status());
        assertEquals("engine_unavailable", e.code());
        assertEquals(0, service.stats().inFlight());
        assertEquals(0, service.stats().engineInFlight());
        assertTrue(service.scrape().contains("kvprefix_service_retries_total 1.0"));
    }

    @Test
    void admissionIsBounded() throws Exception {
        RoutedRequest a = route(completion("m", tokens(4)));
        RoutedRequest b = route(completion("m", tokens(4)));
        ExecutionException full =
                assertThrows(ExecutionException.class, () -> service.admit().get());
        assertEquals("queue_full", ((ServiceException) full.getCause()).code());
        a.completed();
        b.failed("test", false);
        assertEquals(0, service.stats().inFlight());
        route(completion("m", tokens(4))).cancelled();
    }

    @Test
    void theRouteApiChargesUntilDoneAndExplainChargesNothing() {
        store(1, tokens(8), null);
        RouteApi api = service.routeApi();
        RouteApi.Answer a = api.handle("POST", "/kvprefix/v1/route", completion("m", tokens(12)));
        assertEquals(200, a.status(), new String(a.body(), StandardCharsets.UTF_8));
        JsonNode j = read(a.body());
        assertEquals("1/0", j.get("worker").asText());
        assertEquals(2, j.get("cached_blocks").asInt());
        assertEquals("cache", j.get("route").asText());
        assertEquals(2, j.get("workers").size());
        String id = j.get("decision_id").asText();
        assertEquals(1, service.router("m").activeRequests(Worker.of(1)));
        assertEquals(
                204,
                api.handle("POST", "/kvprefix/v1/route/" + id + "/first-token", new byte[0])
                        .status());
        assertEquals(
                204,
                api.handle("POST", "/kvprefix/v1/route/" + id + "/done", new byte[0])
                        .status());
        assertEquals(0, service.router("m").activeRequests(Worker.of(1)));
        RouteApi.Answer gone = api.handle("POST", "/kvprefix/v1/route/" + id + "/done", new byte[0]);
        assertEquals(404, gone.status());
        assertEquals(
                "decision_not_found",
                read(gone.body()).path("error").path("code").asText());
        RouteApi.Answer x = api.handle("POST", "/kvprefix/v1/explain", completion("m", tokens(12)));
        assertEquals(200, x.status());
        JsonNode e = read(x.body());
        assertEquals("1/0", e.get("preferred").asText());
        assertEquals(3, e.get("query_blocks").asInt());
        assertEquals(2, e.get("workers").get(0).get("depth").asInt());
        assertEquals(0, service.router("m").activeRequests(Worker.of(1)), "explain charges nothing");
        assertEquals(0, service.stats().openDecisions());
        assertEquals(
                400,
                api.handle("POST", "/kvprefix/v1/route", "{\"model\":\"m\"}".getBytes())
                        .status());
        assertEquals(405, api.handle("GET", "/kvprefix/v1/route", new byte[0]).status());
        assertEquals(404, api.handle("POST", "/kvprefix/v1/nosuch", new byte[0]).status());
    }

    @Test
    void modelsAreTheUnionOfTheUpEngines() {
        JsonNode m = read(service.modelsJson());
        assertEquals("list", m.get("object").asText());
        assertEquals(3, m.get("data").size());
        assertEquals("m", m.get("data").get(1).get("id").asText(), "sorted: lora-a, m, tok");
        EngineRegistry reg = service.registry();
        reg.down(reg.engine(Worker.of(2)), "test");
        assertEquals(2, read(service.modelsJson()).get("data").size(), "the adapter only engine 2 served is gone");
        JsonNode h = read(service.healthJson());
        assertEquals("ok", h.get("status").asText());
        assertEquals(false, h.get("engines").get(1).get("up").asBoolean());
        assertEquals("test", h.get("engines").get(1).get("reason").asText());
    }

    private static JsonNode read(byte[] b) {
        try {
            return Classifier.JSON.readTree(b);
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }
}
