package io.kvprefix.zmq;

import java.util.Objects;

/**
 * A vLLM KV-event payload or frame that cannot be read as a whole; {@link #issue()} says which kind
 * of problem (one of the {@link DecodeIssue.Category#ERROR} issues).
 *
 * <p>Thread-safety: immutable.
 */
public final class VllmDecodeException extends Exception {
    private static final long serialVersionUID = 1L;

    private final DecodeIssue issue;

    /** A decode failure of kind {@code issue}, described by {@code message}. */
    public VllmDecodeException(DecodeIssue issue, String message) {
        super(message, null, false, false);
        this.issue = Objects.requireNonNull(issue, "issue");
    }

    /** What kind of problem this is. */
    public DecodeIssue issue() {
        return issue;
    }

    @Override
    public String toString() {
        return issue.wireName() + ": " + getMessage();
    }
}
