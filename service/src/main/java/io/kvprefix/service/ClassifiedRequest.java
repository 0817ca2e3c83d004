package io.kvprefix.service;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * What the service read of one request before routing it ({@link RouterService#classify}): which API
 * it calls, which model, whether it streams, and the prompt as the router can use it: token ids (routed
 * by cache at once), text or chat messages (routed by cache through the model's tokenizer, else by
 * load), or nothing to route by. The body itself is forwarded as it came, byte for byte.
 *
 * <p>The fields that change a request's KV identity are read here: {@code model} (a LoRA adapter's
 * name salts the block hashes, docs/SPEC.md section 2.1) and {@code cache_salt} (docs/SERVE.md section
 * 5 says how it is used).
 *
 * <p>Thread-safety: immutable after construction (the body node is not copied: do not change it).
 */
public final class ClassifiedRequest {
    /** The API a request calls. Thread-safety: an immutable enum. */
    public enum Kind {
        /** {@code POST /v1/chat/completions}. */
        CHAT,
        /** {@code POST /v1/completions}. */
        COMPLETION,
        /** vLLM's {@code POST /inference/v1/generate} ({@code token_ids}) or SGLang's {@code POST /generate} ({@code input_ids}). */
        GENERATE,
        /** Any other path: passed through to an engine chosen by load. */
        OTHER
    }

    /** The prompt's form. Thread-safety: an immutable enum. */
    public enum Prompt {
        /** Token ids in the body: routed by cache without a tokenizer. */
        TOKENS,
        /** A text prompt: routed by cache through the model's tokenizer. */
        TEXT,
        /** Chat messages: routed by cache through the model's tokenizer (chat template). */
        CHAT,
        /** Nothing the router can hash: routed by load. */
        NONE
    }

    private final String method;
    private final String path;
    private final Kind kind;
    private final Prompt prompt;
    private final String model;
    private final boolean stream;
    private final boolean includeUsage;
    private final int[] tokens;
    private final String cacheSalt;
    private final ObjectNode body;
    private final int bodyBytes;

    /**
     * @param method the HTTP method
     * @param path the request path, without its query
     * @param kind the API
     * @param prompt the prompt's form
     * @param model the {@code model} field, or null
     * @param stream the {@code stream} field
     * @param includeUsage {@code stream_options.include_usage}
     * @param tokens the token ids when {@code prompt} is {@link Prompt#TOKENS} (the first prompt of a batch), else null
     * @param cacheSalt the {@code cache_salt} field, or null
     * @param body the parsed body (null for a request without a JSON body)
     * @param bodyBytes the body's length in bytes
     */
    public ClassifiedRequest(
            String method,
            String path,
            Kind kind,
            Prompt prompt,
            String model,
            boolean stream,
            boolean includeUsage,
            int[] tokens,
            String cacheSalt,
            ObjectNode body,
            int bodyBytes) {
        this.method = method;
        this.path = path;
        this.kind = kind;
        this.prompt = prompt;
        this.model = model;
        this.stream = stream;
        this.includeUsage = includeUsage;
        this.tokens = tokens;
        this.cacheSalt = cacheSalt;
        this.body = body;
        this.bodyBytes = bodyBytes;
        if ((prompt == Prompt.TOKENS) != (tokens != null)) {
            throw new IllegalArgumentException("token ids are given exactly for a TOKENS prompt");
        }
    }

    /** The HTTP method. */
    public String method() {
        return method;
    }

    /** The request path, without its query. */
    public String path() {
        return path;
    }

    /** The API it calls. */
    public Kind kind() {
        return kind;
    }

    /** The prompt's form. */
    public Prompt prompt() {
        return prompt;
    }

    /** The {@code model} field, or null when the body names none. */
    public String model() {
        return model;
    }

    /** True if the body asks for a stream ({@code "stream": true}). */
    public boolean stream() {
        return stream;
    }

    /** True if the body asks for a usage chunk at the end of the stream ({@code stream_options.include_usage}). */
    public boolean includeUsage() {
        return includeUsage;
    }

    /** The prompt's token ids (the first prompt of a batch), or null. The array is shared: do not change it. */
    public int[] tokens() {
        return tokens;
    }

    /** The {@code cache_salt} field, or null. */
    public String cacheSalt() {
        return cacheSalt;
    }

    /** The parsed JSON body, or null. */
    public ObjectNode body() {
        return body;
    }

    /** The body's length in bytes. */
    public int bodyBytes() {
        return bodyBytes;
    }

    /**
     * The tokens a load-only decision charges: the token ids' count, or an estimate of a text body's
     * (a quarter of its bytes; the load terms of docs/SPEC.md section 6 only), 0 without a prompt.
     */
    public int estimatedTokens() {
        if (tokens != null) {
            return tokens.length;
        }
        return prompt == Prompt.NONE ? 0 : bodyBytes / 4;
    }

    @Override
    public String toString() {
        return method + " " + path + " (" + kind + ", prompt " + prompt + ", model " + model
                + (stream ? ", stream" : "") + (tokens != null ? ", " + tokens.length + " tokens" : "") + ")";
    }
}
