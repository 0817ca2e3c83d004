package io.kvprefix.zmq.internal;

import io.kvprefix.zmq.BatchDecodeException;
import io.kvprefix.zmq.DecodeIssue;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePackException;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ValueType;

/**
 * Reads one vLLM KV-event payload (msgpack) into a {@link WireBatch}, streaming, without building a
 * value tree: both encodings vLLM has used (the batch and its events as tagged arrays or as maps),
 * defaults left out, unknown fields and trailing elements skipped, hashes signed, unsigned or bytes
 * (docs/ENGINES.md section 1).
 *
 * <p>A problem inside one event makes that event {@link WireBatch.Bad} and reading goes on with the
 * next one (every field read consumes exactly its value, even when it has the wrong type). A problem
 * with the payload as a whole throws {@link BatchDecodeException}.
 *
 * <p>Thread-safety: stateless; {@link #read} may be called from any thread.
 */
public final class WireReader {
    private WireReader() {}

    /** The payload cannot be read on (a header that lies about its size); the whole batch is bad. */
    private static final class Corrupt extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Corrupt(String message) {
            super(message, null, false, false);
        }
    }

    /** Reads one payload. */
    public static WireBatch read(byte[] payload) throws BatchDecodeException {
        if (payload.length == 0) {
            throw new BatchDecodeException(DecodeIssue.BAD_MSGPACK, "empty payload");
        }
        try (MessageUnpacker u = MessagePack.newDefaultUnpacker(payload)) {
            WireBatch batch = readBatch(u, payload.length);
            if (u.hasNext()) {
                throw new BatchDecodeException(
                        DecodeIssue.BAD_MSGPACK, (payload.length - u.getTotalReadBytes()) + " bytes after the batch");
            }
            return batch;
        } catch (Corrupt e) {
            throw new BatchDecodeException(DecodeIssue.BAD_MSGPACK, e.getMessage());
        } catch (MessagePackException | IOException e) {
            throw new BatchDecodeException(DecodeIssue.BAD_MSGPACK, "not valid msgpack: " + e.getMessage());
        }
    }

    private static WireBatch readBatch(MessageUnpacker u, int size) throws IOException, BatchDecodeException {
        ValueType t = u.getNextFormat().getValueType();
        double ts = 0;
        boolean haveTs = false;
        OptionalInt rank = OptionalInt.empty();
        List<WireBatch.Event> events = null;
        if (t == ValueType.ARRAY) {
            int n = arrayHeader(u, size);
            if (n < 2) {
                skip(u, n);
                throw new BatchDecodeException(
                        DecodeIssue.BAD_BATCH, "batch array has " + n + " elements, expected [ts, events, dp_rank?]");
            }
            ts = batchTimestamp(u);
            haveTs = true;
            events = readEvents(u, size);
            if (n >= 3) {
                rank = batchRank(u);
            }
            skip(u, n - 3);
        } else if (t == ValueType.MAP) {
            int n = mapHeader(u, size);
            for (int i = 0; i < n; i++) {
                if (u.getNextFormat().getValueType() != ValueType.STRING) {
                    u.skipValue(2);
                    continue;
                }
                switch (u.unpackString()) {
                    case "ts" -> {
                        ts = batchTimestamp(u);
                        haveTs = true;
                    }
                    case "events" -> events = readEvents(u, size);
                    case "data_parallel_rank", "dp_rank" -> rank = batchRank(u);
                    default -> u.skipValue();
                }
            }
        } else {
            u.skipValue();
            throw new BatchDecodeException(
                    DecodeIssue.BAD_BATCH,
                    "payload is a " + t.name().toLowerCase() + ", expected a batch array or map");
        }
        if (!haveTs || events == null) {
            throw new BatchDecodeException(DecodeIssue.BAD_BATCH, "batch map lacks " + (haveTs ? "events" : "ts"));
        }
        return new WireBatch(ts, rank, events);
    }

    private static double batchTimestamp(MessageUnpacker u) throws IOException, BatchDecodeException {
        MessageFormat f = u.getNextFormat();
        return switch (f.getValueType()) {
            case FLOAT -> u.unpackDouble();
            case INTEGER -> f == MessageFormat.UINT64 ? u.unpackBigInteger().doubleValue() : u.unpackLong();
            default -> {
                u.skipValue();
                throw new BatchDecodeException(
                        DecodeIssue.BAD_BATCH,
                        "batch timestamp is a " + f.getValueType().name().toLowerCase());
            }
        };
    }

    private static OptionalInt batchRank(MessageUnpacker u) throws IOException, BatchDecodeException {
        if (u.tryUnpackNil()) {
            return OptionalInt.empty();
        }
        MessageFormat f = u.getNextFormat();
        if (f.getValueType() != ValueType.INTEGER || f == MessageFormat.UINT64) {
            u.skipValue();
            throw new BatchDecodeException(DecodeIssue.BAD_BATCH, "data_parallel_rank is not a small integer");
        }
        long r = u.unpackLong();
        if (r < 0 || r > 0xFFFF_FFFFL) {
            throw new BatchDecodeException(
                    DecodeIssue.BAD_BATCH, "data_parallel_rank " + r + " is outside 0..4294967295");
        }
        return OptionalInt.of((int) r);
    }

    private static List<WireBatch.Event> readEvents(MessageUnpacker u, int size)
            throws IOException, BatchDecodeException {
        if (u.getNextFormat().getValueType() != ValueType.ARRAY) {
            u.skipValue();
            throw new BatchDecodeException(DecodeIssue.BAD_BATCH, "batch events are not an array");
        }
        int n = arrayHeader(u, size);
        List<WireBatch.Event> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            ValueType t = u.getNextFormat().getValueType();
            if (t == ValueType.ARRAY) {
                out.add(readArrayEvent(u, size));
            } else if (t == ValueType.MAP) {
                out.add(readMapEvent(u, size));
            } else {
                u.skipValue();
                out.add(new WireBatch.Bad(
                        DecodeIssue.BAD_EVENT,
                        "event " + i + " is a " + t.name().toLowerCase() + ", expected a tagged array or a map"));
            }
        }
        return out;
    }

    private static WireBatch.Event readArrayEvent(MessageUnpacker u, int size)
            throws IOException, BatchDecodeException {
        int n = arrayHeader(u, size);
        WireFields f = new WireFields();
        if (n == 0) {
            return new WireBatch.Bad(DecodeIssue.BAD_EVENT, "empty event array");
        }
        try {
            f.type = string(u, "type tag");
        } catch (FieldException e) {
            skip(u, n - 1);
            return new WireBatch.Bad(DecodeIssue.BAD_EVENT, e.getMessage());
        }
        for (int i = 1; i < n; i++) {
            try {
                switch (f.type) {
                    case "BlockStored" -> storedPosition(u, f, i, size);
                    case "BlockRemoved" -> removedPosition(u, f, i, size);
                    default -> u.skipValue();
                }
            } catch (FieldException e) {
                f.fail(e);
            }
        }
        return f.build();
    }

    /** BlockStored, positional: 1 block_hashes, 2 parent, 3 token_ids, 4 block_size, 5 lora_id, 6 medium,
     * 7 lora_name, 8 extra_keys, 9 and 10 group_idx / kv_cache_spec_kind (told apart by type, as
     * encoders differ on what they put there); later positions are skipped. */
    private static void storedPosition(MessageUnpacker u, WireFields f, int i, int size)
            throws IOException, FieldException {
        switch (i) {
            case 1 -> f.blockHashes = hashes(u, size, "block_hashes");
            case 2 -> parent(u, f, size);
            case 3 -> tokens(u, f, size);
            case 4 -> f.blockSize = blockSize(u);
            case 5 -> f.loraId = optionalLong(u, "lora_id");
            case 6 -> f.medium = optionalString(u, "medium");
            case 7 -> positionSeven(u, f);
            case 8 -> f.extraKeys = ExtraKeys.read(u, f.loraName, size);
            case 9, 10 -> trailing(u, f);
            default -> u.skipValue();
        }
    }

    /**
     * Position 7 of an array BlockStored: vLLM's {@code lora_name} (a string or nil), or SGLang's
     * {@code metadata} map {@code {cache_salt: str}} ({@code BlockStoredWithMetadata} in
     * {@code python/sglang/srt/disaggregation/kv_events.py}), told apart by type as Dynamo's
     * {@code BlockStoredPositionSeven} does.
     */
    private static void positionSeven(MessageUnpacker u, WireFields f) throws IOException, FieldException {
        if (u.getNextFormat().getValueType() != ValueType.MAP) {
            f.loraName = optionalString(u, "lora_name");
            return;
        }
        int n = u.unpackMapHeader();
        for (int i = 0; i < n; i++) {
            if (u.getNextFormat().getValueType() != ValueType.STRING) {
                u.skipValue(2);
            } else if (u.unpackString().equals("cache_salt")) {
                f.cacheSalt = optionalString(u, "metadata.cache_salt");
            } else {
                u.skipValue();
            }
        }
    }

    /** SGLang's {@code component_type} as a vLLM {@code kv_cache_spec_kind} (null stays null). */
    private static String componentKind(String c) {
        if (c == null) {
            return null;
        }
        return switch (c) {
            case "full" -> "full_attention";
            case "swa" -> "sliding_window";
            default -> c;
        };
    }

    /** BlockRemoved, positional: 1 block_hashes, 2 medium, 3 and 4 group_idx / kv_cache_spec_kind. */
    private static void removedPosition(MessageUnpacker u, WireFields f, int i, int size)
            throws IOException, FieldException {
        switch (i) {
            case 1 -> f.blockHashes = hashes(u, size, "block_hashes");
            case 2 -> f.medium = optionalString(u, "medium");
            case 3, 4 -> trailing(u, f);
            default -> u.skipValue();
        }
    }

    /** A trailing positional field: an integer is group_idx, a string kv_cache_spec_kind, anything else skipped. */
    private static void trailing(MessageUnpacker u, WireFields f) throws IOException, FieldException {
        MessageFormat fmt = u.getNextFormat();
        if (fmt.getValueType() == ValueType.INTEGER && f.groupIdx < 0) {
            f.groupIdx = groupIdx(u);
        } else if (fmt.getValueType() == ValueType.STRING && f.specKind == null) {
            f.specKind = u.unpackString();
        } else {
            u.skipValue();
        }
    }

    private static WireBatch.Event readMapEvent(MessageUnpacker u, int size) throws IOException, BatchDecodeException {
        int n = mapHeader(u, size);
        WireFields f = new WireFields();
        for (int i = 0; i < n; i++) {
            if (u.getNextFormat().getValueType() != ValueType.STRING) {
                u.skipValue(2);
                continue;
            }
            String key = u.unpackString();
            try {
                switch (key) {
                    case "type" -> f.type = string(u, "type");
                    case "block_hashes" -> f.blockHashes = hashes(u, size, "block_hashes");
                    case "parent_block_hash" -> parent(u, f, size);
                    case "metadata" -> {
                        if (u.getNextFormat().getValueType() == ValueType.MAP) {
                            positionSeven(u, f);
                        } else {
                            u.skipValue();
                        }
                    }
                    case "token_ids" -> tokens(u, f, size);
                    case "block_size" -> f.blockSize = blockSize(u);
                    case "lora_id" -> f.loraId = optionalLong(u, "lora_id");
                    case "medium" -> f.medium = optionalString(u, "medium");
                    case "lora_name" -> f.loraName = optionalString(u, "lora_name");
                    case "extra_keys" -> f.extraKeys = extraKeysInMap(u, f, size);
                    case "group_idx" -> f.groupIdx = groupIdx(u);
                    case "kv_cache_spec_kind" -> f.specKind = optionalString(u, "kv_cache_spec_kind");
                    case "component_type" -> f.specKind = componentKind(optionalString(u, "component_type"));
                    case "cache_salt" -> f.cacheSalt = optionalString(u, "cache_salt");
                    case "locality" -> f.locality = optionalString(u, "locality");
                    case "mm_keys" -> f.mmKeys = WireExtras.mmKeys(u, size);
                    case "remaining_copy_counts" -> f.remainingCopyCounts = WireExtras.copyCounts(u, size);
                    // SGLang #37482: the request's session; read past, as the block is the same for every session
                    case "session_id" -> u.skipValue();
                    default -> u.skipValue();
                }
            } catch (FieldException e) {
                f.fail(e);
            }
        }
        return f.build();
    }

    // ------------------------------------------------------------------ typed fields

    private static String string(MessageUnpacker u, String what) throws IOException, FieldException {
        if (u.getNextFormat().getValueType() != ValueType.STRING) {
            throw wrongType(u, what, "a string");
        }
        return u.unpackString();
    }

    private static String optionalString(MessageUnpacker u, String what) throws IOException, FieldException {
        return u.tryUnpackNil() ? null : string(u, what);
    }

    private static long optionalLong(MessageUnpacker u, String what) throws IOException, FieldException {
        if (u.tryUnpackNil()) {
            return 0;
        }
        MessageFormat f = u.getNextFormat();
        if (f.getValueType() != ValueType.INTEGER) {
            throw wrongType(u, what, "an integer");
        }
        return f == MessageFormat.UINT64 ? u.unpackBigInteger().longValue() : u.unpackLong();
    }

    private static int groupIdx(MessageUnpacker u) throws IOException, FieldException {
        if (u.tryUnpackNil()) {
            return -1;
        }
        long g = optionalLong(u, "group_idx");
        if (g < 0 || g > Integer.MAX_VALUE) {
            throw new FieldException(DecodeIssue.BAD_EVENT, "group_idx " + g + " is out of range");
        }
        return (int) g;
    }

    private static int blockSize(MessageUnpacker u) throws IOException, FieldException {
        MessageFormat f = u.getNextFormat();
        if (f.getValueType() != ValueType.INTEGER) {
            throw wrongType(u, "block_size", "an integer");
        }
        if (f == MessageFormat.UINT64) {
            u.skipValue();
            throw new FieldException(DecodeIssue.BAD_EVENT, "block_size is out of range");
        }
        long b = u.unpackLong();
        if (b < 0 || b > Integer.MAX_VALUE) { // 0: vLLM's placeholder stores of an offloading tier
            throw new FieldException(DecodeIssue.BAD_EVENT, "block_size " + b + " is outside 0.." + Integer.MAX_VALUE);
        }
        return (int) b;
    }

    private static void parent(MessageUnpacker u, WireFields f, int size) throws IOException, FieldException {
        if (u.tryUnpackNil()) {
            f.hasParent = false;
            return;
        }
        f.parent = hash(u, "parent_block_hash", size);
        f.hasParent = true;
    }

    /** One engine hash: a signed or unsigned 64-bit integer, or bytes (their last 8, big-endian). */
    private static long hash(MessageUnpacker u, String what, int size) throws IOException, FieldException {
        MessageFormat f = u.getNextFormat();
        switch (f.getValueType()) {
            case INTEGER -> {
                return f == MessageFormat.UINT64 ? u.unpackBigInteger().longValue() : u.unpackLong();
            }
            case BINARY -> {
                byte[] b = u.readPayload(binaryHeaderInEvent(u, size));
                long v = 0;
                for (int i = Math.max(0, b.length - 8); i < b.length; i++) {
                    v = (v << 8) | (b[i] & 0xFF);
                }
                return v;
            }
            default -> throw wrongType(u, what, "an integer");
        }
    }

    private static long[] hashes(MessageUnpacker u, int size, String what) throws IOException, FieldException {
        if (u.getNextFormat().getValueType() != ValueType.ARRAY) {
            throw wrongType(u, what, "an array");
        }
        int n = arrayHeaderInEvent(u, size);
        long[] out = new long[n];
        for (int i = 0; i < n; i++) {
            try {
                out[i] = hash(u, what + "[" + i + "]", size);
            } catch (FieldException e) {
                u.skipValue(n - i - 1);
                throw e;
            }
        }
        return out;
    }

    /** token_ids: unsigned 32-bit integers, or (token, next token) pairs (Eagle), of which the first counts. */
    private static void tokens(MessageUnpacker u, WireFields f, int size) throws IOException, FieldException {
        if (u.getNextFormat().getValueType() != ValueType.ARRAY) {
            throw wrongType(u, "token_ids", "an array");
        }
        int n = arrayHeaderInEvent(u, size);
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            try {
                if (u.getNextFormat().getValueType() == ValueType.ARRAY) {
                    int k = arrayHeaderInEvent(u, size);
                    if (k != 2) {
                        u.skipValue(k);
                        throw new FieldException(
                                DecodeIssue.BAD_EVENT,
                                "token_ids[" + i + "] is an array of " + k + ", expected a pair");
                    }
                    out[i] = token(u, i);
                    token(u, i);
                    f.bigram = true;
                } else {
                    out[i] = token(u, i);
                }
            } catch (FieldException e) {
                u.skipValue(n - i - 1);
                throw e;
            }
        }
        f.tokenIds = out;
    }

    private static int token(MessageUnpacker u, int i) throws IOException, FieldException {
        MessageFormat f = u.getNextFormat();
        if (f.getValueType() != ValueType.INTEGER) {
            throw wrongType(u, "token_ids[" + i + "]", "an integer");
        }
        if (f == MessageFormat.UINT64) {
            u.skipValue();
            throw new FieldException(DecodeIssue.BAD_EVENT, "token_ids[" + i + "] is outside 0..4294967295");
        }
        long t = u.unpackLong();
        if (t < 0 || t > 0xFFFF_FFFFL) {
            throw new FieldException(
                    DecodeIssue.BAD_EVENT, "token_ids[" + i + "] = " + t + " is outside 0..4294967295");
        }
        return (int) t;
    }

    /**
     * extra_keys in a map event, whose key order is free: read with the LoRA name known so far; the
     * decoder drops unrecognised strings equal to a LoRA name that came later.
     */
    private static ExtraKeys extraKeysInMap(MessageUnpacker u, WireFields f, int size)
            throws IOException, FieldException {
        return ExtraKeys.read(u, f.loraName, size);
    }

    static FieldException wrongType(MessageUnpacker u, String what, String expected) throws IOException {
        ValueType t = u.getNextFormat().getValueType();
        u.skipValue();
        return new FieldException(
                DecodeIssue.BAD_EVENT, what + " is a " + t.name().toLowerCase() + ", expected " + expected);
    }

    // ------------------------------------------------------------------ containers

    /** An array header whose element count fits in the bytes left (each element takes at least one). */
    private static int arrayHeader(MessageUnpacker u, int size) throws IOException, BatchDecodeException {
        int n = u.unpackArrayHeader();
        checkCount(u, size, n, 1);
        return n;
    }

    private static int mapHeader(MessageUnpacker u, int size) throws IOException, BatchDecodeException {
        int n = u.unpackMapHeader();
        checkCount(u, size, n, 2);
        return n;
    }

    static int arrayHeaderInEvent(MessageUnpacker u, int size) throws IOException, FieldException {
        int n = u.unpackArrayHeader();
        long left = size - u.getTotalReadBytes();
        if (n < 0 || n > left) {
            // the stream cannot be resynchronized after a lying header: the batch is garbage
            throw new Corrupt(
                    "an array header claims " + Integer.toUnsignedString(n) + " elements with " + left + " bytes left");
        }
        return n;
    }

    /** A byte string's header whose length fits in the bytes left, as {@link #arrayHeaderInEvent} holds counts. */
    private static int binaryHeaderInEvent(MessageUnpacker u, int size) throws IOException {
        int n = u.unpackBinaryHeader();
        long left = size - u.getTotalReadBytes();
        if (n > left) { // refused before msgpack sizes an array from it: the batch is garbage
            throw new Corrupt("a byte string claims " + n + " bytes with " + left + " bytes left");
        }
        return n;
    }

    private static void checkCount(MessageUnpacker u, int size, int n, int bytesPerElement)
            throws BatchDecodeException {
        long left = size - u.getTotalReadBytes();
        if (n < 0 || (long) n * bytesPerElement > left) {
            throw new BatchDecodeException(
                    DecodeIssue.BAD_MSGPACK,
                    "a header claims " + Integer.toUnsignedString(n) + " elements with " + left + " bytes left");
        }
    }

    static void skip(MessageUnpacker u, int n) throws IOException {
        if (n > 0) {
            u.skipValue(n);
        }
    }
}
