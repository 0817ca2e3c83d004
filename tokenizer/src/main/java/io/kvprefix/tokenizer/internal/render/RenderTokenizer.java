package io.kvprefix.tokenizer.internal.render;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvprefix.tokenizer.PromptTokenizer;
import io.kvprefix.tokenizer.TokenizeException;
import io.kvprefix.tokenizer.TokenizedPrompt;
import io.kvprefix.tokenizer.TokenizerOptions;
import io.kvprefix.tokenizer.internal.Prompts;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.List;

/**
 * The {@code render} mode: the engine's own renderer over HTTP/1.1 (docs/TOKENIZER.md section 4).
 * Chat bodies go to vLLM's {@code POST /v1/chat/completions/render}, whose reply is one
 * {@code GenerateRequest} ({@code {"token_ids": [...], "features": ..., "sampling_params": ...}});
 * completion bodies to {@code POST /v1/completions/render}, whose reply is a list of them, one per
 * prompt (vLLM {@code vllm/entrypoints/serve/render/api_router.py} @ {@code 1c608d64},
 * {@code vllm/entrypoints/serve/disagg/protocol.py} @ {@code 06408932}). Where the route is absent
 * (a 404 without vLLM's error body, FastAPI's {@code {"detail": "Not Found"}}), the same body goes to
 * {@code POST /tokenize} instead, whose reply is {@code {"count", "max_model_len", "tokens"}}
 * ({@code vllm/entrypoints/serve/tokenize/protocol.py} @ {@code 030ea52e}), and the choice is
 * remembered. One pooled JDK client, HTTP/1.1 only (vLLM serves no HTTP/2), a timeout per request.
 *
 * <p>Thread-safety: thread-safe.
 */
public final class RenderTokenizer implements PromptTokenizer {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> TOKENIZE_CHAT_FIELDS = List.of(
            "model",
            "messages",
            "add_generation_prompt",
            "continue_final_message",
            "add_special_tokens",
            "chat_template",
            "chat_template_kwargs",
            "tools",
            "mm_processor_kwargs");
    private static final List<String> TOKENIZE_COMPLETION_FIELDS = List.of("model", "prompt", "add_special_tokens");

    private final URI base;
    private final Duration timeout;
    private final HttpClient client;
    private volatile boolean chatRenderAbsent;
    private volatile boolean completionRenderAbsent;
    private volatile boolean closed;

    private RenderTokenizer(URI base, Duration timeout) {
        this.base = base;
        this.timeout = timeout;
        this.client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(timeout)
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
    }

    /** A renderer at {@code url} ({@code http://HOST:PORT}); an {@link IllegalArgumentException} says what is wrong. */
    public static RenderTokenizer open(String url, TokenizerOptions options) {
        URI u;
        try {
            u = new URI(url);
        } catch (java.net.URISyntaxException e) {
            throw new IllegalArgumentException("render URL '" + url + "' is not a URL: " + e.getMessage());
        }
        if (!("http".equals(u.getScheme()) || "https".equals(u.getScheme())) || u.getHost() == null) {
            throw new IllegalArgumentException("render URL '" + url + "' is not http://HOST:PORT");
        }
        String path = u.getRawPath() == null ? "" : u.getRawPath();
        if (!path.isEmpty() && !path.equals("/")) {
            throw new IllegalArgumentException("render URL '" + url + "' has a path; give http://HOST:PORT");
        }
        return new RenderTokenizer(URI.create(u.getScheme() + "://" + u.getRawAuthority()), options.renderTimeout());
    }

    @Override
    public String mode() {
        return "render";
    }

    /** The renderer's base URL. */
    public URI base() {
        return base;
    }

    @Override
    public TokenizedPrompt chat(ObjectNode body) throws TokenizeException {
        checkOpen(body);
        if (!chatRenderAbsent) {
            Reply r = post("/v1/chat/completions/render", body);
            if (!r.routeAbsent()) {
                return new TokenizedPrompt(ids(r, r.json().get("token_ids"), "token_ids"));
            }
            chatRenderAbsent = true;
        }
        return tokenize(subset(body, TOKENIZE_CHAT_FIELDS));
    }

    @Override
    public TokenizedPrompt completion(ObjectNode body) throws TokenizeException {
        checkOpen(body);
        Prompts.Prompt p = Prompts.completionPrompt(body);
        if (p.ids() != null) {
            return new TokenizedPrompt(p.ids());
        }
        if (!completionRenderAbsent) {
            Reply r = post("/v1/completions/render", body);
            if (!r.routeAbsent()) {
                JsonNode list = r.json();
                if (!list.isArray() || list.size() != 1) {
                    throw failed("/v1/completions/render answered " + abbreviate(list) + ", not a list of one prompt");
                }
                return new TokenizedPrompt(ids(r, list.get(0).get("token_ids"), "token_ids"));
            }
            completionRenderAbsent = true;
        }
        ObjectNode t = subset(body, TOKENIZE_COMPLETION_FIELDS);
        t.put("prompt", p.text());
        return tokenize(t);
    }

    private TokenizedPrompt tokenize(ObjectNode body) throws TokenizeException {
        Reply r = post("/tokenize", body);
        if (r.routeAbsent()) {
            throw failed(base + " serves neither the render routes nor /tokenize (404)");
        }
        return new TokenizedPrompt(ids(r, r.json().get("tokens"), "tokens"));
    }

    /** A reply: the parsed JSON of a 200, or {@code routeAbsent} for a 404 that is not vLLM's own error. */
    private record Reply(String path, JsonNode json, boolean routeAbsent) {}

    private Reply post(String path, ObjectNode body) throws TokenizeException {
        HttpRequest req = HttpRequest.newBuilder(base.resolve(path))
                .timeout(timeout)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(bytes(body)))
                .build();
        HttpResponse<byte[]> resp;
        try {
            resp = client.send(req, HttpResponse.BodyHandlers.ofByteArray());
        } catch (HttpTimeoutException e) {
            throw new TokenizeException(
                    TokenizeException.RENDER_TIMEOUT,
                    path + " on " + base + " did not answer within " + timeout.toMillis() + " ms",
                    e);
        } catch (ConnectException e) {
            throw new TokenizeException(TokenizeException.RENDER_FAILED, "cannot connect to " + base + ": " + e, e);
        } catch (IOException e) {
            throw new TokenizeException(TokenizeException.RENDER_FAILED, path + " on " + base + " failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TokenizeException(TokenizeException.RENDER_FAILED, "interrupted waiting for " + base, e);
        }
        JsonNode json = parse(path, resp.body());
        if (resp.statusCode() == 404 && (json == null || !json.has("error"))) {
            return new Reply(path, null, true);
        }
        if (resp.statusCode() != 200) {
            String message = path + " answered " + resp.statusCode() + ": " + errorMessage(json, resp.body());
            String reason = resp.statusCode() == 400 || resp.statusCode() == 422
                    ? TokenizeException.BAD_REQUEST
                    : TokenizeException.RENDER_FAILED;
            throw new TokenizeException(reason, message);
        }
        if (json == null) {
            throw failed(path + " answered 200 with a body that is not JSON");
        }
        return new Reply(path, json, false);
    }

    private static byte[] bytes(ObjectNode body) throws TokenizeException {
        try {
            return JSON.writeValueAsBytes(body);
        } catch (IOException e) {
            throw Prompts.bad("the body cannot be written as JSON: " + e.getMessage());
        }
    }

    private static JsonNode parse(String path, byte[] body) {
        try {
            return body.length == 0 ? null : JSON.readTree(body);
        } catch (IOException e) {
            return null;
        }
    }

    /** vLLM's {@code ErrorResponse}: {@code {"error": {"message", "type", "param", "code"}}}. */
    private static String errorMessage(JsonNode json, byte[] raw) {
        if (json != null && json.path("error").path("message").isTextual()) {
            return json.get("error").get("message").textValue();
        }
        String s = new String(raw, java.nio.charset.StandardCharsets.UTF_8);
        return s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }

    private static int[] ids(Reply r, JsonNode array, String field) throws TokenizeException {
        if (array == null || !array.isArray()) {
            throw failed(r.path() + " answered without a \"" + field + "\" array: " + abbreviate(r.json()));
        }
        int[] out = new int[array.size()];
        for (int i = 0; i < out.length; i++) {
            JsonNode t = array.get(i);
            if (!t.canConvertToInt() || !t.isIntegralNumber() || t.intValue() < 0) {
                throw failed(r.path() + " answered " + field + "[" + i + "] = " + t + ", not a token id");
            }
            out[i] = t.intValue();
        }
        return out;
    }

    private static ObjectNode subset(ObjectNode body, List<String> fields) {
        ObjectNode out = JSON.createObjectNode();
        for (String f : fields) {
            if (body.has(f)) {
                out.set(f, body.get(f));
            }
        }
        return out;
    }

    private static TokenizeException failed(String message) {
        return new TokenizeException(TokenizeException.RENDER_FAILED, message);
    }

    private static String abbreviate(JsonNode n) {
        String s = String.valueOf(n);
        return s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }

    private void checkOpen(ObjectNode body) throws TokenizeException {
        if (closed) {
            throw new TokenizeException(TokenizeException.CLOSED, "the renderer client for " + base + " is closed");
        }
        if (body == null) {
            throw Prompts.bad("no body");
        }
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            client.close();
        }
    }
}
