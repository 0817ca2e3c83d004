package io.kvprefix.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvprefix.standin.testing.StandinProcess;
import io.kvprefix.tokenizer.Tokenizers;
import io.kvprefix.tokenizer.testing.TokenizerData;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Chat through {@code kvprefix serve}, as an application sends it: the official OpenAI Node SDK streams
 * chat completions with {@code stream_options.include_usage} to stand-in engines that render the chat
 * template with a real model's tokenizer (Qwen3's files, which {@code ./kvprefix setup} fetches), and the
 * router, with the same model's tokenizer in {@code local} mode, routes them by cache: a second
 * conversation sharing the first's system prompt lands on the engine that served the first, and the
 * engine's reported cached tokens agree with {@code x-kvprefix-cached-blocks}.
 */
class ChatSdkTest {
    /** A long system prompt: several blocks the two conversations share. */
    private static final String SYSTEM =
            "You are a careful assistant for a team that runs large language models in production. ".repeat(6);

    private static String messages(String user) {
        return "[{\"role\":\"system\",\"content\":\"" + SYSTEM + "\"},{\"role\":\"user\",\"content\":\"" + user
                + "\"}]";
    }

    @Test
    void chatStreamsThroughTheSdkAndRoutesByCache() throws Exception {
        Path qwen3 = TokenizerData.model("qwen3");
        Path sdk = Serve.openAiSdkDir();
        Path script =
                Path.of(ChatSdkTest.class.getResource("/openai-sdk/drive.mjs").toURI());
        try (StandinProcess engines = StandinProcess.start(
                        "--engines",
                        "2",
                        "--time-scale",
                        "0.05",
                        "--enable-prompt-tokens-details",
                        "--tokenizer",
                        qwen3.toString());
                Serve serve = Serve.start(
                        engines.engines().stream()
                                .map(StandinProcess.Engine::spec)
                                .toList(),
                        o -> o.tokenizer(Serve.MODEL, Tokenizers.open("local:" + qwen3)))) {
            engines.awaitLive(serve.service::scrape); // the first request's events must reach the index
            JsonNode first = chat(serve, sdk, script, messages("What is a KV cache?"));
            assertEquals("cache", first.get("route").asText(), "chat routed by its tokens: " + first);
            assertEquals("length", first.get("finish").asText());
            assertTrue(first.get("chunks").asInt() >= 6, first.toString());
            int prompt = first.get("usage").get("prompt_tokens").asInt();
            assertTrue(prompt > 64, "the system prompt is several blocks: " + first);
            String w = first.get("worker").asText();
            String body = "{\"model\":\"" + Serve.MODEL + "\",\"messages\":" + messages("What is a KV cache?") + "}";
            Serve.await(
                    "the index has the first conversation's blocks",
                    30,
                    () -> EngineLossTest.depth(serve, body, w) >= 4);
            JsonNode second = chat(serve, sdk, script, messages("And what is prefix caching?"));
            assertEquals(w, second.get("worker").asText(), "the shared system prompt brings it back: " + second);
            int blocks = second.get("cachedBlocks").asInt();
            assertTrue(blocks >= 4, second.toString());
            assertEquals(
                    blocks * 16,
                    second.get("usage")
                            .get("prompt_tokens_details")
                            .get("cached_tokens")
                            .asInt(),
                    "the engine found what the router predicted: " + second);
        }
    }

    private static JsonNode chat(Serve serve, Path sdk, Path script, String messages) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(
                "node",
                script.toString(),
                "http://127.0.0.1:" + serve.server.port() + "/v1",
                Serve.MODEL,
                "stream-chat",
                messages,
                "6");
        pb.environment().put("OPENAI_SDK_DIR", sdk.toString());
        Process p = pb.redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        return Serve.json(out);
    }
}
