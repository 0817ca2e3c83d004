package io.kvprefix.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvprefix.standin.testing.StandinProcess;
import io.kvprefix.testing.RepoPaths;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Event streams through the KV-aware route of a real gateway: the official OpenAI Node SDK (the one
 * {@code ./kvprefix setup} installs, driven by server's {@code drive.mjs}) streams completions and gets
 * every chunk, the usage chunk and the routing headers, and comes back to the engine that has the
 * prompt; chunks reach the client as the engine makes them (a gateway that buffered the body would
 * deliver them all at once); a client that goes away mid-stream aborts the engine's request.
 */
class StreamingTest {
    /** 30 ms per output token, in real time. */
    private static final String DECODE_US = "30000";

    private static StandinProcess engines;
    private static Gateway gateway;

    @BeforeAll
    static void start() throws Exception {
        engines = StandinProcess.start(
                "--engines",
                "2",
                "--time-scale",
                "1",
                "--speeds",
                "100," + DECODE_US,
                "--enable-prompt-tokens-details");
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

    @Test
    void theOpenAiSdkStreamsThroughTheGatewayAndComesBackCached() throws Exception {
        String prompt =
                IntStream.range(30_000, 30_070).mapToObj(Integer::toString).collect(Collectors.joining(",", "[", "]"));
        JsonNode first = sdk("stream-completion", prompt, 8);
        assertEquals("cache", first.get("route").asText(), first.toString());
        assertEquals(9, first.get("chunks").asInt(), "8 token chunks and the usage chunk: " + first);
        assertEquals("length", first.get("finish").asText());
        assertEquals(70, first.get("usage").get("prompt_tokens").asInt());
        String w = first.get("worker").asText();
        String body = Gateway.completion(30_000, 30_069, null);
        Gateway.await("the index has the first request's blocks", 30, () -> gateway.depth(body, w) >= 4);
        JsonNode second = sdk("stream-completion", prompt, 8);
        assertEquals(w, second.get("worker").asText(), "back to the engine that has it: " + second);
        assertEquals("4", second.get("cachedBlocks").asText());
        assertEquals(
                64,
                second.get("usage")
                        .get("prompt_tokens_details")
                        .get("cached_tokens")
                        .asInt(),
                second.toString());
        Gateway.await("every request ended", 30, () -> gateway.service.stats().inFlight() == 0);
    }

    @Test
    void chunksReachTheClientAsTheEngineMakesThem() throws Exception {
        List<Gateway.Line> lines =
                gateway.stream("/v1/completions", Gateway.completion(300, 340, "\"max_tokens\":12,\"stream\":true"));
        List<Gateway.Line> data = new ArrayList<>();
        for (Gateway.Line l : lines) {
            if (l.text().startsWith("data: {")) {
                data.add(l);
            }
        }
        assertEquals(12, data.size(), "one chunk per token: " + lines);
        assertEquals("data: [DONE]", lines.get(lines.size() - 2).text(), "the stream ends with [DONE]");
        double spreadMs = (data.get(data.size() - 1).at() - data.get(0).at()) / 1e6;
        // the engine makes them 30 ms apart (11 gaps: 330 ms); all at once would mean the gateway held them back
        assertTrue(
                spreadMs >= 100,
                "chunks spread over " + spreadMs + " ms, arriving at (ms): "
                        + data.stream()
                                .map(l -> (l.at() - data.get(0).at()) / 1_000_000)
                                .toList());
    }

    @Test
    void aClientThatGoesAwayMidStreamAbortsTheEnginesRequest() throws Exception {
        // 5000 tokens at 30 ms: the engine would be busy for 150 s unless the gateway aborts it
        Process curl = new ProcessBuilder(
                        "curl",
                        "-sS",
                        "-N",
                        "-H",
                        "content-type: application/json",
                        "--data-binary",
                        Gateway.completion(600, 640, "\"max_tokens\":5000,\"stream\":true"),
                        gateway.uri("/v1/completions").toString())
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        BufferedReader out = new BufferedReader(new InputStreamReader(curl.getInputStream(), StandardCharsets.UTF_8));
        int data = 0;
        for (String l; data < 3 && (l = out.readLine()) != null; ) {
            data += l.startsWith("data: {") ? 1 : 0;
        }
        assertEquals(3, data, "the stream began");
        assertEquals(1, running(), "the engine runs the request");
        curl.destroyForcibly(); // the client's connection closes
        assertTrue(curl.waitFor(30, TimeUnit.SECONDS));
        Gateway.await("the engine's request was aborted", 60, () -> running() == 0);
        Gateway.await(
                "the routed request ended", 30, () -> gateway.service.stats().inFlight() == 0);
        assertTrue(
                gateway.service.scrape().contains("outcome=\"cancelled\""),
                "counted as cancelled: " + gateway.service.scrape());
    }

    /** Requests running on both engines now, from their vLLM {@code /metrics}. */
    private static int running() {
        int n = 0;
        HttpClient c = HttpClient.newHttpClient();
        for (StandinProcess.Engine e : engines.engines()) {
            try {
                String m = c.send(
                                HttpRequest.newBuilder(URI.create(e.url() + "/metrics"))
                                        .timeout(Duration.ofSeconds(30))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString())
                        .body();
                Matcher r = Pattern.compile("(?m)^vllm:num_requests_running\\{[^}]*} ([0-9.]+)$")
                        .matcher(m);
                assertTrue(r.find(), m);
                n += (int) Double.parseDouble(r.group(1));
            } catch (IOException | InterruptedException x) {
                throw new AssertionError(x);
            }
        }
        return n;
    }

    /** Runs server's drive.mjs with the OpenAI Node SDK against the KV-aware route. */
    private static JsonNode sdk(String mode, String prompt, int maxTokens) throws Exception {
        Path script = RepoPaths.root().resolve("server/src/test/resources/openai-sdk/drive.mjs");
        ProcessBuilder pb = new ProcessBuilder(
                "node",
                script.toString(),
                gateway.uri("/v1").toString(),
                Gateway.MODEL,
                mode,
                prompt,
                Integer.toString(maxTokens));
        pb.environment().put("OPENAI_SDK_DIR", Gateway.openAiSdkDir().toString());
        Process p = pb.redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "node ended");
        assertEquals(0, p.exitValue(), "node " + mode + ": " + out);
        return Gateway.json(out.lines().reduce((a, b) -> b).orElseThrow());
    }
}
