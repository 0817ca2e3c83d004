package io.kvprefix.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.standin.testing.StandinProcess;
import io.kvprefix.tokenizer.testing.TokenizerData;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The {@code kvprefix.*} properties at work: a model's tokenizer given as {@code kvprefix.tokenizers}
 * (Qwen3's files in {@code local} mode, which {@code ./kvprefix setup} fetches) routes chat by cache, on
 * Reactor's bounded-elastic scheduler, so that a second conversation sharing the first's system prompt
 * lands on the engine that served the first and that engine reports the cached tokens the router
 * predicted; a bad engine or tokenizer property stops the application's start with a line naming it.
 */
class ChatAndPropertiesTest {
    private static final String SYSTEM =
            "You are a careful assistant for a team that runs large language models in production. ".repeat(6);

    private static String chat(String user) {
        return "{\"model\":\"" + Gateway.MODEL + "\",\"max_tokens\":2,\"messages\":[{\"role\":\"system\",\"content\":\""
                + SYSTEM + "\"},{\"role\":\"user\",\"content\":\"" + user + "\"}]}";
    }

    @Test
    void aModelsTokenizerRoutesChatByCache() throws Exception {
        Path qwen3 = TokenizerData.model("qwen3");
        try (StandinProcess engines = StandinProcess.start(
                "--engines",
                "2",
                "--time-scale",
                "0.05",
                "--enable-prompt-tokens-details",
                "--tokenizer",
                qwen3.toString())) {
            Map<String, Object> p = Gateway.routes(engines.engines());
            p.put("kvprefix.tokenizers." + Gateway.MODEL, "local:" + qwen3);
            try (Gateway g = Gateway.start(p)) {
                engines.awaitLive(g.service::scrape); // the first request's events must reach the index
                HttpResponse<String> first = g.post("/v1/chat/completions", chat("What is a KV cache?"));
                assertEquals(200, first.statusCode(), first.body());
                assertEquals(
                        "cache", first.headers().firstValue("x-kvprefix-route").orElseThrow(), first.body());
                String w = first.headers().firstValue("x-kvprefix-worker").orElseThrow();
                Gateway.await(
                        "the index has the first conversation's blocks",
                        30,
                        () -> g.depth(chat("What is a KV cache?"), w) >= 4);
                HttpResponse<String> second = g.post("/v1/chat/completions", chat("And what is prefix caching?"));
                assertEquals(w, second.headers().firstValue("x-kvprefix-worker").orElseThrow(), second.body());
                int blocks = Integer.parseInt(
                        second.headers().firstValue("x-kvprefix-cached-blocks").orElseThrow());
                assertTrue(blocks >= 4, "the shared system prompt: " + blocks);
                int cached = Gateway.json(second.body())
                        .get("usage")
                        .get("prompt_tokens_details")
                        .get("cached_tokens")
                        .asInt();
                assertEquals(blocks * 16, cached, "the engine found what the router predicted: " + second.body());
            }
        }
    }

    @Test
    void aBadPropertyStopsTheStartNamingIt() {
        Map<String, Object> p = new LinkedHashMap<>(Gateway.routes(List.of()));
        p.put("kvprefix.engines[0]", "7=ftp://127.0.0.1:1");
        assertTrue(startFailure(p).startsWith("kvprefix.engines[0]: "), startFailure(p));
        p.put("kvprefix.engines[0]", "7=http://127.0.0.1:1");
        p.put("kvprefix.tokenizers.m", "nonsense:x");
        assertTrue(startFailure(p).startsWith("kvprefix.tokenizers.m: "), startFailure(p));
    }

    private static String startFailure(Map<String, Object> p) {
        RuntimeException e =
                assertThrows(RuntimeException.class, () -> Gateway.start(p).close());
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof IllegalArgumentException) {
                return c.getMessage(); // the starter's, around the service's own
            }
        }
        throw new AssertionError("no IllegalArgumentException in " + e, e);
    }
}
