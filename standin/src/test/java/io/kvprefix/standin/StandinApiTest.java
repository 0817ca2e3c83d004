package io.kvprefix.standin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvprefix.standin.internal.OutputTokens;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * vLLM's OpenAI API as the stand-in serves it, through a real HTTP client: the bodies field for field
 * (written here by hand from vLLM's serving code and protocol models, docs/STANDIN.md section 2), SSE
 * framing byte for byte, the error bodies and status codes, and the other endpoints.
 */
class StandinApiTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long SEED = 5;
    private static Standin standin;
    private static int port;

    @BeforeAll
    static void start() {
        standin = Standin.start(StandinSettings.builder()
                .model("m1")
                .timeScale(0.02)
                .seed(SEED)
                .promptTokensDetails(true)
                .build());
        port = standin.engines().get(0).http();
    }

    @AfterAll
    static void stop() {
        standin.close();
    }

    static int[] prompt(long seed, int n) {
        SplittableRandom r = new SplittableRandom(seed);
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = r.nextInt(30_000);
        }
        return t;
    }

    static String ids(int[] t) {
        return Arrays.stream(t).mapToObj(Integer::toString).collect(Collectors.joining(",", "[", "]"));
    }

    /** The placeholder text of the output tokens (no tokenizer): " t<id>" per token. */
    static String[] pieces(int[] prompt, int n) {
        long s = OutputTokens.requestSeed(SEED, prompt);
        String[] out = new String[n];
        for (int i = 0; i < n; i++) {
            out[i] = " t" + OutputTokens.token(s, i, 32_000);
        }
        return out;
    }

    @Test
    void aNonStreamingCompletionIsVllmsCompletionResponse() throws Exception {
        int[] p = prompt(1, 40);
        HttpResponse<String> r = Http.post(
                port,
                "/v1/completions",
                "{\"model\":\"m1\",\"prompt\":" + ids(p) + ",\"max_tokens\":3,\"some_unknown_field\":{\"x\":1}}");
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("application/json", r.headers().firstValue("content-type").orElse(""));
        JsonNode b = JSON.readTree(r.body());
        String text = String.join("", pieces(p, 3));
        String expected = "{\"id\":\"" + b.get("id").asText() + "\",\"object\":\"text_completion\",\"created\":"
                + b.get("created").asLong() + ",\"model\":\"m1\",\"choices\":[{\"index\":0,\"text\":\"" + text
                + "\",\"logprobs\":null,\"finish_reason\":\"length\",\"stop_reason\":null,\"token_ids\":null,"
                + "\"prompt_logprobs\":null,\"prompt_token_ids\":null,\"routed_experts\":null}],\"service_tier\":null,"
                + "\"system_fingerprint\":null,\"usage\":{\"prompt_tokens\":40,\"total_tokens\":43,"
                + "\"completion_tokens\":3,\"prompt_tokens_details\":{\"cached_tokens\":0,\"created_cache_tokens\":null,"
                + "\"multimodal_tokens\":null},\"completion_tokens_details\":null},\"kv_transfer_params\":null,"
                + "\"ec_transfer_params\":null,\"metrics\":null}";
        assertEquals(expected, r.body());
        assertTrue(
                b.get("id").asText().matches("cmpl-[0-9a-f]{32}"), b.get("id").asText());
    }

    @Test
    void aStreamedCompletionIsFramedAsVllmFramesIt() throws Exception {
        int[] p = prompt(2, 33);
        HttpResponse<String> r = Http.CLIENT.send(
                Http.to(port, "/v1/completions")
                        .header("content-type", "application/json")
                        .header("X-Request-Id", "abc")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"prompt\":" + ids(p)
                                + ",\"max_tokens\":3,\"stream\":true,\"stream_options\":{\"include_usage\":true}}"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        assertEquals(
                "text/event-stream; charset=utf-8",
                r.headers().firstValue("content-type").orElse(""));
        Matcher m = Pattern.compile("\"created\":(\\d+)").matcher(r.body());
        assertTrue(m.find(), r.body());
        String head = "{\"id\":\"cmpl-abc\",\"object\":\"text_completion\",\"created\":" + m.group(1)
                + ",\"model\":\"m1\",\"choices\":";
        String[] t = pieces(p, 3);
        StringBuilder want = new StringBuilder();
        for (int i = 0; i < 3; i++) {
            want.append("data: ")
                    .append(head)
                    .append("[{\"index\":0,\"text\":\"")
                    .append(t[i])
                    .append("\",\"logprobs\":null,\"finish_reason\":")
                    .append(i == 2 ? "\"length\"" : "null")
                    .append(",\"stop_reason\":null,\"prompt_token_ids\":null,\"token_ids\":null}]}\n\n");
        }
        want.append("data: ")
                .append(head)
                .append("[],\"usage\":{\"prompt_tokens\":33,\"total_tokens\":36,")
                .append("\"completion_tokens\":3,\"prompt_tokens_details\":{\"cached_tokens\":0}}}\n\n");
        want.append("data: [DONE]\n\n");
        assertEquals(want.toString(), r.body());
    }

    @Test
    void aStreamedChatLikeCompletionWithContinuousUsageCarriesRunningCounts() throws Exception {
        int[] p = prompt(3, 20);
        HttpResponse<String> r = Http.post(
                port,
                "/v1/completions",
                "{\"prompt\":" + ids(p) + ",\"max_tokens\":2,"
                        + "\"stream\":true,\"stream_options\":{\"include_usage\":true,\"continuous_usage_stats\":true}}");
        String[] events = r.body().split("\n\n");
        assertEquals(4, events.length, r.body());
        assertTrue(
                events[0].endsWith("\"usage\":{\"prompt_tokens\":20,\"total_tokens\":21,\"completion_tokens\":1}}"),
                events[0]);
        assertTrue(
                events[1].endsWith("\"usage\":{\"prompt_tokens\":20,\"total_tokens\":22,\"completion_tokens\":2}}"),
                events[1]);
        assertEquals("data: [DONE]", events[3]);
    }

    @Test
    void theGenerateEndpointTakesAndGivesTokenIds() throws Exception {
        int[] p = prompt(4, 18);
        HttpResponse<String> r = Http.post(
                port,
                "/inference/v1/generate",
                "{\"token_ids\":" + ids(p) + ",\"sampling_params\":{\"max_tokens\":2},\"request_id\":\"g1\"}");
        assertEquals(200, r.statusCode(), r.body());
        long s = OutputTokens.requestSeed(SEED, p);
        String want = "{\"request_id\":\"generate-tokens-g1\",\"choices\":[{\"index\":0,\"logprobs\":null,"
                + "\"finish_reason\":\"length\",\"token_ids\":[" + OutputTokens.token(s, 0, 32_000) + ","
                + OutputTokens.token(s, 1, 32_000) + "],\"routed_experts\":null}],\"prompt_logprobs\":null,"
                + "\"kv_transfer_params\":null}";
        assertEquals(want, r.body());
        HttpResponse<String> st = Http.post(
                port,
                "/inference/v1/generate",
                "{\"token_ids\":" + ids(p)
                        + ",\"sampling_params\":{\"max_tokens\":1},\"request_id\":\"g2\",\"stream\":true}");
        assertEquals(
                "data: {\"request_id\":\"generate-tokens-g2\",\"choices\":[{\"index\":0,\"logprobs\":null,"
                        + "\"finish_reason\":\"length\",\"token_ids\":[" + OutputTokens.token(s, 0, 32_000)
                        + "]}],\"usage\":null}\n\ndata: [DONE]\n\n",
                st.body());
    }

    @Test
    void errorsAreVllmsBodiesAndStatusCodes() throws Exception {
        HttpResponse<String> unknown = Http.post(port, "/v1/completions", "{\"model\":\"gpt-9\",\"prompt\":[1,2,3]}");
        assertEquals(404, unknown.statusCode());
        assertEquals(
                "{\"error\":{\"message\":\"The model `gpt-9` does not exist.\",\"type\":\"NotFoundError\","
                        + "\"param\":\"model\",\"code\":404}}",
                unknown.body());
        HttpResponse<String> bad = Http.post(port, "/v1/completions", "{\"prompt\": [1, 2");
        assertEquals(400, bad.statusCode());
        JsonNode e = JSON.readTree(bad.body()).get("error");
        assertEquals("Bad Request", e.get("type").asText());
        assertEquals(400, e.get("code").asInt());
        assertTrue(e.get("message").asText().contains("json_invalid"), bad.body());
        HttpResponse<String> chat =
                Http.post(port, "/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
        assertEquals(400, chat.statusCode(), chat.body());
        assertEquals(
                "BadRequestError",
                JSON.readTree(chat.body()).get("error").get("type").asText());
        HttpResponse<String> text = Http.post(port, "/v1/completions", "{\"prompt\":\"hello\"}");
        assertEquals(400, text.statusCode(), text.body());
        HttpResponse<String> options =
                Http.post(port, "/v1/completions", "{\"prompt\":[1],\"stream_options\":{\"include_usage\":true}}");
        assertEquals(400, options.statusCode());
        assertTrue(options.body().contains("Stream options can only be defined when `stream=True`."), options.body());
        HttpResponse<String> tooLong = Http.post(port, "/v1/completions", "{\"prompt\":[1,2],\"max_tokens\":40000}");
        assertEquals(400, tooLong.statusCode());
        assertEquals(
                "max_tokens",
                JSON.readTree(tooLong.body()).get("error").get("param").asText());
        HttpResponse<String> noJson = Http.CLIENT.send(
                Http.to(port, "/v1/completions")
                        .header("content-type", "text/plain")
                        .POST(HttpRequest.BodyPublishers.ofString("{}"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(400, noJson.statusCode());
        assertTrue(noJson.body().contains("Only 'application/json' is allowed"), noJson.body());
        HttpResponse<String> nowhere = Http.get(port, "/v2/nothing");
        assertEquals(404, nowhere.statusCode());
        assertEquals("{\"detail\":\"Not Found\"}", nowhere.body());
        HttpResponse<String> method = Http.get(port, "/v1/completions");
        assertEquals(405, method.statusCode());
        assertEquals("{\"detail\":\"Method Not Allowed\"}", method.body());
    }

    @Test
    void healthModelsMetricsAndRender() throws Exception {
        HttpResponse<String> h = Http.get(port, "/health");
        assertEquals(200, h.statusCode());
        assertEquals("", h.body());
        JsonNode models = JSON.readTree(Http.get(port, "/v1/models").body());
        assertEquals("list", models.get("object").asText());
        JsonNode card = models.get("data").get(0);
        assertEquals("m1", card.get("id").asText());
        assertEquals("vllm", card.get("owned_by").asText());
        assertEquals(32_768, card.get("max_model_len").asInt());
        assertEquals(
                "model_permission", card.get("permission").get(0).get("object").asText());
        String metrics = Http.get(port, "/metrics").body();
        for (String name : new String[] {
            "vllm:num_requests_running{engine=\"0\",model_name=\"m1\"} ",
            "vllm:num_requests_waiting{engine=\"0\",model_name=\"m1\"} ",
            "vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m1\"} ",
            "# TYPE vllm:prefix_cache_queries_total counter",
            "vllm:prefix_cache_hits_total{engine=\"0\",model_name=\"m1\"} "
        }) {
            assertTrue(metrics.contains(name), name + " in " + metrics);
        }
        int[] p = prompt(6, 21);
        HttpResponse<String> render = Http.post(
                port, "/v1/completions/render", "{\"model\":\"m1\",\"prompt\":" + ids(p) + ",\"max_tokens\":7}");
        assertEquals(200, render.statusCode(), render.body());
        JsonNode g = JSON.readTree(render.body()).get(0);
        assertTrue(g.get("request_id").asText().matches("cmpl-[0-9a-f]{32}"));
        assertEquals(ids(p), g.get("token_ids").toString());
        assertEquals(7, g.get("sampling_params").get("max_tokens").asInt());
        assertEquals("m1", g.get("model").asText());
    }
}
