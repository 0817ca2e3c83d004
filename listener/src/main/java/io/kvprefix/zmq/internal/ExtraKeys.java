package io.kvprefix.zmq.internal;

import io.kvprefix.BlockHasher;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ValueType;

/**
 * vLLM's {@code extra_keys} of one {@code BlockStored}, as kvprefix uses them: per emitted block, the
 * {@code mm_hash}es of the multimodal items that block overlaps; a cache namespace tagged by Dynamo;
 * and the entries that meant nothing to kvprefix. The rule is Dynamo's, for the layout vLLM
 * publishes; docs/ENGINES.md section 1 states it with both sources.
 *
 * <p>Thread-safety: immutable once read.
 *
 * @param perEntry the {@code mm_hash}es of each entry (null for an entry without items), one per
 *     entry of the list as it was sent
 * @param namespace Dynamo's cache namespace, or null
 * @param unrecognized strings that are neither an item, the LoRA name (as far as it was known when
 *     they were read) nor a namespace, in order; values of another type that stand where an entry
 *     belongs are listed as {@code "?"}
 */
public record ExtraKeys(long[][] perEntry, String namespace, java.util.List<String> unrecognized) {
    /** The tag Dynamo gives a cache namespace it passes to vLLM inside {@code extra_keys}. */
    public static final String DYNAMO_SALT_PREFIX = "dynamo-cache-salt:";

    /** True if some entry carries an item. */
    public boolean hasItems() {
        for (long[] e : perEntry) {
            if (e != null && e.length > 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * Reads the value at the unpacker (nil, or an array of entries); null for nil. Every array header
     * is held to the {@code size} bytes of the payload, so a lying count is refused before it sizes
     * an array.
     */
    static ExtraKeys read(MessageUnpacker u, String loraName, int size) throws IOException, FieldException {
        if (u.tryUnpackNil()) {
            return null;
        }
        if (u.getNextFormat().getValueType() != ValueType.ARRAY) {
            u.skipValue();
            return new ExtraKeys(new long[0][], null, java.util.List.of("?"));
        }
        int n = WireReader.arrayHeaderInEvent(u, size);
        long[][] out = new long[n][];
        String ns = null;
        java.util.List<String> unknown = new java.util.ArrayList<>(0);
        for (int i = 0; i < n; i++) {
            if (u.tryUnpackNil()) {
                continue;
            }
            if (u.getNextFormat().getValueType() != ValueType.ARRAY) {
                u.skipValue();
                unknown.add("?");
                continue;
            }
            int k = WireReader.arrayHeaderInEvent(u, size);
            long[] items = new long[k];
            int m = 0;
            for (int j = 0; j < k; j++) {
                ValueType t = u.getNextFormat().getValueType();
                if (t == ValueType.STRING) {
                    String s = u.unpackString();
                    if (isHexDigest(s)) {
                        items[m++] = mmHash(s);
                    } else if (s.equals(loraName)) {
                        continue;
                    } else if (i == 0 && ns == null && s.startsWith(DYNAMO_SALT_PREFIX)) {
                        ns = s.substring(DYNAMO_SALT_PREFIX.length());
                    } else {
                        unknown.add(s);
                    }
                } else if (t == ValueType.ARRAY) {
                    m = pair(u, items, m, size);
                } else {
                    u.skipValue();
                }
            }
            out[i] = m == 0 ? null : java.util.Arrays.copyOf(items, m);
        }
        return new ExtraKeys(out, ns == null || ns.isEmpty() ? null : ns, unknown);
    }

    /** {@code [identifier, offset]}: adds the identifier's mm_hash to {@code items[m]}; anything else is skipped. */
    private static int pair(MessageUnpacker u, long[] items, int m, int size) throws IOException, FieldException {
        int k = WireReader.arrayHeaderInEvent(u, size);
        if (k == 2 && u.getNextFormat().getValueType() == ValueType.STRING) {
            String id = u.unpackString();
            MessageFormat f = u.getNextFormat();
            u.skipValue();
            if (f.getValueType() == ValueType.INTEGER) {
                items[m++] = mmHash(id);
            }
            return m;
        }
        u.skipValue(k);
        return m;
    }

    /** Dynamo's {@code hash_mm_identifier}: the first 16 hex digits of a 64-digit digest, else XXH3 with seed 0. */
    public static long mmHash(String identifier) {
        if (isHexDigest(identifier)) {
            return Long.parseUnsignedLong(identifier.substring(0, 16), 16);
        }
        return BlockHasher.xxh3(identifier.getBytes(StandardCharsets.UTF_8), 0L);
    }

    private static boolean isHexDigest(String s) {
        if (s.length() != 64) {
            return false;
        }
        for (int i = 0; i < 64; i++) {
            char c = s.charAt(i);
            if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F')) {
                return false;
            }
        }
        return true;
    }
}
