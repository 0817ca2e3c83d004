package io.kvprefix.standin.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Typed reads of request fields, failing as pydantic's lax mode fails them (an integer may come as
 * {@code 2.0} or {@code "2"}, a boolean as {@code "true"}), and the text of FastAPI's validation errors
 * as vLLM's handler joins them: {@code "1 validation error: {'type': ..., 'loc': ('body', FIELD),
 * 'msg': ..., 'input': ...}"}.
 *
 * <p>Thread-safety: stateless.
 */
public final class JsonFields {
    private JsonFields() {}

    /** The integer at {@code name}, or null if it is absent or null. */
    public static Integer optInt(ObjectNode body, String name) throws ApiError {
        JsonNode v = body.get(name);
        if (v == null || v.isNull()) {
            return null;
        }
        if (v.isIntegralNumber() && v.canConvertToInt()) {
            return v.intValue();
        }
        if (v.isFloatingPointNumber() && v.doubleValue() == Math.rint(v.doubleValue()) && v.canConvertToInt()) {
            return v.intValue();
        }
        if (v.isTextual()) {
            try {
                return Integer.parseInt(v.asText().strip());
            } catch (NumberFormatException e) {
                throw ApiError.validation(error(
                        "int_parsing",
                        name,
                        "Input should be a valid integer, unable to parse string as an integer",
                        v));
            }
        }
        if (v.isFloatingPointNumber()) {
            throw ApiError.validation(error(
                    "int_from_float", name, "Input should be a valid integer, got a number with a fractional part", v));
        }
        throw ApiError.validation(error("int_type", name, "Input should be a valid integer", v));
    }

    /** The boolean at {@code name}, or {@code fallback} if it is absent or null. */
    public static boolean optBool(ObjectNode body, String name, boolean fallback) throws ApiError {
        JsonNode v = body.get(name);
        if (v == null || v.isNull()) {
            return fallback;
        }
        if (v.isBoolean()) {
            return v.booleanValue();
        }
        if (v.isIntegralNumber() && (v.longValue() == 0 || v.longValue() == 1)) {
            return v.longValue() == 1;
        }
        if (v.isTextual()) {
            switch (v.asText().strip().toLowerCase(java.util.Locale.ROOT)) {
                case "true", "1", "yes", "on", "t", "y" -> {
                    return true;
                }
                case "false", "0", "no", "off", "f", "n" -> {
                    return false;
                }
                default -> {}
            }
            throw ApiError.validation(
                    error("bool_parsing", name, "Input should be a valid boolean, unable to interpret input", v));
        }
        throw ApiError.validation(error("bool_type", name, "Input should be a valid boolean", v));
    }

    /**
     * Refuses {@code n} other than 1: the stand-in generates one sequence per request (a limit of the
     * stand-in, not of vLLM).
     */
    public static void onlyOne(ObjectNode body, String name) throws ApiError {
        Integer n = optInt(body, name);
        if (n != null && n != 1) {
            throw ApiError.badRequest(
                    "the stand-in engine generates one sequence per request: " + name + " must be 1, got " + n);
        }
    }

    /** A prompt of token ids: {@code [int, ...]} (or one such list in a list), each >= 0. */
    public static int[] tokenIds(JsonNode v, String name) throws ApiError {
        if (v.isArray() && v.size() == 1 && v.get(0).isArray()) {
            v = v.get(0);
        }
        if (!v.isArray()) {
            throw ApiError.validation(error("list_type", name, "Input should be a valid list", v));
        }
        if (v.isEmpty()) {
            throw ApiError.validation(
                    valueError("Either prompt or prompt_embeds must be provided and non-empty.", name));
        }
        int[] out = new int[v.size()];
        for (int i = 0; i < out.length; i++) {
            JsonNode t = v.get(i);
            if (t.isArray() || t.isTextual()) {
                throw ApiError.badRequest(
                        "the stand-in engine serves one prompt per request: " + name + " must be one string or one list"
                                + " of token ids",
                        name);
            }
            if (!t.isIntegralNumber() || !t.canConvertToInt()) {
                throw ApiError.validation(
                        error("int_type", name + "', " + i + ", '", "Input should be a valid integer", t));
            }
            if (t.intValue() < 0) {
                throw ApiError.validation(error(
                        "greater_than_equal",
                        name + "', " + i + ", '",
                        "Input should be greater than or equal to 0",
                        t));
            }
            out[i] = t.intValue();
        }
        return out;
    }

    /** A missing required field. */
    public static String missing(String name) {
        return "1 validation error: {'type': 'missing', 'loc': ('body', '" + name + "'), 'msg': 'Field required'}";
    }

    /** A field of the wrong type. */
    public static String typeError(String name, String type, String msg) {
        return "1 validation error: {'type': '" + type + "', 'loc': ('body', '" + name + "'), 'msg': '" + msg + "'}";
    }

    /** A {@code VLLMValidationError} raised by a model validator, as pydantic words it. */
    public static String valueError(String message, String parameter) {
        return "1 validation error: {'type': 'value_error', 'loc': ('body',), 'msg': 'Value error, " + message
                + " (parameter=" + parameter + ")'}";
    }

    private static String error(String type, String name, String msg, JsonNode input) {
        return "1 validation error: {'type': '" + type + "', 'loc': ('body', '" + name + "'), 'msg': '" + msg
                + "', 'input': " + input + "}";
    }
}
