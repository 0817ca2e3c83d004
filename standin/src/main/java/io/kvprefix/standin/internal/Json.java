package io.kvprefix.standin.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.buffer.Buffer;

/**
 * JSON in and out: compact, UTF-8, fields in insertion order (pydantic's {@code model_dump_json} and
 * Starlette's {@code JSONResponse} both write without spaces and without escaping non-ASCII text).
 *
 * <p>Thread-safety: safe from any thread (one shared, configured-once {@link ObjectMapper}).
 */
public final class Json {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private Json() {}

    /** {@code node} as compact UTF-8 bytes. */
    public static Buffer bytes(JsonNode node) {
        try {
            return Buffer.buffer(MAPPER.writeValueAsBytes(node));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a JSON tree always serializes", e);
        }
    }

    /** A request body: a JSON object, or the validation handler's error. */
    public static ObjectNode object(Buffer body) throws ApiError {
        JsonNode n;
        try {
            n = MAPPER.readTree(body.getBytes());
        } catch (java.io.IOException e) {
            String why = e.getMessage() == null
                    ? ""
                    : e.getMessage().lines().findFirst().orElse("");
            throw ApiError.validation("1 validation error: {'type': 'json_invalid', 'loc': ('body', 0), 'msg': "
                    + "'JSON decode error', 'input': {}, 'ctx': {'error': '" + why.replace("'", "\"") + "'}}");
        }
        if (n == null || n.isMissingNode()) {
            throw ApiError.validation(JsonFields.missing(""));
        }
        if (!n.isObject()) {
            throw ApiError.validation("1 validation error: {'type': 'model_attributes_type', 'loc': ('body',), "
                    + "'msg': 'Input should be a valid dictionary or object to extract fields from', 'input': " + n
                    + "}");
        }
        return (ObjectNode) n;
    }
}
