package io.kvprefix.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.Router;
import io.kvprefix.Worker;
import io.kvprefix.standin.testing.StandinProcess;
import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * In-flight prefills through {@code kvprefix serve} (docs/SPEC.md section 6.7): with
 * {@code inflightPrefills} on and kvprefix-ttft, two engines busy with a prompt {@code A} of 320 tokens
 * and another of 160 (stand-ins at 50 ms per prompt token: 16 s and 8 s, so no KV event has announced
 * a block yet), a second {@code A} goes to the first's engine, counted as cached there: its estimate
 * there is A's 320 pending tokens and nothing of its own, against 160 + 320 on the other engine
 * (without the credit, 320 + 320 there). Every response ends, and with them every credit (the
 * response's end reaches {@code finished()}).
 */
class InflightServeTest {
    private static final int TOKENS = 320; // 20 blocks of 16

    @Test
    void aSecondIdenticalRequestWhileTheFirstPrefillsFollowsIt() throws Exception {
        try (StandinProcess engines =
                        StandinProcess.start("--engines", "2", "--time-scale", "1", "--speeds", "50000,1000");
                Serve serve = Serve.start(
                        engines.engines().stream()
                                .map(StandinProcess.Engine::spec)
                                .toList(),
                        o -> o.policy("kvprefix-ttft").inflightPrefills(true))) {
            Serve.await(
                    "both engines up",
                    60,
                    () -> serve.service.engines().stream().allMatch(e -> e.up()));
            String body = Serve.completion(5_000, 5_000 + TOKENS - 1, "\"max_tokens\":2");
            CompletableFuture<HttpResponse<String>> first = send(serve, body);
            Router router = serve.service.router(Serve.MODEL);
            Serve.await("the first request is routed and credited", 30, () -> router.inflightBlocks() == 20);
            Worker held = null;
            for (StandinProcess.Engine e : engines.engines()) {
                if (router.activeRequests(Worker.of(e.worker())) == 1) {
                    held = Worker.of(e.worker());
                }
            }
            assertTrue(held != null, "one engine has the first request");
            CompletableFuture<HttpResponse<String>> other =
                    send(serve, Serve.completion(90_000, 90_000 + TOKENS / 2 - 1, "\"max_tokens\":2"));
            Serve.await("the other request is routed and credited", 30, () -> router.inflightBlocks() == 30);
            assertEquals(
                    0,
                    serve.service.index().match(tokens()).depthOf(held),
                    "no event has announced the first request's blocks yet");
            HttpResponse<String> second = serve.post("/v1/completions", body);
            assertEquals(200, second.statusCode(), second.body());
            assertEquals(
                    held.workerId() + "/0",
                    second.headers().firstValue("x-kvprefix-worker").orElseThrow(),
                    "the second request follows the first");
            assertEquals(
                    "20",
                    second.headers().firstValue("x-kvprefix-cached-blocks").orElseThrow());
            assertEquals(200, first.get().statusCode());
            assertEquals(200, other.get().statusCode());
            Serve.await("every credit taken back", 30, () -> router.inflightBlocks() == 0);
        }
    }

    private static CompletableFuture<HttpResponse<String>> send(Serve serve, String body) {
        return serve.http.sendAsync(
                java.net.http.HttpRequest.newBuilder(serve.uri("/v1/completions"))
                        .header("content-type", "application/json")
                        .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static int[] tokens() {
        int[] t = new int[TOKENS];
        for (int i = 0; i < TOKENS; i++) {
            t[i] = 5_000 + i;
        }
        return t;
    }
}
