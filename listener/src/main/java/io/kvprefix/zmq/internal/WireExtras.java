package io.kvprefix.zmq.internal;

import io.kvprefix.zmq.DecodeIssue;
import java.io.IOException;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ValueType;

/**
 * The event fields engines added in 2026 that take more than a scalar to read, for {@link WireReader}:
 * TensorRT-LLM's {@code mm_keys} and vLLM's {@code remaining_copy_counts} (docs/ENGINES.md sections 1.1
 * and 3). Each consumes exactly its value, also when it throws.
 *
 * <p>Thread-safety: stateless.
 */
final class WireExtras {
    private WireExtras() {}

    /**
     * TensorRT-LLM's {@code mm_keys}: nil, or per block nil or a list of maps tagged {@code mm_key} whose
     * {@code hash} is hex; an item's {@code mm_hash} is its first 16 hex digits, as in the JSON feed.
     */
    static long[][] mmKeys(MessageUnpacker u, int size) throws IOException, FieldException {
        if (u.tryUnpackNil()) {
            return null;
        }
        if (u.getNextFormat().getValueType() != ValueType.ARRAY) {
            throw WireReader.wrongType(u, "mm_keys", "an array");
        }
        int n = WireReader.arrayHeaderInEvent(u, size);
        long[][] out = new long[n][];
        String bad = null;
        for (int b = 0; b < n; b++) {
            ValueType t = u.getNextFormat().getValueType();
            if (t != ValueType.ARRAY) {
                bad = t == ValueType.NIL ? bad : "mm_keys[" + b + "] is not a list";
                u.skipValue();
                out[b] = new long[0];
                continue;
            }
            out[b] = new long[WireReader.arrayHeaderInEvent(u, size)];
            for (int i = 0; i < out[b].length; i++) {
                Long h = mmKeyHash(u);
                if (h == null) {
                    bad = "mm_keys[" + b + "][" + i + "] has no hex hash";
                } else {
                    out[b][i] = h;
                }
            }
        }
        if (bad != null) {
            throw new FieldException(DecodeIssue.BAD_EVENT, bad);
        }
        return out;
    }

    /** One {@code mm_key} map's hash as an {@code mm_hash}, or null if it has none (the map is consumed). */
    private static Long mmKeyHash(MessageUnpacker u) throws IOException {
        if (u.getNextFormat().getValueType() != ValueType.MAP) {
            u.skipValue();
            return null;
        }
        int m = u.unpackMapHeader();
        String hash = null;
        for (int j = 0; j < m; j++) {
            if (u.getNextFormat().getValueType() != ValueType.STRING) {
                u.skipValue(2);
            } else if (u.unpackString().equals("hash") && u.getNextFormat().getValueType() == ValueType.STRING) {
                hash = u.unpackString();
            } else {
                u.skipValue();
            }
        }
        try {
            return hash == null || hash.length() < 16 ? null : Long.parseUnsignedLong(hash.substring(0, 16), 16);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** {@code remaining_copy_counts}: nil, or an array of integers from 0 to {@code Integer.MAX_VALUE}. */
    static int[] copyCounts(MessageUnpacker u, int size) throws IOException, FieldException {
        if (u.getNextFormat().getValueType() == ValueType.NIL) {
            u.unpackNil();
            return null;
        }
        if (u.getNextFormat().getValueType() != ValueType.ARRAY) {
            throw WireReader.wrongType(u, "remaining_copy_counts", "an array");
        }
        int n = WireReader.arrayHeaderInEvent(u, size);
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            MessageFormat fmt = u.getNextFormat();
            boolean integer = fmt.getValueType() == ValueType.INTEGER && fmt != MessageFormat.UINT64;
            long c = integer ? u.unpackLong() : -1;
            if (c < 0 || c > Integer.MAX_VALUE) {
                WireReader.skip(u, n - i - (integer ? 1 : 0));
                throw new FieldException(
                        DecodeIssue.BAD_EVENT, "remaining_copy_counts[" + i + "] is not a count from 0 to 2^31-1");
            }
            out[i] = (int) c;
        }
        return out;
    }
}
