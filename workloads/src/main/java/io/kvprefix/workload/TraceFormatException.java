package io.kvprefix.workload;

/**
 * A trace file that cannot be read: its message names the file and line and says what is wrong, for
 * example {@code conversation_trace.jsonl:17: hash_ids must be an array of non-negative integers}, and
 * is meant to be shown to the user as is (no stack trace).
 *
 * <p>Thread-safety: immutable.
 */
public final class TraceFormatException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** An error at {@code line} (1-based) of {@code source}. */
    public TraceFormatException(String source, int line, String what) {
        super(source + ":" + line + ": " + what);
    }

    /** An error about the whole of {@code source}. */
    public TraceFormatException(String source, String what) {
        super(source + ": " + what);
    }
}
