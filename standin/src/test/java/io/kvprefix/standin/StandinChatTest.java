package io.kvprefix.standin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvprefix.tokenizer.PromptTokenizer;
import io.kvprefix.tokenizer.Tokenizers;
import io.kvprefix.tokenizer.testing.TokenizerData;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Text and chat with a real tokenizer ({@code --tokenizer DIR}, Qwen3's files from npm): the engine's
 * prompt tokens are the tokenizer module's {@code local} mode's, chat streams as vLLM streams it
 * (the role chunk, one chunk per token, the finish chunk, usage, {@code [DONE]}), {@code /tokenize}
 * and the render endpoints answer with the same tokens (the tokenizer module's {@code render} mode
 * reads them), and the streamed pieces add up to the non-streamed text.
 */
class StandinChatTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static Path dir;
    private static Standin standin;
    private static PromptTokenizer local;
    private static int port;

    @BeforeAll
    static void start() {
        dir = TokenizerData.model("qwen3");
        standin = Standin.start(StandinSettings.builder()
                .model("qwen")
                .tokenizer(dir)
                .timeScale(0.02)
                .promptTokensDetails(true)
                .build());
        port = standin.engines().get(0).http();
        local = Tokenizers.open("local:" + dir);
    }

    @AfterAll
    static void stop() {
        if (standin != null) {
            standin.close();
        }
        if (local != null) {
            local.close();
        }
    }

    private static String chatBody(String user, String extra) {
        return "{\"model\":\"qwen\",\"messages\":[{\"role\":\"system\",\"content\":\"You are terse.\"},"
                + "{\"role\":\"user\",\"content\":\"" + user + "\"}]" + extra + "}";
    }

    @Test
    void aChatIsTokenizedAsTheLocalModeTokenizesIt() throws Exception {
        String body = chatBody("Name three rivers in Europe, please.", ",\"max_tokens\":6");
        int[] want = local.chat((ObjectNode) JSON.readTree(body)).tokens();
        HttpResponse<String> r = Http.post(port, "/v1/chat/completions", body);
        assertEquals(200, r.statusCode(), r.body());
        JsonNode b = JSON.readTree(r.body());
        assertEquals(want.length, b.get("usage").get("prompt_tokens").asInt());
        assertEquals(6, b.get("usage").get("completion_tokens").asInt());
        assertEquals("chat.completion", b.get("object").asText());
        assertEquals(
                "assistant", b.get("choices").get(0).get("message").get("role").asText());
        assertEquals("length", b.get("choices").get(0).get("finish_reason").asText());
        HttpResponse<String> render = Http.post(port, "/v1/chat/completions/render", body);
        assertEquals(200, render.statusCode(), render.body());
        JsonNode g = JSON.readTree(render.body());
        assertTrue(g.get("request_id").asText().startsWith("chatcmpl-"));
        assertEquals(JSON.valueToTree(want), g.get("token_ids"));
        HttpResponse<String> again = Http.post(port, "/v1/chat/completions", body);
        int cached = JSON.readTree(again.body())
                .get("usage")
                .get("prompt_tokens_details")
                .get("cached_tokens")
                .asInt();
        assertEquals((want.length - 1) / 16 * 16, cached, "the whole prompt but its last partial block was cached");
    }

    @Test
    void aStreamedChatIsFramedAsVllmFramesIt() throws Exception {
        String body = chatBody(
                "Say something short.",
                ",\"max_tokens\":4,\"stream\":true," + "\"stream_options\":{\"include_usage\":true}");
        int prompt = local.chat((ObjectNode) JSON.readTree(body)).tokens().length;
        HttpResponse<String> r = Http.post(port, "/v1/chat/completions", body);
        assertEquals(200, r.statusCode(), r.body());
        String[] events = r.body().split("\n\n", -1);
        assertEquals(8, events.length, "role, 4 tokens, usage, [DONE] and the empty end: " + r.body());
        Matcher m = Pattern.compile("^data: \\{\"id\":\"(chatcmpl-[0-9a-f]{32})\",\"object\":\"chat.completion.chunk\","
                        + "\"created\":(\\d+),\"model\":\"qwen\",\"choices\":")
                .matcher(events[0]);
        assertTrue(m.find(), events[0]);
        String head = "data: {\"id\":\"" + m.group(1) + "\",\"object\":\"chat.completion.chunk\",\"created\":"
                + m.group(2) + ",\"model\":\"qwen\",\"choices\":";
        assertEquals(
                head + "[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,"
                        + "\"finish_reason\":null}],\"prompt_token_ids\":null,\"prompt_text\":null}",
                events[0]);
        StringBuilder text = new StringBuilder();
        for (int i = 1; i <= 4; i++) {
            JsonNode chunk = JSON.readTree(events[i].substring("data: ".length()));
            String piece =
                    chunk.get("choices").get(0).get("delta").get("content").asText();
            text.append(piece);
            String tail = i == 4 ? "\"finish_reason\":\"length\",\"stop_reason\":null," : "\"finish_reason\":null,";
            assertEquals(
                    head + "[{\"index\":0,\"delta\":{\"content\":" + JSON.writeValueAsString(piece) + "},"
                            + "\"logprobs\":null," + tail + "\"token_ids\":null}]}",
                    events[i]);
        }
        assertEquals(
                head + "[],\"usage\":{\"prompt_tokens\":" + prompt + ",\"total_tokens\":" + (prompt + 4)
                        + ",\"completion_tokens\":4,\"prompt_tokens_details\":{\"cached_tokens\":0}}}",
                events[5]);
        assertEquals("data: [DONE]", events[6]);
        assertEquals("", events[7]);
        HttpResponse<String> whole = Http.post(
                port,
                "/v1/chat/completions",
                body.replace("\"stream\":true,\"stream_options\":{\"include_usage\":true}", "\"stream\":false"));
        assertEquals(
                text.toString(),
                JSON.readTree(whole.body())
                        .get("choices")
                        .get(0)
                        .get("message")
                        .get("content")
                        .asText(),
                "the streamed pieces add up to the non-streamed text");
    }

    @Test
    void theTokenizersRenderModeReadsTheStandinsRenderAnswers() throws Exception {
        try (PromptTokenizer render = Tokenizers.open("render:http://127.0.0.1:" + port)) {
            for (String user : new String[] {"What is 2 + 2?", "Übersetze: guten Morgen", "日本の首都は？"}) {
                ObjectNode chat = (ObjectNode) JSON.readTree(chatBody(user, ""));
                assertEquals(
                        JSON.valueToTree(local.chat(chat).tokens()),
                        JSON.valueToTree(render.chat(chat).tokens()));
                ObjectNode text = (ObjectNode) JSON.readTree("{\"prompt\":" + JSON.writeValueAsString(user) + "}");
                assertEquals(
                        JSON.valueToTree(local.completion(text).tokens()),
                        JSON.valueToTree(render.completion(text).tokens()));
            }
        }
    }

    @Test
    void textPromptsAndTokenizeUseTheTokenizer() throws Exception {
        String body = "{\"prompt\":\"The quick brown fox jumps over the lazy dog.\",\"max_tokens\":2}";
        int[] want = local.completion((ObjectNode) JSON.readTree(body)).tokens();
        HttpResponse<String> r = Http.post(port, "/v1/completions", body);
        assertEquals(200, r.statusCode(), r.body());
        assertEquals(
                want.length,
                JSON.readTree(r.body()).get("usage").get("prompt_tokens").asInt());
        HttpResponse<String> t = Http.post(
                port,
                "/tokenize",
                "{\"prompt\":\"The quick brown fox jumps over the lazy dog.\",\"return_token_strs\":true}");
        assertEquals(200, t.statusCode(), t.body());
        JsonNode tb = JSON.readTree(t.body());
        assertEquals(want.length, tb.get("count").asInt());
        assertEquals(JSON.valueToTree(want), tb.get("tokens"));
        assertEquals(want.length, tb.get("token_strs").size());
    }
}
