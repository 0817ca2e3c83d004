package io.kvprefix.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

/** The {@code tokens} mode, the spec parser and the API's value types (docs/TOKENIZER.md sections 1, 2 and 4). */
class TokenIdsModeTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static ObjectNode body(String json) throws Exception {
        return (ObjectNode) JSON.readTree(json);
    }

    @Test
    void tokenIdPromptsComeBackUnchanged() throws Exception {
        try (PromptTokenizer t = Tokenizers.open("tokens")) {
            assertEquals("tokens", t.mode());
            assertArrayEquals(
                    new int[] {1, 0, 151643, 7},
                    t.completion(body("{\"prompt\":[1,0,151643,7]}")).tokens());
            assertArrayEquals(
                    new int[] {5, 6}, t.completion(body("{\"prompt\":[[5,6]]}")).tokens());
        }
    }

    @Test
    void textIsRefusedAsNeedingTokenIds() throws Exception {
        try (PromptTokenizer t = Tokenizers.open("tokens")) {
            TokenizeException chat = assertThrows(
                    TokenizeException.class,
                    () -> t.chat(body("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")));
            assertEquals("needs_token_ids", chat.reason());
            TokenizeException text =
                    assertThrows(TokenizeException.class, () -> t.completion(body("{\"prompt\":\"hi\"}")));
            assertEquals("needs_token_ids", text.reason());
            TokenizeException one =
                    assertThrows(TokenizeException.class, () -> t.completion(body("{\"prompt\":[\"hi\"]}")));
            assertEquals("needs_token_ids", one.reason());
        }
    }

    @Test
    void malformedPromptsAreBadRequests() throws Exception {
        try (PromptTokenizer t = Tokenizers.open("tokens")) {
            for (String b : new String[] {
                "{}",
                "{\"prompt\":null}",
                "{\"prompt\":7}",
                "{\"prompt\":[]}",
                "{\"prompt\":[1,-2]}",
                "{\"prompt\":[1,2.5]}",
                "{\"prompt\":[1,\"x\"]}",
                "{\"prompt\":[1,4294967296]}",
                "{\"prompt\":[\"a\",\"b\"]}",
                "{\"prompt\":[[1],[2]]}"
            }) {
                TokenizeException e = assertThrows(TokenizeException.class, () -> t.completion(body(b)), b);
                assertEquals("bad_request", e.reason(), b + ": " + e.getMessage());
            }
        }
    }

    @Test
    void aBadSpecNamesTheForms() {
        for (String spec : new String[] {"", "local", "local:", "render:", "tokens:x", "hf:Qwen/Qwen3-8B"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Tokenizers.open(spec));
            assertTrue(e.getMessage().contains("local:DIR, render:http://HOST:PORT, tokens"), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> Tokenizers.open(null));
    }

    @Test
    void reasonsAreSnakeCaseAndPromptsCompareByContent() {
        assertEquals("render_timeout", new TokenizeException("render_timeout", "slow").reason());
        assertThrows(IllegalArgumentException.class, () -> new TokenizeException("RenderTimeout", "x"));
        assertThrows(IllegalArgumentException.class, () -> new TokenizeException("render-timeout", "x"));
        assertThrows(IllegalArgumentException.class, () -> new TokenizeException(null, "x"));
        assertEquals(new TokenizedPrompt(new int[] {1, 2}), new TokenizedPrompt(new int[] {1, 2}));
        assertEquals(
                new TokenizedPrompt(new int[] {1, 2}).hashCode(), new TokenizedPrompt(new int[] {1, 2}).hashCode());
        assertNotEquals(new TokenizedPrompt(new int[] {1, 2}), new TokenizedPrompt(new int[] {2, 1}));
        assertEquals(2, new TokenizedPrompt(new int[] {1, 2}).length());
        assertThrows(NullPointerException.class, () -> new TokenizedPrompt(null));
    }
}
