package io.kvprefix.zmq.internal;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

/**
 * The identity of a live publisher process, read from its frames (docs/LISTENER.md section 2): the
 * 16 bytes after the number in a 24-byte sequence frame (vLLM PR #57789, with a snapshot endpoint),
 * or the epoch SGLang appends to the topic ({@code \0sgl-kv-epoch=...}, with a snapshot endpoint).
 *
 * <p>Thread-safety: stateless.
 */
public final class PublisherIdentity {
    private static final byte[] EPOCH_MARKER = "\0sgl-kv-epoch=".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] BARRIER_MARKER = "\0sgl-kv-snapshot=".getBytes(StandardCharsets.US_ASCII);

    private PublisherIdentity() {}

    /**
     * The publisher's identity, if its frames carry one: {@code "publisher "} and the 32 hex digits of
     * the 16 bytes after the sequence number of a 24-byte frame, or {@code "epoch "} and the epoch in
     * SGLang's topic ({@code topic\0sgl-kv-epoch=E}, maybe followed by {@code \0sgl-kv-snapshot=B});
     * null otherwise.
     */
    public static String of(byte[] topic, byte[] seqFrame) {
        if (seqFrame.length == 24) {
            return "publisher " + HexFormat.of().formatHex(seqFrame, 8, 24);
        }
        int at = indexOf(topic, EPOCH_MARKER, 0);
        if (at < 0) {
            return null;
        }
        int from = at + EPOCH_MARKER.length;
        int end = indexOf(topic, BARRIER_MARKER, from);
        return "epoch " + new String(topic, from, (end < 0 ? topic.length : end) - from, StandardCharsets.UTF_8);
    }

    private static int indexOf(byte[] a, byte[] b, int from) {
        outer:
        for (int i = from; i + b.length <= a.length; i++) {
            for (int j = 0; j < b.length; j++) {
                if (a[i + j] != b[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
