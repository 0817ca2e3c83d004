package io.kvprefix.nats.internal;

import io.kvprefix.zmq.EngineEndpoint;
import java.io.ByteArrayOutputStream;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * The stream's message format, version 1 (docs/FLEET.md section 2): one message, a <em>frame</em>,
 * carries consecutive <em>records</em> of one engine, each a batch (the engine's sequence number and
 * its payload bytes, untouched) or a clear. Headers: {@value #ID} ({@code KEY-FIRSTREC}),
 * {@value #VERSION}, {@value #ENGINE} (the engine's {@code --engine} form), {@value #FIRST_REC},
 * {@value #LAST_REC}, and {@value #LAST_SEQ} when the frame's last batch is not followed by a clear.
 * The body is the records back to back: {@code 'B'}, the sequence number (8 bytes big-endian), the
 * payload's length (4 bytes big-endian) and the payload; or {@code 'C'}.
 *
 * <p>Thread-safety: stateless; {@link Frame} and {@link Record} are immutable (their arrays must not
 * be changed).
 */
public final class Frames {
    /** JetStream's de-duplication header. */
    public static final String ID = "Nats-Msg-Id";
    /** The frame format's version. */
    public static final String VERSION = "Kvp-Frame";
    /** The engine, in the {@code --engine} form (its replay endpoint included, harmless to readers). */
    public static final String ENGINE = "Kvp-Engine";
    /** The number of the frame's first record (records are numbered per engine from 0, forever). */
    public static final String FIRST_REC = "Kvp-Rec";
    /** The number of the frame's last record. */
    public static final String LAST_REC = "Kvp-Last-Rec";
    /** The sequence number of the frame's last batch, present only if no clear follows it in the frame. */
    public static final String LAST_SEQ = "Kvp-Seq";

    /** The version this code writes and reads. */
    public static final String FORMAT = "1";
    /** A frame's body holds at most this much; a larger batch is published as a clear (counted). */
    public static final int MAX_FRAME_BYTES = 512 * 1024;

    private static final byte BATCH = 'B';
    private static final byte CLEAR = 'C';

    private Frames() {}

    /** One record: a batch ({@code payload} not null) or a clear. */
    public record Record(long seq, byte[] payload) {
        /** A clear of every worker the engine fed. */
        public static Record clear() {
            return new Record(-1, null);
        }

        public boolean isClear() {
            return payload == null;
        }

        /** Bytes this record takes in a frame body. */
        public int size() {
            return payload == null ? 1 : 13 + payload.length;
        }
    }

    /** A frame as read back: its first record's number and its records. */
    public record Frame(long firstRec, List<Record> records) {}

    /** The key of {@code engine} in subjects and ids: 16 hex digits of SHA-256 of its endpoint. */
    public static String engineKey(EngineEndpoint engine) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256")
                    .digest(engine.endpoint().getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
    }

    /** The message id of the frame of {@code engineKey} whose first record is {@code firstRec}. */
    public static String messageId(String engineKey, long firstRec) {
        return engineKey + "-" + firstRec;
    }

    /** The body of a frame holding {@code records}. */
    public static byte[] body(List<Record> records) {
        int n = 0;
        for (Record r : records) {
            n += r.size();
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(n);
        ByteBuffer head = ByteBuffer.allocate(12);
        for (Record r : records) {
            if (r.isClear()) {
                out.write(CLEAR);
            } else {
                out.write(BATCH);
                head.clear();
                head.putLong(r.seq()).putInt(r.payload().length);
                out.write(head.array(), 0, 12);
                out.write(r.payload(), 0, r.payload().length);
            }
        }
        return out.toByteArray();
    }

    /**
     * The records of a frame body.
     *
     * @throws IllegalArgumentException naming the fault if the body is not a version-1 frame body
     */
    public static List<Record> records(byte[] body) {
        List<Record> out = new ArrayList<>();
        ByteBuffer b = ByteBuffer.wrap(body);
        try {
            while (b.hasRemaining()) {
                byte kind = b.get();
                if (kind == CLEAR) {
                    out.add(Record.clear());
                } else if (kind == BATCH) {
                    long seq = b.getLong();
                    int len = b.getInt();
                    if (seq < 0 || len < 0 || len > b.remaining()) {
                        throw new IllegalArgumentException("record " + out.size() + ": sequence " + seq + ", length "
                                + len + " of " + b.remaining() + " bytes left");
                    }
                    byte[] p = new byte[len];
                    b.get(p);
                    out.add(new Record(seq, p));
                } else {
                    throw new IllegalArgumentException("record " + out.size() + ": unknown kind " + (kind & 0xff));
                }
            }
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("record " + out.size() + " is cut short", e);
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("empty frame");
        }
        return out;
    }
}
