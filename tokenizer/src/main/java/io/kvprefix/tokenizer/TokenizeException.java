package io.kvprefix.tokenizer;

import java.util.regex.Pattern;

/**
 * Why a request body could not be tokenized: a stable snake_case {@link #reason()} that a router
 * turns into a metric label and a response header, and a message for a log line. The reasons are
 * listed in docs/TOKENIZER.md section 4.
 *
 * <p>Thread-safety: immutable.
 */
public final class TokenizeException extends Exception {
    private static final long serialVersionUID = 1L;
    private static final Pattern SNAKE_CASE = Pattern.compile("[a-z][a-z0-9]*(?:_[a-z0-9]+)*");

    /** The body is not a request this mode can read (no {@code messages}, a batched prompt, a wrong type). */
    public static final String BAD_REQUEST = "bad_request";
    /** The mode needs token ids and the body carries text ({@code tokens} mode). */
    public static final String NEEDS_TOKEN_IDS = "needs_token_ids";
    /** A chat body for a model whose tokenizer has no chat template. */
    public static final String NO_CHAT_TEMPLATE = "no_chat_template";
    /** The chat template failed on this body (its {@code raise_exception}, or an error while rendering). */
    public static final String TEMPLATE_ERROR = "template_error";
    /** The tokenizer failed on the rendered text. */
    public static final String TOKENIZER_ERROR = "tokenizer_error";
    /** The renderer answered with an error, an unreadable reply, or could not be reached. */
    public static final String RENDER_FAILED = "render_failed";
    /** The renderer did not answer within the timeout. */
    public static final String RENDER_TIMEOUT = "render_timeout";
    /** The tokenizer was closed. */
    public static final String CLOSED = "closed";

    private final String reason;

    /** An exception for {@code reason} (snake_case) with a message saying what was wrong. */
    public TokenizeException(String reason, String message) {
        this(reason, message, null);
    }

    /** An exception for {@code reason} (snake_case) with a message and the failure behind it. */
    public TokenizeException(String reason, String message, Throwable cause) {
        super(message, cause);
        if (reason == null || !SNAKE_CASE.matcher(reason).matches()) {
            throw new IllegalArgumentException("a reason is snake_case, not " + reason);
        }
        this.reason = reason;
    }

    /** The stable snake_case code of the failure, for example {@code no_chat_template}. */
    public String reason() {
        return reason;
    }
}
