package io.kvprefix.standin.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Reads the bodies of the generation endpoints the way vLLM's request models do (the package
 * comment names the files): field types first (a wrong type is the validation handler's 400), then
 * the model validators, then the model ({@code _check_model}: 404), then the prompt (tokenized if it
 * is text) and its length against {@code max_model_len}. Fields the stand-in does not model are
 * ignored, as vLLM ignores fields it does not know ({@code OpenAIBaseModel} allows extras).
 *
 * <p>Thread-safety: stateless.
 */
public final class ApiRequests {
    private ApiRequests() {}

    /** A request ready for the engine. */
    public record Parsed(
            int[] prompt,
            int maxTokens,
            boolean stream,
            boolean includeUsage,
            boolean continuousUsage,
            String requestId) {}

    /** What the checks need from the process: the served model name, its context length, its tokenizer. */
    public record Model(String name, int maxModelLen, PromptSource tokens) {}

    /** {@code POST /v1/completions} (and its render): {@code CompletionRequest}. */
    public static Parsed completion(ObjectNode body, Model m) throws ApiError {
        JsonNode prompt = body.get("prompt");
        Integer maxTokens = JsonFields.optInt(body, "max_tokens");
        boolean stream = streamOptions(body);
        JsonFields.onlyOne(body, "n");
        if (prompt == null
                || prompt.isNull()
                || prompt.isTextual() && prompt.asText().isEmpty()) {
            throw ApiError.validation(
                    JsonFields.valueError("Either prompt or prompt_embeds must be provided and non-empty.", "prompt"));
        }
        checkModel(body, m);
        int[] tokens = prompt.isTextual() ? m.tokens().completion(body) : JsonFields.tokenIds(prompt, "prompt");
        int max = maxTokens == null ? 16 : maxTokens;
        return new Parsed(
                checkLength(tokens, max, m), max, stream, includeUsage(body), continuous(body), requestId(body));
    }

    /** {@code POST /v1/chat/completions} (and its render): {@code ChatCompletionRequest}. */
    public static Parsed chat(ObjectNode body, Model m) throws ApiError {
        JsonNode messages = body.get("messages");
        if (messages == null || !messages.isArray()) {
            throw ApiError.validation(JsonFields.typeError("messages", "list_type", "Input should be a valid list"));
        }
        Integer maxCompletion = JsonFields.optInt(body, "max_completion_tokens");
        Integer maxTokens = JsonFields.optInt(body, "max_tokens");
        boolean stream = streamOptions(body);
        JsonFields.onlyOne(body, "n");
        checkModel(body, m);
        int[] tokens = m.tokens().chat(body);
        Integer asked = maxCompletion != null ? maxCompletion : maxTokens;
        int max = asked == null ? m.maxModelLen() - tokens.length : asked;
        return new Parsed(
                checkLength(tokens, max, m), max, stream, includeUsage(body), continuous(body), requestId(body));
    }

    /** {@code POST /inference/v1/generate}: {@code GenerateRequest} (token ids in, token ids out). */
    public static Parsed generate(ObjectNode body, Model m) throws ApiError {
        JsonNode ids = body.get("token_ids");
        if (ids == null) {
            throw ApiError.validation(JsonFields.missing("token_ids"));
        }
        JsonNode sampling = body.get("sampling_params");
        if (sampling == null) {
            throw ApiError.validation(JsonFields.missing("sampling_params"));
        }
        if (!sampling.isObject()) {
            throw ApiError.validation(JsonFields.typeError(
                    "sampling_params",
                    "model_type",
                    "Input should be a valid dictionary or instance of SamplingParams"));
        }
        int[] tokens = JsonFields.tokenIds(ids, "token_ids");
        Integer maxTokens = JsonFields.optInt((ObjectNode) sampling, "max_tokens");
        boolean stream = JsonFields.optBool(body, "stream", false);
        checkModel(body, m);
        int max = maxTokens == null ? m.maxModelLen() - tokens.length : maxTokens;
        return new Parsed(
                checkLength(tokens, max, m), max, stream, includeUsage(body), continuous(body), requestId(body));
    }

    private static boolean streamOptions(ObjectNode body) throws ApiError {
        boolean stream = JsonFields.optBool(body, "stream", false);
        JsonNode options = body.get("stream_options");
        if (options != null && !options.isNull() && !options.isObject()) {
            throw ApiError.validation(JsonFields.typeError(
                    "stream_options", "model_type", "Input should be a valid dictionary or instance of StreamOptions"));
        }
        if (options != null && options.isObject() && !options.isEmpty() && !stream) {
            throw ApiError.validation(
                    JsonFields.valueError("Stream options can only be defined when `stream=True`.", "stream_options"));
        }
        return stream;
    }

    /**
     * vLLM's {@code should_include_usage}: with {@code stream_options} present, {@code include_usage}
     * (default true); without it, none.
     */
    private static boolean includeUsage(ObjectNode body) throws ApiError {
        JsonNode options = body.get("stream_options");
        if (options == null || !options.isObject()) {
            return false;
        }
        return JsonFields.optBool((ObjectNode) options, "include_usage", true);
    }

    private static boolean continuous(ObjectNode body) throws ApiError {
        JsonNode options = body.get("stream_options");
        if (!includeUsage(body)) {
            return false;
        }
        return JsonFields.optBool((ObjectNode) options, "continuous_usage_stats", false);
    }

    /** {@code _check_model}: no model (or an empty name) means the served one. */
    public static void checkModel(ObjectNode body, Model m) throws ApiError {
        JsonNode model = body.get("model");
        if (model == null || model.isNull()) {
            return;
        }
        if (!model.isTextual()) {
            throw ApiError.validation(JsonFields.typeError("model", "string_type", "Input should be a valid string"));
        }
        String name = model.asText();
        if (!name.isEmpty() && !name.equals(m.name())) {
            throw ApiError.unknownModel(name);
        }
    }

    /** The prompt, if it and {@code maxTokens} fit the model's context ({@code _validate_input}'s messages). */
    private static int[] checkLength(int[] prompt, int maxTokens, Model m) throws ApiError {
        int len = m.maxModelLen();
        if (maxTokens < 1) {
            throw ApiError.badRequest("max_tokens must be at least 1, got " + maxTokens + ".", "max_tokens");
        }
        if (prompt.length >= len) {
            throw ApiError.badRequest(
                    "This model's maximum context length is " + len + " tokens. However, your request has "
                            + prompt.length + " input tokens. Please reduce the length of the input messages.",
                    "input_tokens");
        }
        if ((long) prompt.length + maxTokens > len) {
            throw ApiError.badRequest(
                    "'max_tokens' or 'max_completion_tokens' is too large: " + maxTokens
                            + ". This model's maximum context length is " + len + " tokens and your request has "
                            + prompt.length + " input tokens (" + maxTokens + " > " + len + " - " + prompt.length
                            + ").",
                    "max_tokens");
        }
        return prompt;
    }

    private static String requestId(ObjectNode body) {
        JsonNode id = body.get("request_id");
        return id != null && id.isTextual() ? id.asText() : null;
    }
}
