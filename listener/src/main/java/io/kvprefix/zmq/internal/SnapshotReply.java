package io.kvprefix.zmq.internal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

/**
 * One answer of an engine's snapshot endpoint, checked whole before anything of it is applied: the
 * publisher's UUID, the resume point (the number of the last live batch the snapshot already holds)
 * and the compacted snapshot as ordinary event batches. The frame layout is kvprefix's provisional
 * reading of vLLM PR #57789 (docs/LISTENER.md section 8): {@code [uuid, resume_seq, count, batch...,
 * "END"]}, the UUID 16 bytes, numbers 8-byte big-endian. A reply that is short, long, unterminated or whose counts
 * disagree is refused with {@link IllegalArgumentException}, so a damaged snapshot applies nothing.
 *
 * <p>Thread-safety: immutable; the batches array is not copied, so callers must not change it.
 *
 * @param uuid the publisher-lifetime UUID the snapshot was cut from, named as the live stream's
 *     identity is ({@code "publisher "} and 32 hex digits)
 * @param resumeSeq the last live sequence number the snapshot covers
 * @param batches the snapshot's batches, in the publisher's event-batch encoding
 */
public record SnapshotReply(String uuid, long resumeSeq, List<byte[]> batches) {
    /** The frame that ends a complete reply. */
    public static final byte[] END = "END".getBytes(StandardCharsets.US_ASCII);
    /** The request frame sent to the snapshot endpoint (after the empty delimiter). */
    public static final byte[] REQUEST = "SNAPSHOT".getBytes(StandardCharsets.US_ASCII);
    /** The publisher UUID's length, as in a 24-byte live sequence frame (docs/LISTENER.md section 1). */
    public static final int UUID_BYTES = 16;
    /** More batches than this in one snapshot are refused before anything is kept. */
    public static final long MAX_BATCHES = 1L << 20;

    /** Checks {@code frames} (delimiter already removed) and returns the reply they carry. */
    public static SnapshotReply parse(List<byte[]> frames) {
        if (frames.size() < 4) {
            throw new IllegalArgumentException("snapshot reply of " + frames.size() + " frames (at least 4)");
        }
        if (frames.get(0).length != UUID_BYTES) {
            throw new IllegalArgumentException("snapshot publisher UUID of " + frames.get(0).length + " bytes (16)");
        }
        String uuid = "publisher " + HexFormat.of().formatHex(frames.get(0));
        long resume = number(frames.get(1), "resume_seq");
        long count = number(frames.get(2), "count");
        if (resume < -1 || count < 0 || count > MAX_BATCHES) {
            throw new IllegalArgumentException("snapshot reply with resume_seq " + resume + ", count " + count);
        }
        if (frames.size() != count + 4) {
            throw new IllegalArgumentException(
                    "snapshot reply announces " + count + " batches but has " + (frames.size() - 4));
        }
        if (!Arrays.equals(frames.getLast(), END)) {
            throw new IllegalArgumentException("snapshot reply not terminated by END (incomplete)");
        }
        return new SnapshotReply(uuid, resume, List.copyOf(frames.subList(3, frames.size() - 1)));
    }

    private static long number(byte[] frame, String name) {
        if (frame.length != Long.BYTES) {
            throw new IllegalArgumentException("snapshot " + name + " of " + frame.length + " bytes (8)");
        }
        return ByteBuffer.wrap(frame).getLong();
    }
}
