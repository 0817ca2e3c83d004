package io.kvprefix.zmq;

import java.util.OptionalLong;

/**
 * Where an index's (or a relay's) state of one engine ends: the sequence number of the last batch
 * applied and, if known, the hash of that batch's payload bytes (XXH3-64, seed 0). A snapshot or a
 * relay's stream stores it; {@link KvEventSubscriber#addEngine(EngineEndpoint, ResumePoint)} resumes
 * from it: the engine's replay socket is asked at once for everything from {@code lastSeq} on, and
 * its first answer must repeat batch {@code lastSeq} byte for byte, or the engine restarted meanwhile
 * (then the engine's workers are cleared and its stream is fetched from 0). Live batches wait behind
 * that replay; an engine that answers nothing is quiet (nothing is lost); one whose buffer starts
 * later has lost the range (a counted resync). Without the hash, the request starts at
 * {@code lastSeq + 1} and a restart whose new numbering has passed {@code lastSeq} cannot be told
 * from a quiet engine (docs/LISTENER.md section 4).
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
