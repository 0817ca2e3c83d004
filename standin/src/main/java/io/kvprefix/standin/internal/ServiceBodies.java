package io.kvprefix.standin.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.UUID;

/**
 * The bodies of vLLM's other endpoints: {@code GET /v1/models} ({@code ModelList}), {@code POST
 * /tokenize} ({@code TokenizeResponse}) and the render endpoints ({@code GenerateRequest}, which the
 * router can send on to {@code /inference/v1/generate}). The package comment names the files.
 *
 * <p>Thread-safety: stateless.
 */
public final class ServiceBodies {
    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    private ServiceBodies() {}

    /** vLLM's {@code random_uuid()}: a UUID4 as 32 hex digits. */
    public static String randomUuid() {
        return UUID.randomUUID().toString().replace("-", "");
    }

    /** {@code ModelList} with the one served model ({@code show_available_models}). */
    public static ObjectNode models(String name, String root, int maxModelLen, long created) {
        ObjectNode o = F.objectNode();
        o.put("object", "list");
        ObjectNode card = o.putArray("data").addObject();
        card.put("id", name);
        card.put("object", "model");
        card.put("created", created);
        card.put("owned_by", "vllm");
        card.put("root", root);
        card.putNull("parent");
        card.put("max_model_len", maxModelLen);
        ObjectNode perm = card.putArray("permission").addObject();
        perm.put("id", "modelperm-" + randomUuid());
        perm.put("object", "model_permission");
        perm.put("created", created);
        perm.put("allow_create_engine", false);
        perm.put("allow_sampling", true);
        perm.put("allow_logprobs", true);
        perm.put("allow_search_indices", false);
        perm.put("allow_view", true);
        perm.put("allow_fine_tuning", false);
        perm.put("organization", "*");
        perm.putNull("group");
        perm.put("is_blocking", false);
        return o;
    }

    /** {@code TokenizeResponse}: the count, the model's context length, the tokens, the token strings if asked. */
    public static ObjectNode tokenize(int[] tokens, int maxModelLen, String[] strings) {
        ObjectNode o = F.objectNode();
        o.put("count", tokens.length);
        o.put("max_model_len", maxModelLen);
        ArrayNode t = o.putArray("tokens");
        for (int x : tokens) {
            t.add(x);
        }
        if (strings == null) {
            o.putNull("token_strs");
        } else {
            ArrayNode s = o.putArray("token_strs");
            for (String x : strings) {
                s.add(x);
            }
        }
        return o;
    }

    /**
     * One {@code GenerateRequest} of a render answer ({@code ServingRender}): the request id ({@code cmpl-}
     * or {@code chatcmpl-} and a UUID), the tokens, the sampling parameters, and the fields copied from the
     * request. Of vLLM's {@code SamplingParams} only {@code n} and {@code max_tokens} are written (the
     * stand-in models no sampling).
     */
    public static ObjectNode render(String idPrefix, int[] tokens, int maxTokens, ObjectNode request, boolean stream) {
        ObjectNode o = F.objectNode();
        o.put("request_id", idPrefix + randomUuid());
        ArrayNode t = o.putArray("token_ids");
        for (int x : tokens) {
            t.add(x);
        }
        o.putNull("features");
        ObjectNode sp = o.putObject("sampling_params");
        sp.put("n", 1);
        sp.put("max_tokens", maxTokens);
        copy(o, request, "model");
        o.put("stream", stream);
        if (stream) {
            copy(o, request, "stream_options");
        } else {
            o.putNull("stream_options");
        }
        copy(o, request, "cache_salt");
        JsonNode priority = request.get("priority");
        o.put("priority", priority != null && priority.canConvertToInt() ? priority.intValue() : 0);
        o.putNull("kv_transfer_params");
        return o;
    }

    private static void copy(ObjectNode to, ObjectNode from, String field) {
        JsonNode v = from.get(field);
        if (v == null) {
            to.putNull(field);
        } else {
            to.set(field, v.deepCopy());
        }
    }
}
