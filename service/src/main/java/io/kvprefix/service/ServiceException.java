package io.kvprefix.service;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * A request the service answers itself, with an HTTP status and an OpenAI-style error body
 * {@code {"error":{"message","type","param","code"}}} (docs/SERVE.md section 4 lists every code):
 * a malformed body (400), an unknown model (404), a body over the limit (413), a full queue (429), no
 * engine to send it to (503), an engine that failed before it answered (502) or timed out (504).
 *
 * <p>Thread-safety: immutable.
 */
public final class ServiceException extends Exception {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final String type;
    private final String code;
    private final String param;

    /**
     * @param status the HTTP status
     * @param type the error's {@code type}, such as {@code invalid_request_error}
     * @param code the error's {@code code}, a stable snake_case word such as {@code model_not_found}
     * @param param the request field at fault, or null
     * @param message one sentence for a person
     */
    public ServiceException(int status, String type, String code, String param, String message) {
        super(Objects.requireNonNull(message, "message"));
        if (status < 400 || status > 599) {
            throw new IllegalArgumentException("an error status is 400..599, got " + status);
        }
        this.status = status;
        this.type = Objects.requireNonNull(type, "type");
        this.code = Objects.requireNonNull(code, "code");
        this.param = param;
    }

    /** 400 {@code invalid_request_error}. */
    public static ServiceException badRequest(String code, String param, String message) {
        return new ServiceException(400, "invalid_request_error", code, param, message);
    }

    /** 404 {@code model_not_found} for {@code model}. */
    public static ServiceException unknownModel(String model, Iterable<String> served) {
        return new ServiceException(
                404,
                "invalid_request_error",
                "model_not_found",
                "model",
                "The model '" + model + "' does not exist; the engines serve: " + String.join(", ", served));
    }

    /** 413 {@code request_too_large}: a body over {@code limit} bytes. */
    public static ServiceException tooLarge(long limit) {
        return new ServiceException(
                413,
                "invalid_request_error",
                "request_too_large",
                null,
                "The request body is larger than the router's limit of " + limit + " bytes");
    }

    /** 503 {@code no_engine_available}. */
    public static ServiceException noEngine(String why) {
        return new ServiceException(503, "server_error", "no_engine_available", null, why);
    }

    /** 502 {@code engine_unavailable}: the engine failed before its answer began. */
    public static ServiceException engineFailed(String why) {
        return new ServiceException(502, "server_error", "engine_unavailable", null, why);
    }

    /** 504 {@code engine_timeout}: the engine did not answer in time. */
    public static ServiceException engineTimeout(String why) {
        return new ServiceException(504, "server_error", "engine_timeout", null, why);
    }

    /** The HTTP status. */
    public int status() {
        return status;
    }

    /** The error's {@code type}. */
    public String type() {
        return type;
    }

    /** The error's {@code code}: a stable snake_case word. */
    public String code() {
        return code;
    }

    /** The request field at fault, or null. */
    public String param() {
        return param;
    }

    /** The OpenAI-style error body, {@code {"error":{"message":...,"type":...,"param":...,"code":...}}}. */
    public String toJson() {
        return "{\"error\":{\"message\":" + quote(getMessage()) + ",\"type\":" + quote(type) + ",\"param\":"
                + (param == null ? "null" : quote(param)) + ",\"code\":" + quote(code) + "}}";
    }

    /** {@link #toJson()} in UTF-8. */
    public byte[] toJsonBytes() {
        return toJson().getBytes(StandardCharsets.UTF_8);
    }

    /** A JSON string literal. */
    static String quote(String s) {
        return "\"" + new String(JsonStringEncoder.getInstance().quoteAsString(s)) + "\"";
    }
}
