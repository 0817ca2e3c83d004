package io.kvprefix.tokenizer.internal.local;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvprefix.testing.TestScale;
import io.kvprefix.tokenizer.TokenizeException;
import io.kvprefix.tokenizer.TokenizerOptions;
import io.kvprefix.tokenizer.testing.Corpus;
import io.kvprefix.tokenizer.testing.TokenizerData;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Local mode on the real Qwen3 files (docs/TOKENIZER.md sections 3 and 6): the segment cache is switched off where its load-time proof
 * fails, stays within its bounds, and is exact under concurrent use; special tokens in a rendered
 * prompt stay single ids.
 */
class LocalModeTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Qwen3 with the default options, opened once: the tests that read it change nothing in it. */
    private static LocalTokenizer qwen3;

    @TempDir
    Path tmp;

    @BeforeAll
    static void openQwen3() throws Exception {
        qwen3 = LocalTokenizer.open(TokenizerData.model("qwen3"), TokenizerOptions.defaults());
    }

    @AfterAll
    static void closeQwen3() {
        if (qwen3 != null) {
            qwen3.close();
        }
    }

    @Test
    void specialTokensInTheRenderedPromptStayWhole() throws Exception {
        LocalTokenizer t = qwen3;
        ObjectNode body = JSON.createObjectNode();
        body.putArray("messages").addObject().put("role", "user").put("content", "hi");
        int[] ids = t.chat(body).tokens();
        // <|im_start|> is 151644 and <|im_end|> 151645 in Qwen3's tokenizer.json added_tokens
        assertEquals(151644, ids[0]);
        assertEquals(2, Arrays.stream(ids).filter(i -> i == 151644).count(), Arrays.toString(ids));
        assertEquals(1, Arrays.stream(ids).filter(i -> i == 151645).count(), Arrays.toString(ids));
        assertArrayEquals(t.encodeWhole(t.renderChat(body), false), ids);
    }

    @Test
    void theCacheIsOffWhereItsProofFails() throws Exception {
        Path src = TokenizerData.model("qwen3");
        ObjectNode tok =
                (ObjectNode) JSON.readTree(src.resolve("tokenizer.json").toFile());
        // a prepend-space pre-tokenizer that marks only the first piece: segments encoded alone all look first
        ArrayNode pre = ((ArrayNode) tok.get("pre_tokenizer").get("pretokenizers"));
        pre.insertObject(0)
                .put("type", "Metaspace")
                .put("replacement", "▁")
                .put("prepend_scheme", "first")
                .put("split", false);
        try (LocalTokenizer t = open(tok, src, "metaspace")) {
            assertNull(t.segmentCache());
            assertTrue(t.segmentCacheOff().startsWith("segment-by-segment ids differ"), t.segmentCacheOff());
            ObjectNode body = JSON.createObjectNode();
            body.putArray("messages").addObject().put("role", "user").put("content", "hi there");
            assertArrayEquals(
                    t.encodeWhole(t.renderChat(body), false), t.chat(body).tokens());
        }
        ObjectNode tok2 =
                (ObjectNode) JSON.readTree(src.resolve("tokenizer.json").toFile());
        ((ObjectNode) tok2.get("added_tokens").get(0)).put("lstrip", true);
        try (LocalTokenizer t = open(tok2, src, "lstrip")) {
            assertTrue(t.segmentCacheOff().contains("strips"), t.segmentCacheOff());
        }
        try (LocalTokenizer t =
                LocalTokenizer.open(src, TokenizerOptions.defaults().withSegmentCache(0, 0))) {
            assertEquals("turned off by the options", t.segmentCacheOff());
        }
    }

    private LocalTokenizer open(ObjectNode tokenizerJson, Path src, String name) throws IOException {
        Path dir = Files.createDirectories(tmp.resolve(name));
        JSON.writeValue(dir.resolve("tokenizer.json").toFile(), tokenizerJson);
        Files.copy(src.resolve("tokenizer_config.json"), dir.resolve("tokenizer_config.json"));
        return LocalTokenizer.open(dir, TokenizerOptions.defaults());
    }

    @Test
    void theCacheStaysInItsBoundsAndIsExactUnderConcurrency() throws Exception {
        try (LocalTokenizer t = LocalTokenizer.open(
                TokenizerData.model("qwen3"), TokenizerOptions.defaults().withSegmentCache(64, 256 << 10))) {
            Corpus c = new Corpus(77, List.of("<|im_start|>", "<|im_end|>"));
            // 16 shards of 4 entries: a hundred chats overflow them many times over; -Plong runs 300
            List<Corpus.Request> chats = c.chats(TestScale.iterations(100, 300), false, true);
            ExecutorService pool = Executors.newFixedThreadPool(4);
            try {
                List<Future<String>> results = new ArrayList<>();
                for (int w = 0; w < 4; w++) {
                    results.add(pool.submit(() -> {
                        for (Corpus.Request r : chats) {
                            int[] ids = t.chat(r.body()).tokens();
                            if (!Arrays.equals(ids, t.encodeWhole(t.renderChat(r.body()), false))) {
                                return "differs on " + r.body();
                            }
                        }
                        return null;
                    }));
                }
                for (Future<String> f : results) {
                    assertNull(f.get());
                }
            } finally {
                pool.shutdownNow();
            }
            SegmentCache cache = t.segmentCache();
            assertNotNull(cache);
            assertTrue(cache.entries() <= 64, "entries " + cache.entries());
            assertTrue(cache.bytes() <= 256 << 10, "bytes " + cache.bytes());
            assertTrue(cache.hits() > 0 && cache.misses() > 64, cache.hits() + " hits, " + cache.misses() + " misses");
        }
    }

    @Test
    void badBodiesHaveReasons() throws Exception {
        LocalTokenizer t = qwen3;
        String[] bad = {
            "{}",
            "{\"messages\":[]}",
            "{\"messages\":[{\"content\":\"x\"}]}",
            "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":{\"url\":\"x\"}}]}]}",
            "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"add_generation_prompt\":\"yes\"}",
            "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"chat_template_kwargs\":{\"tokenize\":true}}",
            "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"continue_final_message\":true}",
            "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"tools\":[{\"type\":\"function\"}]}"
        };
        for (String b : bad) {
            TokenizeException e = assertThrows(TokenizeException.class, () -> t.chat((ObjectNode) JSON.readTree(b)), b);
            assertEquals("bad_request", e.reason(), b + ": " + e.getMessage());
        }
        ObjectNode cont = (ObjectNode) JSON.readTree("{\"messages\":[{\"role\":\"user\",\"content\":\"x\"},"
                + "{\"role\":\"assistant\",\"content\":\"The answer is  \"}],\"continue_final_message\":true,"
                + "\"add_generation_prompt\":false}");
        // HuggingFace keeps trailing spaces the template kept, and cuts everything after them
        assertTrue(t.renderChat(cont).endsWith("</think>\n\nThe answer is  "), t.renderChat(cont));
    }
}
