package io.kvprefix.zmq;

import java.util.Objects;

/**
 * A batch payload that an {@link EngineEventDecoder} cannot read as a whole; {@link #issue()} says
 * which kind of problem (one of the {@link DecodeIssue.Category#ERROR} issues). Problems with single
 * events are not exceptions: they come back as {@link DecodedBatch.Issue}s.
 *
 * <p>Thread-safety: immutable.
 */
public final class BatchDecodeException extends Exception {
    private static final long serialVersionUID = 1L;

    private final DecodeIssue issue;

    /** A decode failure of kind {@code issue}, described by {@code message}. */
    public BatchDecodeException(DecodeIssue issue, String message) {
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
