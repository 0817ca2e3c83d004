package io.kvprefix.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvprefix.standin.testing.StandinProcess;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Event streams through {@code kvprefix serve}: {@code curl} receives, byte for byte, the framing the
 * engine sends when asked directly (ids and timestamps aside, which the engine draws per request, and
 * the cached tokens, since the second time the engine has the prompt cached),
 * {@code data: [DONE]} included; chunks reach the client as the engine makes them, not at the end; and
 * the usage chunk of {@code stream_options.include_usage} passes and is counted.
 */
class SseStreamTest {
    /** 30 ms per output token, in real time: a buffering proxy would deliver every chunk at once. */
    private static final String DECODE_US = "30000";

    private static StandinProcess engines;
    private static Serve serve;

    @BeforeAll
    static void start() throws Exception {
        engines = StandinProcess.start(
                "--engines",
                "1",
                "--time-scale",
                "1",
                "--speeds",
                "100," + DECODE_US,
                "--enable-prompt-tokens-details");
        serve = Serve.start(List.of(engines.engine(0).spec()), o -> {});
    }

    @AfterAll
    static void stop() {
        if (serve != null) {
            serve.close();
        }
        if (engines != null) {
            engines.close();
        }
    }

    @Test
    void curlSeesTheEnginesFramingByteForByte() throws Exception {
        String body = Serve.completion(
                200, 260, "\"max_tokens\":6,\"stream\":true,\"stream_options\":{\"include_usage\":true}");
        byte[] direct = curl(engines.engine(0).url() + "/v1/completions", body);
        byte[] proxied = curl("http://127.0.0.1:" + serve.server.port() + "/v1/completions", body);
        String d = new String(direct, StandardCharsets.UTF_8);
        String p = new String(proxied, StandardCharsets.UTF_8);
        checkFraming(p);
        checkFraming(d);
        // the engine cached the prompt when it answered directly: the second answer reports it cached
        assertEquals(
                normalize(d).replace("\"cached_tokens\":0", "\"cached_tokens\":48"),
                normalize(p),
                "the same events, byte for byte, ids and timestamps aside");
        assertTrue(p.endsWith("data: [DONE]\n\n"), p);
        String[] events = p.split("\n\n");
        JsonNode usage = Serve.json(events[events.length - 2].substring("data: ".length()))
                .get("usage");
        assertEquals(61, usage.get("prompt_tokens").asInt(), p);
        assertEquals(6, usage.get("completion_tokens").asInt(), p);
        assertEquals(
                48,
                usage.get("prompt_tokens_details").get("cached_tokens").asInt(),
                "3 of the 61 tokens' blocks: " + p);
    }

    @Test
    void chunksArriveAsTheEngineMakesThem() throws Exception {
        HttpResponse<List<Serve.Line>> r = serve.stream(
                "/v1/completions", Serve.completion(300, 340, "\"max_tokens\":8,\"stream\":true"), l -> {});
        assertEquals(200, r.statusCode());
        assertEquals(
                "text/event-stream",
                r.headers().firstValue("content-type").orElseThrow().split(";")[0]);
        assertTrue(r.headers().firstValue("content-length").isEmpty(), "a stream is chunked");
        List<Serve.Line> data = new ArrayList<>();
        for (Serve.Line l : r.body()) {
            if (l.text().startsWith("data: ") && !l.text().equals("data: [DONE]")) {
                data.add(l);
            }
        }
        assertEquals(8, data.size(), "one chunk per token: " + r.body());
        assertEquals("data: [DONE]", r.body().get(r.body().size() - 2).text(), "the stream ends with [DONE]");
        double spreadMs = (data.get(data.size() - 1).at() - data.get(0).at()) / 1e6;
        // the engine makes them 30 ms apart (7 gaps: 210 ms); all at once would mean the router held them back
        assertTrue(spreadMs >= 90, "chunks spread over " + spreadMs + " ms");
    }

    @Test
    void aSlowClientGetsEveryByteAndHoldsNoMoreThanItsStream() throws Exception {
        // 400 tokens read slowly: backpressure pauses the engine's response, nothing is lost
        CompletableFuture<HttpResponse<List<Serve.Line>>> f = CompletableFuture.supplyAsync(() -> {
            try {
                return serve.stream(
                        "/v1/completions", Serve.completion(400, 440, "\"max_tokens\":40,\"stream\":true"), l -> {
                            try {
                                Thread.sleep(5);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        });
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        HttpResponse<List<Serve.Line>> r = f.get(120, TimeUnit.SECONDS);
        long chunks =
                r.body().stream().filter(l -> l.text().startsWith("data: {")).count();
        assertEquals(40, chunks);
        Serve.await("the exchange ended", 30, () -> serve.server.stats().exchanges() == 0);
        assertEquals(0, serve.service.stats().inFlight());
    }

    /** The body {@code curl -sN} receives for a POST of {@code json}. */
    static byte[] curl(String url, String json) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(
                        "curl",
                        "-sS",
                        "-N",
                        "--max-time",
                        "60",
                        "-H",
                        "content-type: application/json",
                        "--data-binary",
                        "@-",
                        url)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        try (OutputStream in = p.getOutputStream()) {
            in.write(json.getBytes(StandardCharsets.UTF_8));
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (InputStream s = p.getInputStream()) {
            s.transferTo(out);
        }
        assertTrue(p.waitFor(90, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), "curl " + url);
        return out.toByteArray();
    }

    /** Every event is one {@code data: } line and a blank line, the last one {@code data: [DONE]}; nothing else. */
    static void checkFraming(String s) {
        assertTrue(s.endsWith("\n\n"), s);
        String[] events = s.substring(0, s.length() - 2).split("\n\n", -1);
        assertTrue(events.length >= 2, s);
        for (int i = 0; i < events.length; i++) {
            String e = events[i];
            assertTrue(e.startsWith("data: ") && !e.contains("\n") && !e.contains("\r"), "event " + i + ": " + e);
            if (i < events.length - 1) {
                Serve.json(e.substring(6));
            }
        }
        assertEquals("data: [DONE]", events[events.length - 1]);
    }

    private static String normalize(String s) {
        return s.replaceAll("\"id\":\"[^\"]*\"", "\"id\":\"ID\"").replaceAll("\"created\":\\d+", "\"created\":0");
    }
}
