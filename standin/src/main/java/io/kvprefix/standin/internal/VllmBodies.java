package io.kvprefix.standin.internal;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The JSON bodies vLLM answers with, field for field and in vLLM's order (pydantic dumps a model's
 * fields in declaration order; the package comment names the files and commits). Three dump styles
 * matter: a non-streaming body is {@code model_dump()} (every field, nulls included); a streamed
 * chunk is {@code model_dump_json(exclude_unset=True)} (only the fields the serving code set, nulls it
 * set included); the final usage chunk adds {@code exclude_none=True}.
 *
 * <p>Thread-safety: stateless.
 */
public final class VllmBodies {
    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    private VllmBodies() {}

    /** What every body of one request shares. */
    public record Head(String id, long created, String model) {}

    /** Token counts for a usage block; {@code cached} is negative when not reported. */
    public record Usage(int prompt, int completion, int cached) {}

    private static ObjectNode head(Head h, String object) {
        ObjectNode o = F.objectNode();
        o.put("id", h.id());
        o.put("object", object);
        o.put("created", h.created());
        o.put("model", h.model());
        return o;
    }

    /** {@code UsageInfo} as the serving code builds it: the three counts, in declaration order. */
    private static ObjectNode counts(Usage u) {
        ObjectNode o = F.objectNode();
        o.put("prompt_tokens", u.prompt());
        o.put("total_tokens", u.prompt() + u.completion());
        o.put("completion_tokens", u.completion());
        return o;
    }

    /** {@code UsageInfo.model_dump()}: every field. */
    private static ObjectNode fullUsage(Usage u) {
        ObjectNode o = counts(u);
        if (u.cached() < 0) {
            o.putNull("prompt_tokens_details");
        } else {
            ObjectNode d = o.putObject("prompt_tokens_details");
            d.put("cached_tokens", u.cached());
            d.putNull("created_cache_tokens");
            d.putNull("multimodal_tokens");
        }
        o.putNull("completion_tokens_details");
        return o;
    }

    /** The final usage chunk's {@code usage} ({@code exclude_none}): details only when reported. */
    private static ObjectNode finalUsage(Usage u) {
        ObjectNode o = counts(u);
        if (u.cached() >= 0) {
            o.putObject("prompt_tokens_details").put("cached_tokens", u.cached());
        }
        return o;
    }

    // ------------------------------------------------------------------ /v1/completions

    /** One streamed completion chunk ({@code CompletionStreamResponse}, {@code exclude_unset}). */
    public static ObjectNode completionChunk(Head h, String text, String finishReason, Usage continuous) {
        ObjectNode o = head(h, "text_completion");
        ObjectNode c = o.putArray("choices").addObject();
        c.put("index", 0);
        c.put("text", text);
        c.putNull("logprobs");
        putOrNull(c, "finish_reason", finishReason);
        c.putNull("stop_reason");
        c.putNull("prompt_token_ids");
        c.putNull("token_ids");
        if (continuous != null) {
            o.set("usage", counts(continuous));
        }
        return o;
    }

    /** The completion stream's final usage chunk ({@code exclude_unset=False, exclude_none=True}). */
    public static ObjectNode completionUsageChunk(Head h, Usage u) {
        ObjectNode o = head(h, "text_completion");
        o.putArray("choices");
        o.set("usage", finalUsage(u));
        return o;
    }

    /** A non-streaming completion ({@code CompletionResponse.model_dump()}). */
    public static ObjectNode completion(Head h, String text, String finishReason, Usage u) {
        ObjectNode o = head(h, "text_completion");
        ObjectNode c = o.putArray("choices").addObject();
        c.put("index", 0);
        c.put("text", text);
        c.putNull("logprobs");
        putOrNull(c, "finish_reason", finishReason);
        c.putNull("stop_reason");
        c.putNull("token_ids");
        c.putNull("prompt_logprobs");
        c.putNull("prompt_token_ids");
        c.putNull("routed_experts");
        o.putNull("service_tier");
        o.putNull("system_fingerprint");
        o.set("usage", fullUsage(u));
        o.putNull("kv_transfer_params");
        o.putNull("ec_transfer_params");
        o.putNull("metrics");
        return o;
    }

    // ------------------------------------------------------------------ /v1/chat/completions

    /** The first chat chunk: the role, empty content ({@code ChatCompletionStreamResponse}, {@code exclude_unset}). */
    public static ObjectNode chatRoleChunk(Head h, Usage continuous) {
        ObjectNode o = head(h, "chat.completion.chunk");
        ObjectNode c = o.putArray("choices").addObject();
        c.put("index", 0);
        c.putObject("delta").put("role", "assistant").put("content", "");
        c.putNull("logprobs");
        c.putNull("finish_reason");
        if (continuous != null) {
            o.set("usage", counts(continuous).putNull("completion_tokens_details"));
        }
        o.putNull("prompt_token_ids");
        o.putNull("prompt_text");
        return o;
    }

    /** One chat token chunk; with a finish reason, the last one (it carries {@code stop_reason} too). */
    public static ObjectNode chatChunk(Head h, String text, String finishReason, Usage continuous) {
        ObjectNode o = head(h, "chat.completion.chunk");
        ObjectNode c = o.putArray("choices").addObject();
        c.put("index", 0);
        c.putObject("delta").put("content", text);
        c.putNull("logprobs");
        putOrNull(c, "finish_reason", finishReason);
        if (finishReason != null) {
            c.putNull("stop_reason");
        }
        c.putNull("token_ids");
        if (continuous != null) {
            o.set("usage", counts(continuous).putNull("completion_tokens_details"));
        }
        return o;
    }

    /** The chat stream's final usage chunk. */
    public static ObjectNode chatUsageChunk(Head h, Usage u) {
        ObjectNode o = head(h, "chat.completion.chunk");
        o.putArray("choices");
        o.set("usage", finalUsage(u));
        return o;
    }

    /** A non-streaming chat completion ({@code ChatCompletionResponse.model_dump()}; empty {@code tool_calls} dropped). */
    public static ObjectNode chat(Head h, String text, String finishReason, Usage u) {
        ObjectNode o = head(h, "chat.completion");
        ObjectNode c = o.putArray("choices").addObject();
        c.put("index", 0);
        ObjectNode m = c.putObject("message");
        m.put("role", "assistant");
        m.put("content", text);
        for (String f : new String[] {"refusal", "annotations", "audio", "function_call", "reasoning"}) {
            m.putNull(f);
        }
        c.putNull("logprobs");
        putOrNull(c, "finish_reason", finishReason);
        c.putNull("stop_reason");
        c.putNull("token_ids");
        c.putNull("routed_experts");
        o.putNull("service_tier");
        o.putNull("system_fingerprint");
        o.set("usage", fullUsage(u));
        for (String f : new String[] {"prompt_logprobs", "prompt_token_ids", "prompt_text"}) {
            o.putNull(f);
        }
        o.putNull("kv_transfer_params");
        o.putNull("ec_transfer_params");
        o.putNull("metrics");
        return o;
    }

    // ------------------------------------------------------------------ /inference/v1/generate

    /** One streamed generate chunk ({@code GenerateStreamResponse.model_dump_json()}: every field). */
    public static ObjectNode generateChunk(String requestId, int token, String finishReason, Usage continuous) {
        ObjectNode o = F.objectNode();
        o.put("request_id", requestId);
        ObjectNode c = o.putArray("choices").addObject();
        c.put("index", 0);
        c.putNull("logprobs");
        putOrNull(c, "finish_reason", finishReason);
        c.putArray("token_ids").add(token);
        if (continuous == null) {
            o.putNull("usage");
        } else {
            o.set("usage", fullUsage(new Usage(continuous.prompt(), continuous.completion(), -1)));
        }
        return o;
    }

    /** The generate stream's final usage chunk ({@code exclude_none}). */
    public static ObjectNode generateUsageChunk(String requestId, Usage u) {
        ObjectNode o = F.objectNode();
        o.put("request_id", requestId);
        o.putArray("choices");
        o.set("usage", finalUsage(u));
        return o;
    }

    /** A non-streaming generate answer ({@code GenerateResponse.model_dump()}: it has no usage). */
    public static ObjectNode generate(String requestId, int[] tokens, String finishReason) {
        ObjectNode o = F.objectNode();
        o.put("request_id", requestId);
        ObjectNode c = o.putArray("choices").addObject();
        c.put("index", 0);
        c.putNull("logprobs");
        putOrNull(c, "finish_reason", finishReason);
        ArrayNode ids = c.putArray("token_ids");
        for (int t : tokens) {
            ids.add(t);
        }
        c.putNull("routed_experts");
        o.putNull("prompt_logprobs");
        o.putNull("kv_transfer_params");
        return o;
    }

    static void putOrNull(ObjectNode o, String field, String value) {
        if (value == null) {
            o.putNull(field);
        } else {
            o.put(field, value);
        }
    }
}
