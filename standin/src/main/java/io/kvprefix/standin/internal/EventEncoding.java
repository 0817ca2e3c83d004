package io.kvprefix.standin.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.util.List;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePacker;

/**
 * The msgpack payload of one KV-event batch, in either encoding vLLM has used (the package comment
 * names the source): {@link #MAP}, msgspec structs without {@code array_like} since vLLM PR #42892
 * ({@code {"ts", "events", "data_parallel_rank"}}, each event a map tagged by {@code "type"}, fields
 * without a default always present, fields equal to their default left out), and {@link #ARRAY}, the
 * {@code array_like} structs before it ({@code [ts, [events], dp_rank]}, each event
 * {@code [tag, field, ...]} in declaration order, trailing defaults left out). Block hashes are
 * integers, as vLLM sends them with {@code VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES} (the last 8 bytes of
 * its hash, unsigned: msgspec writes one of 2^63 and above as a msgpack uint64).
 *
 * <p>Thread-safety: stateless; {@link #encode} may be called from any thread.
 */
public enum EventEncoding {
    /** Tagged maps (vLLM since PR #42892, the default). */
    MAP,
    /** Tagged arrays (vLLM before PR #42892). */
    ARRAY;

    private static final String GPU = "GPU";

    /** The name a command line uses: {@code map} or {@code array}. */
    public String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    /** The encoding named {@code name} ({@code map} or {@code array}), or null. */
    public static EventEncoding named(String name) {
        for (EventEncoding e : values()) {
            if (e.wireName().equals(name)) {
                return e;
            }
        }
        return null;
    }

    /** The payload of one batch published at {@code ts} (seconds since the epoch) by data-parallel rank {@code dpRank}. */
    public byte[] encode(double ts, List<WireEvent> events, int dpRank) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            if (this == MAP) {
                p.packMapHeader(3);
                p.packString("ts").packDouble(ts);
                p.packString("events").packArrayHeader(events.size());
                for (WireEvent e : events) {
                    packMap(p, e);
                }
                p.packString("data_parallel_rank").packInt(dpRank);
            } else {
                p.packArrayHeader(3);
                p.packDouble(ts);
                p.packArrayHeader(events.size());
                for (WireEvent e : events) {
                    packArray(p, e);
                }
                p.packInt(dpRank);
            }
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a buffer packer does no I/O
        }
    }

    private static void packMap(MessagePacker p, WireEvent e) throws IOException {
        switch (e) {
            case WireEvent.Stored s -> {
                // BlockStored's fields in declaration order; lora_id, medium and lora_name have no default,
                // so they are always written; extra_keys, group_idx and kv_cache_spec_kind as vLLM 0.26 fills them
                p.packMapHeader(11);
                p.packString("type").packString("BlockStored");
                p.packString("block_hashes");
                packHashes(p, s.hashes());
                p.packString("parent_block_hash");
                if (s.hasParent()) {
                    packHash(p, s.parent());
                } else {
                    p.packNil();
                }
                p.packString("token_ids");
                packTokens(p, s.tokens());
                p.packString("block_size").packInt(s.blockSize());
                p.packString("lora_id").packNil();
                p.packString("medium").packString(GPU);
                p.packString("lora_name").packNil();
                p.packString("extra_keys").packArrayHeader(s.hashes().length);
                for (int i = 0; i < s.hashes().length; i++) {
                    p.packNil();
                }
                p.packString("group_idx").packInt(0);
                p.packString("kv_cache_spec_kind").packString("full_attention");
            }
            case WireEvent.Removed r -> {
                p.packMapHeader(4);
                p.packString("type").packString("BlockRemoved");
                p.packString("block_hashes");
                packHashes(p, r.hashes());
                p.packString("medium").packString(GPU);
                p.packString("group_idx").packInt(0);
            }
            case WireEvent.Cleared c -> {
                p.packMapHeader(1);
                p.packString("type").packString("AllBlocksCleared");
            }
        }
    }

    private static void packArray(MessagePacker p, WireEvent e) throws IOException {
        switch (e) {
            case WireEvent.Stored s -> {
                // [tag, block_hashes, parent_block_hash, token_ids, block_size, lora_id, medium, lora_name]
                p.packArrayHeader(8);
                p.packString("BlockStored");
                packHashes(p, s.hashes());
                if (s.hasParent()) {
                    packHash(p, s.parent());
                } else {
                    p.packNil();
                }
                packTokens(p, s.tokens());
                p.packInt(s.blockSize());
                p.packNil();
                p.packString(GPU);
                p.packNil();
            }
            case WireEvent.Removed r -> {
                p.packArrayHeader(3);
                p.packString("BlockRemoved");
                packHashes(p, r.hashes());
                p.packString(GPU);
            }
            case WireEvent.Cleared c -> {
                p.packArrayHeader(1);
                p.packString("AllBlocksCleared");
            }
        }
    }

    private static void packHashes(MessagePacker p, long[] hashes) throws IOException {
        p.packArrayHeader(hashes.length);
        for (long h : hashes) {
            packHash(p, h);
        }
    }

    /** An unsigned 64-bit hash: a positive fixint/uint as msgspec writes a Python int. */
    private static void packHash(MessagePacker p, long h) throws IOException {
        if (h >= 0) {
            p.packLong(h);
        } else {
            p.packBigInteger(new BigInteger(Long.toUnsignedString(h)));
        }
    }

    private static void packTokens(MessagePacker p, int[] tokens) throws IOException {
        p.packArrayHeader(tokens.length);
        for (int t : tokens) {
            p.packInt(t);
        }
    }
}
