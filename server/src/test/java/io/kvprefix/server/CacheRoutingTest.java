package io.kvprefix.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvprefix.standin.testing.StandinProcess;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/**
 * Routing by cache, proven end to end: stand-in engines publish their KV events over ZMQ in vLLM's
 * format, the router's index takes them in, and a second request sharing a prefix with a first lands
 * on the engine that served the first (sent to it directly, so only its events can tell the router),
 * once that engine's events have arrived; the engine's own
 * {@code prompt_tokens_details.cached_tokens} then agrees with {@code x-kvprefix-cached-blocks}, and the
 * meters count the engine-reported and the predicted cached tokens alike.
 */
class CacheRoutingTest {
    private static final int PREFIX = 64; // 4 blocks of 16
    private static final int PROMPT = 70; // 4 full blocks and 6 tokens: vLLM can count all 4 as cached

    @Test
    void theSecondRequestWithASharedPrefixLandsWhereTheFirstWasServed() throws Exception {
        try (StandinProcess engines = StandinProcess.start(
                        "--engines", "3", "--time-scale", "0.05", "--enable-prompt-tokens-details");
                Serve serve = Serve.start(
                        engines.engines().stream()
                                .map(StandinProcess.Engine::spec)
                                .toList(),
                        o -> o.policy("kvprefix-ttft"))) {
            engines.awaitLive(serve.service::scrape); // the first request's events must reach the index
            long reportedTotal = 0;
            for (int i = 0; i < 6; i++) {
                int base = 20_000 + i * 1000;
                StandinProcess.Engine target = engines.engine(i % 3);
                String w = target.worker() + "/0";
                // the first request goes to the engine directly: only its KV events can tell the router
                String first = prompt(base, PROMPT, 0);
                HttpResponse<String> r1 = post(serve, target.url() + "/v1/completions", first);
                assertEquals(200, r1.statusCode(), r1.body());
                Serve.await(
                        "the index has " + w + "'s blocks of prompt " + i,
                        30,
                        () -> EngineLossTest.depth(serve, first, w) >= 4);
                HttpResponse<String> r2 = serve.post("/v1/completions", prompt(base, PREFIX, base + 500));
                assertEquals(200, r2.statusCode(), r2.body());
                assertEquals(
                        w, r2.headers().firstValue("x-kvprefix-worker").orElseThrow(), "prompt " + i + " goes to " + w);
                assertEquals(
                        "cache", r2.headers().firstValue("x-kvprefix-route").orElseThrow());
                int blocks = Integer.parseInt(
                        r2.headers().firstValue("x-kvprefix-cached-blocks").orElseThrow());
                assertEquals(4, blocks, "the shared prefix's blocks");
                JsonNode usage = Serve.json(r2.body()).get("usage");
                assertEquals(PROMPT, usage.get("prompt_tokens").asInt());
                int cached =
                        usage.get("prompt_tokens_details").get("cached_tokens").asInt();
                assertEquals(blocks * 16, cached, "the engine's own count agrees with the router's: " + usage);
                reportedTotal += cached;
            }
            // the service counts a response's usage when the stream ends on its side, which may be just
            // after the client has read the last byte: wait for the last one to be counted
            long total = reportedTotal;
            Serve.await(
                    "the engine-reported cached tokens counted: " + total,
                    30,
                    () -> sum(serve.service.scrape(), "kvprefix_service_cached_tokens_total{source=\"engine\"")
                            >= total);
            String metrics = serve.service.scrape();
            long engineSide = sum(metrics, "kvprefix_service_cached_tokens_total{source=\"engine\"");
            long indexSide = sum(metrics, "kvprefix_service_cached_tokens_total{source=\"index\"");
            assertEquals(reportedTotal, engineSide, metrics);
            assertEquals(engineSide, indexSide, "the index predicted what the engines found");
        }
    }

    /** A completion of {@code prefix} tokens from {@code base}, then (when {@code tail > 0}) six more from {@code tail}. */
    private static String prompt(int base, int prefix, int tail) {
        StringBuilder sb = new StringBuilder("{\"model\":\"" + Serve.MODEL + "\",\"max_tokens\":2,\"prompt\":[");
        for (int t = 0; t < prefix; t++) {
            sb.append(t == 0 ? "" : ",").append(base + t);
        }
        for (int t = 0; tail > 0 && t < PROMPT - prefix; t++) {
            sb.append(',').append(tail + t);
        }
        return sb.append("]}").toString();
    }

    private static HttpResponse<String> post(Serve serve, String url, String json) throws Exception {
        return serve.http.send(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create(url))
                        .header("content-type", "application/json")
                        .POST(java.net.http.HttpRequest.BodyPublishers.ofString(json))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The sum of the samples of the lines starting with {@code prefix}. */
    private static long sum(String metrics, String prefix) {
        double s = 0;
        for (String l : metrics.lines().toList()) {
            if (l.startsWith(prefix)) {
                s += Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1));
            }
        }
        return (long) s;
    }
}
