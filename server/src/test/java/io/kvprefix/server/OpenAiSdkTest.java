package io.kvprefix.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvprefix.standin.testing.StandinProcess;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The official OpenAI Node SDK ({@code openai} from npm, which {@code ./kvprefix setup} installs into a
 * cache folder outside the repository) as the client: it streams completions through {@code kvprefix
 * serve} with {@code stream_options.include_usage} and gets every chunk, the usage chunk and the
 * routing headers; a second request with the same prompt comes back cached; it reads the router's
 * errors as the API errors it knows, and an engine dying mid-stream as an API error, not a hang.
 */
class OpenAiSdkTest {
    private static StandinProcess engines;
    private static Serve serve;
    private static Path sdk;
    private static Path script;

    @BeforeAll
    static void start() throws Exception {
        sdk = Serve.openAiSdkDir();
        script =
                Path.of(OpenAiSdkTest.class.getResource("/openai-sdk/drive.mjs").toURI());
        engines = StandinProcess.start("--engines", "2", "--time-scale", "0.05", "--enable-prompt-tokens-details");
        serve = Serve.start(
                engines.engines().stream().map(StandinProcess.Engine::spec).toList(), o -> {});
        engines.awaitLive(serve.service::scrape); // a test's first request must reach the index
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

    private static String ids(int from, int n) {
        return IntStream.range(from, from + n).mapToObj(Integer::toString).collect(Collectors.joining(",", "[", "]"));
    }

    private static Process node(String mode, String prompt, int maxTokens) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(
                "node",
                script.toString(),
                "http://127.0.0.1:" + serve.server.port() + "/v1",
                mode.equals("unknown-model") ? "no-such-model" : Serve.MODEL,
                mode,
                prompt,
                Integer.toString(maxTokens));
        pb.environment().put("OPENAI_SDK_DIR", sdk.toString());
        return pb.redirectError(ProcessBuilder.Redirect.INHERIT).start();
    }

    private static JsonNode run(String mode, String prompt, int maxTokens) throws Exception {
        Process p = node(mode, prompt, maxTokens);
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "node ended");
        assertEquals(0, p.exitValue(), "node " + mode + ": " + out);
        return Serve.json(out.lines().reduce((a, b) -> b).orElseThrow());
    }

    @Test
    void streamsCompletionsWithTheUsageChunkAndComesBackCached() throws Exception {
        String prompt = ids(30_000, 70);
        JsonNode first = run("stream-completion", prompt, 8);
        assertEquals("cache", first.get("route").asText(), first.toString());
        assertEquals(9, first.get("chunks").asInt(), "8 token chunks and the usage chunk: " + first);
        assertEquals("length", first.get("finish").asText());
        assertEquals(70, first.get("usage").get("prompt_tokens").asInt());
        assertEquals(8, first.get("usage").get("completion_tokens").asInt());
        assertEquals(
                0,
                first.get("usage")
                        .get("prompt_tokens_details")
                        .get("cached_tokens")
                        .asInt());
        String w = first.get("worker").asText();
        String body = Serve.completion(30_000, 30_069, null);
        Serve.await("the index has the first request's blocks", 30, () -> EngineLossTest.depth(serve, body, w) >= 4);
        JsonNode second = run("stream-completion", prompt, 8);
        assertEquals(w, second.get("worker").asText(), "back to the engine that has it: " + second);
        assertEquals("4", second.get("cachedBlocks").asText());
        assertEquals(
                64,
                second.get("usage")
                        .get("prompt_tokens_details")
                        .get("cached_tokens")
                        .asInt(),
                second.toString());
        assertEquals(
                first.get("text").asText(), second.get("text").asText(), "the same prompt, the same seeded tokens");
        JsonNode whole = run("complete", ids(31_000, 20), 3);
        assertEquals(3, whole.get("usage").get("completion_tokens").asInt(), whole.toString());
    }

    @Test
    void theRoutersErrorsAreErrorsTheSdkKnows() throws Exception {
        JsonNode r = run("unknown-model", "[1,2,3]", 1);
        JsonNode e = r.get("error");
        assertTrue(e.get("api").asBoolean(), r.toString());
        assertEquals(404, e.get("status").asInt(), r.toString());
        assertEquals("model_not_found", e.get("code").asText(), r.toString());
        assertEquals("invalid_request_error", e.get("type").asText(), r.toString());
    }

    @Test
    void anEngineDyingMidStreamIsAnApiErrorNotAHang() throws Exception {
        try (StandinProcess lone =
                        StandinProcess.start("--worker-id", "5", "--time-scale", "1", "--speeds", "100,20000");
                Serve one = Serve.start(List.of(lone.engine(0).spec()), o -> {})) {
            ProcessBuilder pb = new ProcessBuilder(
                    "node",
                    script.toString(),
                    "http://127.0.0.1:" + one.server.port() + "/v1",
                    Serve.MODEL,
                    "stream-until-error",
                    ids(40_000, 30),
                    "500");
            pb.environment().put("OPENAI_SDK_DIR", sdk.toString());
            Process p = pb.redirectError(ProcessBuilder.Redirect.INHERIT).start();
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            assertEquals("{\"streaming\":true}", out.readLine(), "the stream began");
            lone.kill();
            JsonNode r = Serve.json(out.readLine());
            assertTrue(p.waitFor(60, TimeUnit.SECONDS));
            assertTrue(r.get("chunks").asInt() < 500, r.toString());
            JsonNode e = r.get("error");
            assertTrue(e.get("api").asBoolean(), "the SDK raised an APIError: " + r);
            assertEquals("engine_unavailable", e.get("code").asText(), r.toString());
        }
    }
}
