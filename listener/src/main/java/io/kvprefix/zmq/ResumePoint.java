package io.kvprefix.zmq;

import java.util.OptionalLong;

/**
 * Where an index's (or a relay's) state of one engine ends: the sequence number of the last batch
 * applied and, if known, the hash of that batch's payload bytes (XXH3-64, seed 0). A snapshot or a
 * relay's stream stores it; {@link KvEventSubscriber#addEngine(EngineEndpoint, ResumePoint)} resumes
 * from it, and the engine's first replay answer must repeat that batch byte for byte, or the engine
 * restarted meanwhile (docs/LISTENER.md sections 3 and 4).
 *
 * <p>Thread-safety: immutable.
 *
 * @param lastSeq the sequence number of the last batch the index holds (at least 0)
 * @param batchHash XXH3-64 (seed 0) of that batch's payload bytes, or empty if unknown
 */
public record ResumePoint(long lastSeq, OptionalLong batchHash) {
    public ResumePoint {
        if (lastSeq < 0) {
            throw new IllegalArgumentException("lastSeq must be >= 0, got " + lastSeq);
        }
        if (batchHash == null) {
            throw new NullPointerException("batchHash (use OptionalLong.empty())");
        }
    }

    /** The point after batch {@code lastSeq}, its hash unknown. */
    public static ResumePoint after(long lastSeq) {
        return new ResumePoint(lastSeq, OptionalLong.empty());
    }

    /** The point after batch {@code lastSeq}, whose payload hashes to {@code batchHash}. */
    public static ResumePoint after(long lastSeq, long batchHash) {
        return new ResumePoint(lastSeq, OptionalLong.of(batchHash));
    }

    /** The first sequence number the index does not hold. */
    public long nextSeq() {
        return lastSeq + 1;
    }
}
