package io.kvprefix.zmq.internal;

import io.kvprefix.zmq.DecodeIssue;

/**
 * A field of one event was unusable; its value has been consumed, so {@link WireReader} goes on with
 * the next field and makes the event {@link WireBatch.Bad}.
 *
 * <p>Thread-safety: immutable.
 */
final class FieldException extends Exception {
    private static final long serialVersionUID = 1L;
    final DecodeIssue issue;

    FieldException(DecodeIssue issue, String message) {
        super(message, null, false, false);
        this.issue = issue;
    }
}
