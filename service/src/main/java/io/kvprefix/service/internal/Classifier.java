package io.kvprefix.service.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvprefix.service.ClassifiedRequest;
import io.kvprefix.service.ClassifiedRequest.Kind;
import io.kvprefix.service.ClassifiedRequest.Prompt;
import io.kvprefix.service.ServiceException;
import java.io.IOException;

/**
 * Reads what routing needs from a request (docs/SERVE.md section 1): the API by its path, and from
 * a JSON body the model, the stream flags, the cache salt and the prompt's form. The body is parsed
 * once, strictly (trailing data is malformed), with no limit below the router's own body limit.
 *
 * <p>Prompts by API: {@code /v1/completions} {@code prompt} is a string (text), an array of token ids,
 * an array of strings (text, the first routes) or an array of token-id arrays (the first routes);
 * {@code /v1/chat/completions} {@code messages} is chat; vLLM's {@code /inference/v1/generate} carries
 * {@code token_ids} (its request model in {@code vllm/entrypoints/serve/disagg/protocol.py} @
 * {@code 06408932946d17ad6453126aca82ea96c4509605}); SGLang's {@code /generate} {@code input_ids} (one
 * array or a batch) or {@code text}. Anything else routes by load.
 *
 * <p>Thread-safety: thread-safe (the mapper is immutable once built).
 */
public final class Classifier {
    /** The mapper every part of the service parses JSON with. */
    public static final JsonMapper JSON = JsonMapper.builder(JsonFactory.builder()
                    .streamReadConstraints(StreamReadConstraints.builder()
                            .maxStringLength(Integer.MAX_VALUE)
                            .maxNumberLength(1000)
                            .build())
                    .build())
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    private Classifier() {}

    /** The API of {@code path}. */
    public static Kind kind(String path) {
        return switch (path) {
            case "/v1/chat/completions" -> Kind.CHAT;
            case "/v1/completions" -> Kind.COMPLETION;
            case "/inference/v1/generate", "/generate" -> Kind.GENERATE;
            default -> Kind.OTHER;
        };
    }

    /**
     * Classifies a request. A known API's POST needs a JSON object body; another path's body is parsed
     * only if it is a JSON object (for its model), and otherwise forwarded as it is.
     *
     * @throws ServiceException 400 {@code invalid_json} for a known API whose body is not a JSON object,
     *     or {@code invalid_type} for a {@code model} that is not a string
     */
    public static ClassifiedRequest classify(String method, String path, byte[] body) throws ServiceException {
        Kind kind = kind(path);
        boolean known = kind != Kind.OTHER && method.equals("POST");
        ObjectNode node = null;
        if (known || looksLikeJsonObject(body)) {
            node = parse(body, known);
        }
        if (node == null) {
            return new ClassifiedRequest(
                    method, path, kind, Prompt.NONE, null, false, false, null, null, null, body.length);
        }
        String model = text(node, "model");
        boolean stream = node.path("stream").asBoolean(false);
        boolean usage = node.path("stream_options").path("include_usage").asBoolean(false);
        JsonNode salt = node.get("cache_salt");
        String cacheSalt = salt != null && salt.isTextual() && !salt.asText().isEmpty() ? salt.asText() : null;
        int[] tokens = null;
        Prompt prompt = Prompt.NONE;
        if (known) {
            switch (kind) {
                case CHAT -> prompt = node.path("messages").isArray() ? Prompt.CHAT : Prompt.NONE;
                case COMPLETION -> {
                    JsonNode p = node.get("prompt");
                    tokens = tokenIds(p);
                    prompt = tokens != null ? Prompt.TOKENS : isText(p) ? Prompt.TEXT : Prompt.NONE;
                }
                case GENERATE -> {
                    tokens = tokenIds(node.has("token_ids") ? node.get("token_ids") : node.get("input_ids"));
                    prompt = tokens != null ? Prompt.TOKENS : isText(node.get("text")) ? Prompt.TEXT : Prompt.NONE;
                }
                default -> {}
            }
        }
        return new ClassifiedRequest(
                method, path, kind, prompt, model, stream, usage, tokens, cacheSalt, node, body.length);
    }

    private static ObjectNode parse(byte[] body, boolean required) throws ServiceException {
        JsonNode n;
        try {
            n = JSON.readTree(body);
        } catch (JsonProcessingException e) {
            if (!required) {
                return null;
            }
            throw ServiceException.badRequest(
                    "invalid_json", null, "The request body is not valid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw ServiceException.badRequest("invalid_json", null, "The request body cannot be read: " + e);
        }
        if (n instanceof ObjectNode o) {
            JsonNode m = o.get("model");
            if (m != null && !m.isNull() && !m.isTextual()) {
                throw ServiceException.badRequest("invalid_type", "model", "'model' must be a string");
            }
            return o;
        }
        if (!required) {
            return null;
        }
        throw ServiceException.badRequest(
                "invalid_json",
                null,
                "The request body must be a JSON object, not " + (n == null ? "nothing" : n.getNodeType()));
    }

    private static boolean looksLikeJsonObject(byte[] body) {
        for (byte b : body) {
            if (b != ' ' && b != '\t' && b != '\r' && b != '\n') {
                return b == '{';
            }
        }
        return false;
    }

    private static String text(ObjectNode node, String field) {
        JsonNode v = node.get(field);
        return v != null && v.isTextual() ? v.asText() : null;
    }

    private static boolean isText(JsonNode p) {
        if (p == null) {
            return false;
        }
        if (p.isTextual()) {
            return true;
        }
        return p.isArray() && !p.isEmpty() && p.get(0).isTextual();
    }

    /** The token ids of {@code p}: an array of ints, or the first of an array of such arrays; null otherwise. */
    static int[] tokenIds(JsonNode p) {
        if (p == null || !p.isArray() || p.isEmpty()) {
            return null;
        }
        JsonNode arr = p.get(0).isArray() ? p.get(0) : p;
        if (arr.isEmpty()) {
            return null;
        }
        int[] out = new int[arr.size()];
        for (int i = 0; i < out.length; i++) {
            JsonNode t = arr.get(i);
            if (!t.isIntegralNumber() || !t.canConvertToInt() || t.intValue() < 0) {
                return null;
            }
            out[i] = t.intValue();
        }
        return out;
    }
}
