package io.kvprefix.standin.internal;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A request vLLM would refuse, with the body it would answer: {@code ErrorResponse} of
 * {@code vllm/entrypoints/serve/engine/protocol.py}, {@code {"error": {"message", "type", "param",
 * "code"}}}, the status in {@code code}. The kinds are vLLM's: {@code create_error_response}'s
 * {@code BadRequestError} (400) and {@code NotFoundError} (404, an unknown model), the request
 * validation handler's {@code "Bad Request"} (400: malformed JSON, a field of the wrong type), and
 * FastAPI's own {@code {"detail": ...}} for an unknown path (404) or method (405).
 *
 * <p>Thread-safety: immutable.
 */
public final class ApiError extends Exception {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final String type;
    private final String param;
    private final boolean fastApiDetail;

    private ApiError(int status, String type, String message, String param, boolean fastApiDetail) {
        super(message, null, false, false);
        this.status = status;
        this.type = type;
        this.param = param;
        this.fastApiDetail = fastApiDetail;
    }

    /** {@code create_error_response(message)}: 400 {@code BadRequestError}. */
    public static ApiError badRequest(String message) {
        return new ApiError(400, "BadRequestError", message, null, false);
    }

    /** {@code create_error_response} for a {@code VLLMValidationError} naming {@code param}. */
    public static ApiError badRequest(String message, String param) {
        return new ApiError(400, "BadRequestError", message, param, false);
    }

    /** {@code create_error_response} for an unexpected exception: 500 {@code InternalServerError}. */
    public static ApiError internal(String message) {
        return new ApiError(500, "InternalServerError", message, null, false);
    }

    /** The request validation handler (pydantic / JSON errors): 400, type {@code "Bad Request"}. */
    public static ApiError validation(String message) {
        return new ApiError(400, "Bad Request", message, null, false);
    }

    /** {@code _check_model}: 404 {@code NotFoundError}, param {@code model}. */
    public static ApiError unknownModel(String model) {
        return new ApiError(404, "NotFoundError", "The model `" + model + "` does not exist.", "model", false);
    }

    /** FastAPI's answer to a path no route has: 404 {@code {"detail": "Not Found"}}. */
    public static ApiError noRoute() {
        return new ApiError(404, null, "Not Found", null, true);
    }

    /** FastAPI's answer to a method the path's route does not take: 405 {@code {"detail": "Method Not Allowed"}}. */
    public static ApiError wrongMethod() {
        return new ApiError(405, null, "Method Not Allowed", null, true);
    }

    /** The HTTP status. */
    public int status() {
        return status;
    }

    /** The body vLLM answers with. */
    public ObjectNode body() {
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        if (fastApiDetail) {
            root.put("detail", getMessage());
            return root;
        }
        ObjectNode error = root.putObject("error");
        error.put("message", getMessage());
        error.put("type", type);
        if (param == null) {
            error.putNull("param");
        } else {
            error.put("param", param);
        }
        error.put("code", status);
        return root;
    }
}
