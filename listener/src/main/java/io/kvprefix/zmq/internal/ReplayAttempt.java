package io.kvprefix.zmq.internal;

/**
 * One replay request of {@link EngineSync} and what its answers have shown so far: the number asked
 * for, the anchor (the last batch applied, which the first answer must repeat byte for byte), when
 * it is sent and due, the last number answered (answers must increase), and how much it achieved.
 *
 * <p>Thread-safety: not thread-safe; the subscriber's I/O thread owns it.
 */
final class ReplayAttempt {
    static final long NONE = -1;

    /** The number asked for: every buffered batch from it on is requested. */
    final long from;
    /** The number whose bytes the first answer must repeat (the last batch applied), or {@link #NONE}. */
    final long anchor;
    /** When to send it (after a backoff); meaningful until {@link #sent}. */
    long sendAt;

    boolean sent;
    /** When its first answer is due. */
    long deadline;
    /** When its last answer arrived, once {@link #answered}. */
    long lastAnswerAt;

    boolean answered;
    /** The number of the last answer taken (NONE before the first). */
    long lastSeq = NONE;
    /** Batches it applied. */
    int applied;
    /** Answers that contradicted the request (numbers below it, or not increasing). */
    int contradictions;
    /** Whether an answer skipped a number (the engine's ROUTER dropped some). */
    boolean hole;

    ReplayAttempt(long from, long anchor, long sendAt) {
        this.from = from;
        this.anchor = anchor;
        this.sendAt = sendAt;
    }

    /** Whether the first answer taken is still to come and must be the anchor. */
    boolean awaitsAnchor() {
        return anchor != NONE && lastSeq == NONE;
    }
}
