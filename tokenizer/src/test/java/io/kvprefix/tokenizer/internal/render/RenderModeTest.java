package io.kvprefix.tokenizer.internal.render;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.kvprefix.tokenizer.PromptTokenizer;
import io.kvprefix.tokenizer.TokenizeException;
import io.kvprefix.tokenizer.TokenizerOptions;
import io.kvprefix.tokenizer.Tokenizers;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The {@code render} mode against a small real HTTP server on 127.0.0.1 that answers in vLLM's exact
 * reply shapes (docs/TOKENIZER.md section 4): {@code GenerateRequest} from
 * {@code /v1/chat/completions/render}, a list of them from {@code /v1/completions/render}, and
 * {@code TokenizeResponse} from {@code /tokenize} (vLLM {@code vllm/entrypoints/serve/render/api_router.py}
 * @ {@code 1c608d64}, {@code disagg/protocol.py} @ {@code 06408932}, {@code tokenize/protocol.py} @
 * {@code 030ea52e}; errors as {@code ErrorResponse}, an absent route as FastAPI's 404). The ids the
 * stand-in answers are the UTF-8 bytes of the body's text, so every answer depends on the request.
 */
class RenderModeTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private HttpServer server;
    private final List<String> paths = new CopyOnWriteArrayList<>();
    private final List<JsonNode> bodies = new CopyOnWriteArrayList<>();
    private final Set<Integer> clientPorts = ConcurrentHashMap.newKeySet();
    private final CountDownLatch release = new CountDownLatch(1);
    private volatile boolean renderRoutes = true;
    private volatile int forcedStatus;

    private String start() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(Executors.newFixedThreadPool(4));
        server.createContext("/", this::handle);
        server.start();
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    @AfterEach
    void stop() {
        release.countDown();
        if (server != null) {
            server.stop(0);
        }
    }

    private void handle(HttpExchange x) throws IOException {
        JsonNode body = JSON.readTree(x.getRequestBody().readAllBytes());
        String path = x.getRequestURI().getPath();
        paths.add(path);
        bodies.add(body);
        clientPorts.add(x.getRemoteAddress().getPort());
        if (body.path("messages").path(0).path("content").asText().equals("hang")) {
            await();
        }
        if (forcedStatus != 0) {
            String err = "{\"error\":{\"message\":\"The model `nope` does not exist.\",\"type\":\"NotFoundError\","
                    + "\"param\":\"model\",\"code\":" + forcedStatus + "}}";
            reply(x, forcedStatus, err);
        } else if (path.equals("/v1/chat/completions/render") && renderRoutes) {
            reply(
                    x,
                    200,
                    generateRequest(bytesOf(body.path("messages").toString())).toString());
        } else if (path.equals("/v1/completions/render") && renderRoutes) {
            ArrayNode list = JSON.createArrayNode()
                    .add(generateRequest(bytesOf(body.path("prompt").asText())));
            reply(x, 200, list.toString());
        } else if (path.equals("/tokenize")) {
            String text = body.has("messages")
                    ? body.get("messages").toString()
                    : body.path("prompt").asText();
            ObjectNode r =
                    JSON.createObjectNode().put("count", bytesOf(text).size()).put("max_model_len", 32768);
            r.set("tokens", bytesOf(text));
            r.putNull("token_strs");
            reply(x, 200, r.toString());
        } else {
            reply(x, 404, "{\"detail\":\"Not Found\"}");
        }
    }

    private void await() {
        try {
            release.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static ArrayNode bytesOf(String s) {
        ArrayNode a = JSON.createArrayNode();
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            a.add(b & 0xff);
        }
        return a;
    }

    /** vLLM's GenerateRequest as the render routes dump it. */
    private static ObjectNode generateRequest(ArrayNode ids) {
        ObjectNode g = JSON.createObjectNode().put("request_id", "r-1");
        g.set("token_ids", ids);
        g.putNull("features");
        g.putObject("sampling_params").put("max_tokens", 16).put("temperature", 1.0);
        g.put("model", "m").put("stream", false).putNull("stream_options");
        g.putNull("cache_salt").put("priority", 0).putNull("kv_transfer_params");
        return g;
    }

    private static void reply(HttpExchange x, int status, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        x.getResponseHeaders().add("Content-Type", "application/json");
        x.sendResponseHeaders(status, b.length);
        x.getResponseBody().write(b);
        x.close();
    }

    private static int[] utf8(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        int[] out = new int[b.length];
        for (int i = 0; i < b.length; i++) {
            out[i] = b[i] & 0xff;
        }
        return out;
    }

    private static ObjectNode chat(String content) {
        ObjectNode b = JSON.createObjectNode().put("model", "m");
        b.putArray("messages").addObject().put("role", "user").put("content", content);
        return b;
    }

    @Test
    void rendersChatAndCompletionsThroughOnePooledConnection() throws Exception {
        try (PromptTokenizer t = Tokenizers.open("render:" + start())) {
            assertEquals("render", t.mode());
            for (int i = 0; i < 20; i++) {
                ObjectNode c = chat("héllo " + i);
                assertArrayEquals(utf8(c.get("messages").toString()), t.chat(c).tokens());
                ObjectNode p = JSON.createObjectNode().put("model", "m").put("prompt", "pröмpt " + i);
                assertArrayEquals(utf8("pröмpt " + i), t.completion(p).tokens());
            }
            assertEquals(List.of("/v1/chat/completions/render", "/v1/completions/render"), paths.subList(0, 2));
            assertEquals(chat("héllo 0"), bodies.get(0), "the chat body is forwarded as it is");
            assertTrue(clientPorts.size() <= 2, "kept-alive connections, not one per request: " + clientPorts);
            ObjectNode ids = (ObjectNode) JSON.readTree("{\"prompt\":[7,8,9]}");
            int before = paths.size();
            assertArrayEquals(new int[] {7, 8, 9}, t.completion(ids).tokens());
            assertEquals(before, paths.size(), "a token-id prompt needs no renderer");
        }
    }

    @Test
    void fallsBackToTokenizeWhereRenderIsAbsent() throws Exception {
        renderRoutes = false;
        try (PromptTokenizer t = Tokenizers.open("render:" + start())) {
            ObjectNode c = chat("fallback");
            c.put("add_generation_prompt", true).put("temperature", 0.5);
            assertArrayEquals(utf8(c.get("messages").toString()), t.chat(c).tokens());
            assertArrayEquals(utf8(c.get("messages").toString()), t.chat(c).tokens());
            assertEquals(List.of("/v1/chat/completions/render", "/tokenize", "/tokenize"), paths);
            JsonNode forwarded = bodies.get(1);
            assertTrue(forwarded.has("add_generation_prompt") && !forwarded.has("temperature"), forwarded.toString());
            ObjectNode p = JSON.createObjectNode().put("prompt", "plain").put("add_special_tokens", false);
            assertArrayEquals(utf8("plain"), t.completion(p).tokens());
            assertEquals("/tokenize", paths.get(paths.size() - 1));
            assertEquals(p, bodies.get(bodies.size() - 1));
        }
    }

    @Test
    void failuresHaveReasons() throws Exception {
        String url = start();
        TokenizerOptions quick = TokenizerOptions.defaults().withRenderTimeout(Duration.ofMillis(300));
        try (PromptTokenizer t = Tokenizers.open("render:" + url, quick)) {
            assertEquals(
                    "render_timeout",
                    assertThrows(TokenizeException.class, () -> t.chat(chat("hang")))
                            .reason());
            forcedStatus = 404; // vLLM's own 404 (an unknown model) is an error, not an absent route
            TokenizeException nf = assertThrows(TokenizeException.class, () -> t.chat(chat("x")));
            assertEquals("render_failed", nf.reason());
            assertTrue(nf.getMessage().contains("does not exist"), nf.getMessage());
            forcedStatus = 400;
            assertEquals(
                    "bad_request",
                    assertThrows(TokenizeException.class, () -> t.chat(chat("x")))
                            .reason());
            forcedStatus = 500;
            assertEquals(
                    "render_failed",
                    assertThrows(TokenizeException.class, () -> t.chat(chat("x")))
                            .reason());
            assertFalse(paths.contains("/tokenize"), "no fallback on errors: " + paths);
        }
        int closedPort;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            closedPort = s.getLocalPort();
        }
        try (PromptTokenizer t = Tokenizers.open("render:http://127.0.0.1:" + closedPort, quick)) {
            TokenizeException e = assertThrows(TokenizeException.class, () -> t.chat(chat("x")));
            assertEquals("render_failed", e.reason());
        }
        PromptTokenizer closed = Tokenizers.open("render:" + url);
        closed.close();
        assertEquals(
                "closed",
                assertThrows(TokenizeException.class, () -> closed.chat(chat("x")))
                        .reason());
    }

    @Test
    void badUrlsAreRefusedAtOpen() {
        for (String u :
                new String[] {"render:localhost:8000", "render:ftp://h:1", "render:http://h:1/v1", "render:http://"}) {
            assertThrows(IllegalArgumentException.class, () -> Tokenizers.open(u), u);
        }
    }
}
