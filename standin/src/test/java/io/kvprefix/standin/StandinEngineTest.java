package io.kvprefix.standin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvprefix.IndexConfig;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.zmq.EngineEndpoint;
import io.kvprefix.zmq.KvEventSubscriber;
import io.kvprefix.zmq.SubscriberStats;
import java.io.InputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The engine behind the API: its KV events, read by kvprefix's own subscriber into a
 * {@link PrefixIndex}, agree with the cached tokens the engine itself reports for the next identical
 * request; a client that goes away frees what its request held; prefill and decode take the time the
 * settings say, scaled.
 */
class StandinEngineTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration WAIT = Duration.ofSeconds(60);

    private static EngineEndpoint endpoint(Standin.BoundEngine e) {
        return EngineEndpoint.parse(
                "tcp://127.0.0.1:" + e.events() + "=" + e.worker() + ",replay=tcp://127.0.0.1:" + e.replay());
    }

    private static int cachedTokens(HttpResponse<String> r) throws Exception {
        assertEquals(200, r.statusCode(), r.body());
        return JSON.readTree(r.body())
                .get("usage")
                .get("prompt_tokens_details")
                .get("cached_tokens")
                .asInt();
    }

    /** How many prompt tokens vLLM reports cached for a hit of {@code depth} blocks: not past the last token's block. */
    private static int reported(int depth, int promptLength, int blockSize) {
        return Math.min(depth, (promptLength - 1) / blockSize) * blockSize;
    }

    @Test
    void theIndexFedByTheEventsPredictsTheEnginesOwnCachedTokens() throws Exception {
        try (Standin s = Standin.start(StandinSettings.builder()
                        .engines(2)
                        .firstWorker(10)
                        .timeScale(0.02)
                        .cacheBlocks(40)
                        .promptTokensDetails(true)
                        .build());
                PrefixIndex index = PrefixIndex.create(IndexConfig.defaults());
                KvEventSubscriber sub = KvEventSubscriber.builder(index).build()) {
            for (Standin.BoundEngine e : s.engines()) {
                sub.addEngine(endpoint(e));
            }
            awaitLive(sub, s);
            Standin.BoundEngine a = s.engines().get(0);
            // a shared system prompt, then different turns; enough blocks (40 per engine) that some are evicted
            int[] system = StandinApiTest.prompt(100, 160);
            for (int turn = 0; turn < 12; turn++) {
                int[] p = concat(system, StandinApiTest.prompt(200 + turn, 50 + 7 * turn));
                Standin.BoundEngine target = s.engines().get(turn % 3 == 0 ? 1 : 0);
                String body = "{\"prompt\":" + StandinApiTest.ids(p) + ",\"max_tokens\":2}";
                int first = cachedTokens(Http.post(target.http(), "/v1/completions", body));
                awaitQuiet(sub, s);
                int depth = index.match(p).depthOf(Worker.of(target.worker()));
                int second = cachedTokens(Http.post(target.http(), "/v1/completions", body));
                assertEquals(
                        reported(depth, p.length, 16),
                        second,
                        "turn " + turn + ": the index's depth " + depth + " blocks, the engine reports " + second
                                + " cached tokens (first time " + first + ")");
                assertTrue(second >= first, "turn " + turn);
            }
            assertEquals(0, sub.stats().total().decodeErrors(), sub.stats().toJson());
            assertTrue(sub.stats().total().get(SubscriberStats.Counter.BLOCKS_REMOVED) > 0, "evictions were seen");
            assertTrue(index.match(system).depthOf(Worker.of(a.worker())) > 0);
        }
    }

    @Test
    void aLateSubscriberCatchesUpThroughTheReplaySocket() throws Exception {
        try (Standin s = Standin.start(StandinSettings.builder().timeScale(0.02).build());
                PrefixIndex index = PrefixIndex.create(IndexConfig.defaults())) {
            Standin.BoundEngine e = s.engines().get(0);
            int[] p = StandinApiTest.prompt(7, 100);
            Http.post(e.http(), "/v1/completions", "{\"prompt\":" + StandinApiTest.ids(p) + ",\"max_tokens\":1}");
            await(() -> s.sent(e.worker()) == s.queued(e.worker()), "the batches went out, to no subscriber");
            try (KvEventSubscriber sub = KvEventSubscriber.builder(index).build()) {
                sub.addEngine(endpoint(e)); // joins after the engine published: the replay gives it the batches
                await(
                        () -> sub.stats().total().get(SubscriberStats.Counter.REPLAYED_BATCHES) == s.queued(e.worker()),
                        "every batch came through the replay socket");
                assertEquals(0, sub.stats().total().get(SubscriberStats.Counter.BATCHES), "none live");
                assertEquals(6, index.match(p).depthOf(Worker.of(e.worker())), "the replayed blocks are indexed");
            }
        }
    }

    @Test
    void aPrefixCacheResetClearsTheEngineAndTheIndex() throws Exception {
        try (Standin s = Standin.start(StandinSettings.builder()
                        .timeScale(0.02)
                        .promptTokensDetails(true)
                        .build());
                PrefixIndex index = PrefixIndex.create(IndexConfig.defaults());
                KvEventSubscriber sub = KvEventSubscriber.builder(index).build()) {
            Standin.BoundEngine e = s.engines().get(0);
            sub.addEngine(endpoint(e));
            awaitLive(sub, s);
            long clearedBefore = sub.stats().total().events(SubscriberStats.EventKind.CLEARED);
            int[] p = StandinApiTest.prompt(21, 70);
            String body = "{\"prompt\":" + StandinApiTest.ids(p) + ",\"max_tokens\":1}";
            cachedTokens(Http.post(e.http(), "/v1/completions", body));
            awaitQuiet(sub, s);
            assertEquals(4, index.match(p).depthOf(Worker.of(e.worker())));
            HttpResponse<String> reset = Http.post(e.http(), "/reset_prefix_cache", "");
            assertEquals(200, reset.statusCode());
            assertEquals("", reset.body());
            await(() -> index.match(p).depthOf(Worker.of(e.worker())) == 0, "AllBlocksCleared reached the index");
            assertEquals(0, cachedTokens(Http.post(e.http(), "/v1/completions", body)), "the engine's cache is empty");
            assertEquals(
                    clearedBefore + 1,
                    sub.stats().total().events(SubscriberStats.EventKind.CLEARED),
                    sub.stats().toJson());
        }
    }

    @Test
    void aClientThatGoesAwayAbortsItsRequestAndFreesItsBlocks() throws Exception {
        // 10 ms per output token: the 20,000 asked for would take 200 s, far past the wait for the abort
        try (Standin s = Standin.start(
                StandinSettings.builder().timeScale(0.05).speeds(100, 200_000).build())) {
            int port = s.engines().get(0).http();
            int[] p = StandinApiTest.prompt(9, 300);
            HttpResponse<InputStream> r = Http.CLIENT.send(
                    Http.to(port, "/v1/completions")
                            .header("content-type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(
                                    "{\"prompt\":" + StandinApiTest.ids(p) + ",\"max_tokens\":20000,\"stream\":true}"))
                            .build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            InputStream in = r.body();
            assertTrue(in.read() >= 0, "the first token arrived");
            await(() -> metric(port, "vllm:num_requests_running") == 1, "one request running");
            assertTrue(metric(port, "vllm:kv_cache_usage_perc") > 0, "it holds blocks");
            in.close(); // the client goes away mid-stream
            await(() -> metric(port, "vllm:num_requests_running") == 0, "the engine aborted it");
            assertEquals(0.0, metric(port, "vllm:kv_cache_usage_perc"), "its blocks are free (cached, evictable)");
            assertEquals(1.0, metricWith(port, "vllm:request_success_total", "finished_reason=\"abort\""));
        }
    }

    @Test
    void prefillAndDecodeTakeTheTimeTheSettingsSay() throws Exception {
        double scale = 0.5;
        // 1 ms per prompt token and 10 ms per decode step, at half speed: 1,000 uncached tokens ~ 0.5 s
        try (Standin s = Standin.start(
                StandinSettings.builder().timeScale(scale).speeds(1000, 10_000).build())) {
            int port = s.engines().get(0).http();
            int[] p = StandinApiTest.prompt(11, 1_000);
            double cold = firstByteSeconds(port, p, 1);
            double warm = firstByteSeconds(port, p, 1); // 992 tokens cached: the last block is computed
            double expectedCold = 1_000 * 1e-3 * scale;
            assertTrue(cold >= 0.9 * expectedCold, "cold TTFT " + cold + " s, expected about " + expectedCold);
            assertTrue(cold < 10 * expectedCold, "cold TTFT " + cold + " s");
            assertTrue(warm < cold / 3, "warm TTFT " + warm + " s against cold " + cold + " s");
            long t0 = System.nanoTime();
            Http.post(port, "/v1/completions", "{\"prompt\":" + StandinApiTest.ids(p) + ",\"max_tokens\":40}");
            double whole = (System.nanoTime() - t0) / 1e9;
            double decode = 40 * 10e-3 * scale; // 40 decode steps of 10 ms, scaled
            assertTrue(whole >= 0.9 * decode, "40 tokens in " + whole + " s, expected about " + decode);
        }
    }

    @Test
    void hundredsOfConcurrentStreamsAllFinishAndLeaveNothingRunning() throws Exception {
        try (Standin s = Standin.start(StandinSettings.builder()
                .engines(2)
                .timeScale(0.02)
                .limits(64, 2048)
                .build())) {
            int n = 400;
            java.util.List<java.util.concurrent.CompletableFuture<HttpResponse<String>>> all =
                    new java.util.ArrayList<>();
            for (int i = 0; i < n; i++) {
                int port = s.engines().get(i % 2).http();
                int[] p = StandinApiTest.prompt(1_000 + i % 50, 60 + i % 7);
                all.add(Http.CLIENT.sendAsync(
                        Http.to(port, "/v1/completions")
                                .header("content-type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString(
                                        "{\"prompt\":" + StandinApiTest.ids(p) + ",\"max_tokens\":20,\"stream\":true}"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString()));
            }
            for (var f : all) {
                HttpResponse<String> r = f.get(120, java.util.concurrent.TimeUnit.SECONDS);
                assertEquals(200, r.statusCode());
                assertEquals(21, r.body().split("\n\n").length, "20 tokens and [DONE]");
                assertTrue(r.body().endsWith("data: [DONE]\n\n"));
            }
            for (Standin.BoundEngine e : s.engines()) {
                await(() -> metric(e.http(), "vllm:num_requests_running") == 0, "nothing running");
                assertEquals(0.0, metric(e.http(), "vllm:num_requests_waiting"));
                assertEquals(n / 2 * 20.0, metric(e.http(), "vllm:generation_tokens_total"));
            }
        }
    }

    /** Seconds from sending a streamed request to its first body byte. */
    private static double firstByteSeconds(int port, int[] prompt, int maxTokens) throws Exception {
        long t0 = System.nanoTime();
        HttpResponse<InputStream> r = Http.CLIENT.send(
                Http.to(port, "/v1/completions")
                        .header("content-type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"prompt\":" + StandinApiTest.ids(prompt)
                                + ",\"max_tokens\":" + maxTokens + ",\"stream\":true}"))
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        try (InputStream in = r.body()) {
            assertTrue(in.read() >= 0);
            double t = (System.nanoTime() - t0) / 1e9;
            in.readAllBytes();
            return t;
        }
    }

    static double metric(int port, String name) {
        return metricWith(port, name, "");
    }

    static double metricWith(int port, String name, String label) {
        try {
            String text = Http.get(port, "/metrics").body();
            Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "\\{([^}]*)\\} (\\S+)$")
                    .matcher(text);
            while (m.find()) {
                if (m.group(1).contains(label)) {
                    return Double.parseDouble(m.group(2));
                }
            }
            throw new AssertionError(name + " not in " + text);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /**
     * Until the subscriber receives each engine's live batches, then every batch so far: a PUB socket
     * drops what it sends before the subscription reaches it (ZMQ's late joiner), and a lost last batch
     * is only found, and replayed, when a later one arrives, so a test's one request could never be
     * seen. Prefix-cache resets of the still empty engines (an AllBlocksCleared each, nothing to change)
     * are sent until one is applied.
     */
    private static void awaitLive(KvEventSubscriber sub, Standin s) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        for (Standin.BoundEngine e : s.engines()) {
            while (lastSeq(sub, e) < 0) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("timed out waiting for a live batch of engine " + e.worker() + ": "
                            + sub.stats().toJson());
                }
                assertEquals(200, Http.post(e.http(), "/reset_prefix_cache", "").statusCode());
                Thread.sleep(50);
            }
        }
        awaitQuiet(sub, s);
    }

    private static long lastSeq(KvEventSubscriber sub, Standin.BoundEngine e) {
        return sub.stats()
                .engine(endpoint(e).endpoint())
                .map(SubscriberStats.EngineStats::lastSeq)
                .orElse(-1L);
    }

    /** Until the subscriber has applied every batch each engine has published so far. */
    private static void awaitQuiet(KvEventSubscriber sub, Standin s) throws Exception {
        await(
                () -> {
                    for (Standin.BoundEngine e : s.engines()) {
                        long published = s.queued(e.worker());
                        long applied = lastSeq(sub, e);
                        if (applied < published - 1) {
                            return false;
                        }
                    }
                    return true;
                },
                "the subscriber applied every published batch");
    }

    static int[] concat(int[] a, int[] b) {
        int[] c = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }

    static void await(BooleanSupplier done, String what) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what);
            }
            Thread.sleep(5);
        }
    }
}
