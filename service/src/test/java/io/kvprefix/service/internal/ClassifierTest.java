package io.kvprefix.service.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.service.ClassifiedRequest;
import io.kvprefix.service.ClassifiedRequest.Kind;
import io.kvprefix.service.ClassifiedRequest.Prompt;
import io.kvprefix.service.ServiceException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** What the router reads of a request before routing it, per API, and the bodies it refuses (400). */
class ClassifierTest {
    private static ClassifiedRequest c(String path, String body) throws ServiceException {
        return Classifier.classify("POST", path, body.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void completionsWithTokenIdsTextAndBatches() throws ServiceException {
        ClassifiedRequest r = c(
                "/v1/completions",
                "{\"model\":\"m\",\"prompt\":[1,2,3],\"stream\":true,"
                        + "\"stream_options\":{\"include_usage\":true},\"cache_salt\":\"s\",\"x_unknown\":{\"a\":1}}");
        assertEquals(Kind.COMPLETION, r.kind());
        assertEquals(Prompt.TOKENS, r.prompt());
        assertArrayEquals(new int[] {1, 2, 3}, r.tokens());
        assertEquals("m", r.model());
        assertTrue(r.stream());
        assertTrue(r.includeUsage());
        assertEquals("s", r.cacheSalt());
        assertEquals(3, r.estimatedTokens());
        assertEquals(Prompt.TEXT, c("/v1/completions", "{\"prompt\":\"hello\"}").prompt());
        assertEquals(
                Prompt.TEXT, c("/v1/completions", "{\"prompt\":[\"a\",\"b\"]}").prompt());
        assertArrayEquals(
                new int[] {4, 5},
                c("/v1/completions", "{\"prompt\":[[4,5],[6]]}").tokens(),
                "a batch routes by its first prompt");
        assertEquals(Prompt.NONE, c("/v1/completions", "{\"prompt\":[1,\"a\"]}").prompt());
        assertEquals(Prompt.NONE, c("/v1/completions", "{\"prompt\":[1.5]}").prompt());
        assertEquals(Prompt.NONE, c("/v1/completions", "{\"prompt\":[-1]}").prompt());
        assertEquals(Prompt.NONE, c("/v1/completions", "{\"prompt\":[]}").prompt());
        assertEquals(
                Prompt.NONE, c("/v1/completions", "{\"prompt\":[4294967296]}").prompt());
        assertNull(c("/v1/completions", "{\"prompt\":\"x\"}").model());
        assertFalse(c("/v1/completions", "{\"prompt\":\"x\"}").stream());
        assertNull(
                c("/v1/completions", "{\"prompt\":\"x\",\"cache_salt\":\"\"}").cacheSalt());
    }

    @Test
    void chatGenerateAndOtherPaths() throws ServiceException {
        ClassifiedRequest chat =
                c("/v1/chat/completions", "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
        assertEquals(Kind.CHAT, chat.kind());
        assertEquals(Prompt.CHAT, chat.prompt());
        assertNull(chat.tokens());
        assertTrue(chat.estimatedTokens() > 0);
        assertEquals(
                Prompt.NONE, c("/v1/chat/completions", "{\"messages\":\"no\"}").prompt());
        ClassifiedRequest vllm = c("/inference/v1/generate", "{\"token_ids\":[9,8],\"sampling_params\":{}}");
        assertEquals(Kind.GENERATE, vllm.kind());
        assertArrayEquals(new int[] {9, 8}, vllm.tokens());
        assertArrayEquals(new int[] {7}, c("/generate", "{\"input_ids\":[7]}").tokens());
        assertArrayEquals(
                new int[] {7}, c("/generate", "{\"input_ids\":[[7],[8]]}").tokens());
        assertEquals(Prompt.TEXT, c("/generate", "{\"text\":\"hi\"}").prompt());
        ClassifiedRequest other = c("/v1/embeddings", "{\"model\":\"e\",\"input\":\"x\"}");
        assertEquals(Kind.OTHER, other.kind());
        assertEquals("e", other.model(), "a pass-through's model is read when its body is a JSON object");
        ClassifiedRequest notJson =
                Classifier.classify("POST", "/tokenize", "not json".getBytes(StandardCharsets.UTF_8));
        assertEquals(Kind.OTHER, notJson.kind());
        assertNull(notJson.body(), "a pass-through body that is not JSON is forwarded as it is");
        ClassifiedRequest get = Classifier.classify("GET", "/v1/completions", new byte[0]);
        assertEquals(Prompt.NONE, get.prompt(), "only a POST of a known API needs a JSON body");
    }

    @Test
    void malformedBodiesAre400() {
        assertRefused("/v1/completions", "{bad", "invalid_json", "not valid JSON");
        assertRefused("/v1/completions", "{\"prompt\":\"x\"} trailing", "invalid_json", "not valid JSON");
        assertRefused("/v1/completions", "[1,2]", "invalid_json", "must be a JSON object");
        assertRefused("/v1/chat/completions", "", "invalid_json", "must be a JSON object");
        assertRefused(
                "/v1/chat/completions", "{\"model\":7,\"messages\":[]}", "invalid_type", "'model' must be a string");
        assertRefused("/v1/completions", "{\"prompt\":NaN}", "invalid_json", "not valid JSON");
    }

    private static void assertRefused(String path, String body, String code, String words) {
        ServiceException e = assertThrows(ServiceException.class, () -> c(path, body), body);
        assertEquals(400, e.status());
        assertEquals(code, e.code());
        assertTrue(e.getMessage().contains(words), e.getMessage());
        assertTrue(e.toJson().startsWith("{\"error\":{\"message\":"), e.toJson());
    }
}
