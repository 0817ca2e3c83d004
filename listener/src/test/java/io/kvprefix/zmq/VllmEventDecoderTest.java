package io.kvprefix.zmq;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kvprefix.BlockHasher;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.testing.TestScale;
import io.kvprefix.testing.ThreadAllocation;
import io.kvprefix.zmq.internal.ExtraKeys;
import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/** {@link VllmEventDecoder} on payloads built here, in both encodings vLLM has used, and on garbage. */
class VllmEventDecoderTest {
    private static final EngineEndpoint ENGINE = EngineEndpoint.of("tcp://127.0.0.1:5557", 7);
    private static final Object NIL = null;

    // ------------------------------------------------------------------ building payloads

    /** Packs nested Java values: List -> array, Map -> map, String, Long/Integer, BigInteger (uint64), Double, byte[], null. */
    static byte[] pack(Object value) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            write(p, value);
            p.flush();
            return p.toByteArray();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private static void write(MessageBufferPacker p, Object v) throws IOException {
        switch (v) {
            case null -> p.packNil();
            case List<?> l -> {
                p.packArrayHeader(l.size());
                for (Object o : l) {
                    write(p, o);
                }
            }
            case Map<?, ?> m -> {
                p.packMapHeader(m.size());
                for (var e : m.entrySet()) {
                    write(p, e.getKey());
                    write(p, e.getValue());
                }
            }
            case String s -> p.packString(s);
            case Integer i -> p.packLong(i);
            case Long l -> p.packLong(l);
            case BigInteger b -> p.packBigInteger(b);
            case Double d -> p.packDouble(d);
            case Float f -> p.packFloat(f);
            case Boolean b -> p.packBoolean(b);
            case byte[] b -> {
                p.packBinaryHeader(b.length);
                p.writePayload(b);
            }
            default -> throw new IllegalArgumentException("cannot pack " + v.getClass());
        }
    }

    static List<Object> list(Object... xs) {
        return new ArrayList<>(Arrays.asList(xs));
    }

    static Map<String, Object> map(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    static DecodedBatch decode(Object batch) throws BatchDecodeException {
        return new VllmEventDecoder(ENGINE).decode(pack(batch));
    }

    static List<DecodeIssue> issues(DecodedBatch b) {
        return b.issues().stream().map(DecodedBatch.Issue::issue).toList();
    }

    static final BigInteger U64_MAX = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);

    // ------------------------------------------------------------------ the two encodings

    @Test
    void arrayEncodingWithEveryField() throws Exception {
        var b = decode(list(
                1.7e9,
                list(
                        list(
                                "BlockStored",
                                list(11L, 12L),
                                10L,
                                list(1, 2, 3, 4, 5, 6, 7, 8, 9),
                                4,
                                NIL,
                                "GPU",
                                "adapter-a",
                                NIL,
                                0,
                                "full_attention",
                                NIL),
                        list("BlockRemoved", list(11L), "GPU", 0),
                        list("AllBlocksCleared")),
                2));
        assertEquals(1.7e9, b.timestamp());
        assertEquals(OptionalInt.of(2), b.batchRank());
        assertEquals(Worker.of(7, 2), b.worker());
        assertEquals(List.of(), b.issues());
        assertEquals(
                List.of(
                        new KvEvent.StoredTokens(
                                Worker.of(7, 2),
                                OptionalLong.of(10),
                                new int[] {1, 2, 3, 4, 5, 6, 7, 8, 9},
                                4,
                                new long[] {11, 12},
                                "adapter-a",
                                null),
                        new KvEvent.Removed(Worker.of(7, 2), new long[] {11}),
                        new KvEvent.Cleared(Worker.of(7, 2))),
                b.events());
    }

    @Test
    void mapEncodingInAnyOrderWithDefaultsLeftOut() throws Exception {
        var b = decode(map(
                "events",
                list(
                        map("block_hashes", list(21L), "token_ids", list(5, 6), "block_size", 2, "type", "BlockStored"),
                        map("type", "BlockRemoved", "block_hashes", list(21L)),
                        map("type", "AllBlocksCleared")),
                "ts",
                12.5,
                "data_parallel_rank",
                1));
        assertEquals(
                List.of(
                        new KvEvent.StoredTokens(
                                Worker.of(7, 1),
                                OptionalLong.empty(),
                                new int[] {5, 6},
                                2,
                                new long[] {21},
                                null,
                                null),
                        new KvEvent.Removed(Worker.of(7, 1), new long[] {21}),
                        new KvEvent.Cleared(Worker.of(7, 1))),
                b.events());
        assertEquals(List.of(), b.issues());
    }

    @Test
    void bothEncodingsGiveTheSameEvents() throws Exception {
        var array = decode(list(
                1.0,
                list(
                        list("BlockStored", list(31L, 32L), NIL, list(9, 8, 7, 6), 2, 3, NIL, "l"),
                        list("BlockRemoved", list(31L), NIL)),
                0));
        var maps = decode(list(
                1.0,
                list(
                        map(
                                "type",
                                "BlockStored",
                                "block_hashes",
                                list(31L, 32L),
                                "parent_block_hash",
                                NIL,
                                "token_ids",
                                list(9, 8, 7, 6),
                                "block_size",
                                2,
                                "lora_id",
                                3,
                                "medium",
                                NIL,
                                "lora_name",
                                "l"),
                        map("type", "BlockRemoved", "block_hashes", list(31L), "medium", NIL)),
                0));
        assertEquals(array.events(), maps.events());
    }

    @Test
    void signedAndUnsignedHashesAreTheSameBits() throws Exception {
        var signed = decode(list(
                0.0,
                list(
                        list("BlockStored", list(-5L, Long.MIN_VALUE), -1L, list(1, 2), 1, NIL, NIL),
                        list("BlockRemoved", list(-5L), NIL))));
        var unsigned = decode(list(
                0.0,
                list(
                        list(
                                "BlockStored",
                                list(U64_MAX.subtract(BigInteger.valueOf(4)), BigInteger.ONE.shiftLeft(63)),
                                U64_MAX,
                                list(1, 2),
                                1,
                                NIL,
                                NIL),
                        list("BlockRemoved", list(U64_MAX.subtract(BigInteger.valueOf(4))), NIL))));
        assertEquals(signed.events(), unsigned.events());
        var s = (KvEvent.StoredTokens) unsigned.events().get(0);
        assertArrayEquals(new long[] {-5L, Long.MIN_VALUE}, s.blockHashes());
        assertEquals(OptionalLong.of(-1L), s.parentHash());
    }

    @Test
    void byteHashesAreTheirLastEightBytesBigEndian() throws Exception {
        byte[] sha = new byte[32];
        for (int i = 0; i < 32; i++) {
            sha[i] = (byte) (i + 1);
        }
        var b = decode(list(0.0, list(list("BlockStored", list(sha), new byte[] {1, 2}, list(1), 1, NIL, NIL))));
        var s = (KvEvent.StoredTokens) b.events().get(0);
        assertArrayEquals(new long[] {0x191a1b1c1d1e1f20L}, s.blockHashes());
        assertEquals(OptionalLong.of(0x0102L), s.parentHash());
    }

    @Test
    void missingTrailingFieldsOfOlderVersions() throws Exception {
        // vLLM before lora_name (7 fields), before medium (6), and a batch without a dp rank
        var b = decode(list(
                3.0,
                list(
                        list("BlockStored", list(1L), NIL, list(4, 4), 2, NIL, NIL),
                        list("BlockStored", list(2L), 1L, list(5, 5), 2, NIL),
                        list("BlockRemoved", list(1L)))));
        assertEquals(OptionalInt.empty(), b.batchRank());
        assertEquals(Worker.of(7, 0), b.worker());
        assertEquals(3, b.events().size());
        assertEquals(List.of(), b.issues());
    }

    @Test
    void unknownExtraFieldsAreSkipped() throws Exception {
        var b = decode(map(
                "ts",
                1.0,
                "future_batch_field",
                map("a", list(1, 2)),
                "events",
                list(
                        list(
                                "BlockStored",
                                list(1L),
                                NIL,
                                list(4, 4),
                                2,
                                NIL,
                                NIL,
                                NIL,
                                NIL,
                                0,
                                "full_attention",
                                4096,
                                "future",
                                map("x", 1),
                                list(1, 2, 3)),
                        map(
                                "type",
                                "BlockStored",
                                "block_hashes",
                                list(2L),
                                "token_ids",
                                list(5, 5),
                                "block_size",
                                2,
                                "future_field",
                                list(map("deep", list(NIL))),
                                "kv_cache_spec_sliding_window",
                                NIL),
                        list("BlockRemoved", list(1L), NIL, 0, "full_attention", "more", 9),
                        list("AllBlocksCleared", "some", "future", "fields")),
                "dp_rank",
                0,
                "x",
                true));
        assertEquals(4, b.events().size(), b.issues().toString());
        assertEquals(List.of(), b.issues());
        // a batch array with more than three elements
        assertEquals(
                1,
                decode(list(1.0, list(list("AllBlocksCleared")), 0, "future"))
                        .events()
                        .size());
    }

    // ------------------------------------------------------------------ what is ignored, and notes

    @Test
    void eventsOnLowerTiersAreAppliedToThemAndUnknownMediaIgnored() throws Exception {
        var b = decode(list(
                0.0,
                list(
                        list("BlockStored", list(1L), NIL, list(4), 1, NIL, "CPU"),
                        list("BlockStored", list(2L), NIL, list(4), 1, NIL, "gpu"),
                        list("BlockStored", list(3L), NIL, list(4), 1, NIL, "DEVICE"),
                        list("BlockRemoved", list(1L), "STORAGE"),
                        list("BlockRemoved", list(2L), "GPU"),
                        list("BlockStored", list(9L), NIL, list(4), 1, NIL, "EXTERNAL"))));
        assertEquals(5, b.events().size());
        assertEquals(io.kvprefix.Medium.CPU, ((KvEvent.StoredTokens) b.events().get(0)).medium());
        assertEquals(io.kvprefix.Medium.GPU, ((KvEvent.StoredTokens) b.events().get(1)).medium());
        assertEquals(io.kvprefix.Medium.DISK, ((KvEvent.Removed) b.events().get(3)).medium());
        assertEquals(List.of(DecodeIssue.TIER_CPU, DecodeIssue.TIER_DISK, DecodeIssue.NON_DEVICE_MEDIUM), issues(b));
        // block_size 0 with tokens, or on the GPU, is malformed
        var bad = decode(list(0.0, list(list("BlockStored", list(1L), NIL, list(), 0, NIL, "GPU"))));
        assertEquals(List.of(DecodeIssue.BAD_EVENT), issues(bad));
    }

    @Test
    void groupsThatAreNotFullAttentionAreIgnoredAndTheirKindIsRemembered() throws Exception {
        VllmEventDecoder d = new VllmEventDecoder(ENGINE);
        var first = d.decode(pack(list(
                0.0,
                list(
                        map(
                                "type",
                                "BlockStored",
                                "block_hashes",
                                list(1L),
                                "token_ids",
                                list(4),
                                "block_size",
                                1,
                                "group_idx",
                                1,
                                "kv_cache_spec_kind",
                                "sliding_window"),
                        map(
                                "type",
                                "BlockStored",
                                "block_hashes",
                                list(2L),
                                "token_ids",
                                list(4),
                                "block_size",
                                1,
                                "group_idx",
                                3,
                                "kv_cache_spec_kind",
                                "mla_attention"),
                        list("BlockStored", list(5L), NIL, list(4), 1, NIL, NIL, NIL, NIL, 0, "mamba")))));
        assertEquals(1, first.events().size());
        assertEquals(
                List.of(DecodeIssue.NON_FULL_ATTENTION_GROUP, DecodeIssue.NON_FULL_ATTENTION_GROUP), issues(first));

        // removals carry only their group: judged by the kind learned from the stores
        var removals = d.decode(pack(list(
                0.0,
                list(
                        map(
                                "type",
                                "BlockRemoved",
                                "block_hashes",
                                list(1L),
                                "group_idx",
                                1), // sliding window: ignored
                        map("type", "BlockRemoved", "block_hashes", list(2L), "group_idx", 3), // mla: applied
                        list("BlockRemoved", list(3L), NIL, 2), // unknown group, not 0: ignored
                        list("BlockRemoved", list(4L), NIL, 0), // group 0 (mamba): ignored
                        list("BlockRemoved", list(9L), NIL))))); // no group: group 0 -> ignored too
        assertEquals(List.of(new KvEvent.Removed(Worker.of(7, 0), new long[] {2})), removals.events());

        // a fresh decoder knows nothing: group 0 and no group count as full attention
        var fresh = new VllmEventDecoder(ENGINE)
                .decode(pack(list(
                        0.0,
                        list(
                                list("BlockRemoved", list(3L), NIL, 0),
                                list("BlockRemoved", list(4L), NIL),
                                list("BlockRemoved", list(5L), NIL, 1)))));
        assertEquals(2, fresh.events().size());
    }

    @Test
    void loraNameSaltsAndLoraIdAloneIsNoted() throws Exception {
        var b = decode(list(
                0.0,
                list(
                        list("BlockStored", list(1L), NIL, list(4), 1, 5, NIL, "adapter-b"),
                        list("BlockStored", list(2L), NIL, list(4), 1, 5, NIL, NIL),
                        list("BlockStored", list(3L), NIL, list(4), 1, NIL, NIL, ""))));
        assertEquals("adapter-b", ((KvEvent.StoredTokens) b.events().get(0)).loraName());
        assertNull(((KvEvent.StoredTokens) b.events().get(1)).loraName());
        assertNull(((KvEvent.StoredTokens) b.events().get(2)).loraName(), "an empty name counts as absent");
        assertEquals(List.of(DecodeIssue.LORA_ID_WITHOUT_NAME), issues(b));
    }

    /**
     * extra_keys as vLLM's {@code generate_block_hash_extra_keys} publishes them
     * ({@code vllm/v1/core/kv_cache_utils.py}, fork local-inference-lab/vllm @
     * {@code 00c463493591031d1d90be73994cf5f92c6e350e}): one entry per block, nil or a tuple of the LoRA
     * name, then {@code (identifier, offset)} per multimodal item (vLLM 0.19+), then the cache salt
     * (first block only). Mapped to {@code mm_hash}es as Dynamo's {@code extra_keys.rs} @
     * {@code 035d7262edb1b407b2c9de5116b47321b08c751a} does.
     */
    @Test
    void extraKeysGiveEachBlockItsMultimodalHashes() throws Exception {
        String digest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
        var b = decode(list(
                0.0,
                list(
                        list(
                                "BlockStored",
                                list(1L, 2L, 3L),
                                NIL,
                                list(4, 5, 6, 7, 8, 9),
                                2,
                                NIL,
                                "GPU",
                                "adapter-a",
                                list(
                                        list("adapter-a", "dynamo-cache-salt:tenant-7"),
                                        list("adapter-a", list(digest, -1), list("img-uuid-1", 1)),
                                        NIL)),
                        // older vLLM: a bare 64-digit identifier; a bare non-hex string is vLLM's cache_salt
                        list("BlockStored", list(4L), NIL, list(6, 7), 2, NIL, NIL, NIL, list(list(digest, "salt-x"))),
                        // a list that does not match the blocks: hashed as text, noted
                        list("BlockStored", list(5L), NIL, list(6, 7), 2, NIL, NIL, NIL, list(NIL, list(digest))))));
        var s0 = (KvEvent.StoredTokens) b.events().get(0);
        assertEquals("adapter-a", s0.loraName());
        assertEquals("tenant-7", s0.cacheNamespace(), "Dynamo's tagged namespace");
        assertNull(s0.mmHashes()[0]);
        // first 16 hex digits of the digest (11495104353665842533), and XXH3("img-uuid-1", 0) from python3-xxhash
        assertArrayEquals(
                new long[] {
                    Long.parseUnsignedLong("11495104353665842533"), Long.parseUnsignedLong("3788073751864370716")
                },
                s0.mmHashes()[1]);
        assertNull(s0.mmHashes()[2]);
        var s1 = (KvEvent.StoredTokens) b.events().get(1);
        assertArrayEquals(new long[] {Long.parseUnsignedLong("11495104353665842533")}, s1.mmHashes()[0]);
        assertNull(s1.cacheNamespace(), "a bare cache_salt is not Dynamo's namespace");
        assertNull(((KvEvent.StoredTokens) b.events().get(2)).mmHashes());
        assertEquals(
                List.of(DecodeIssue.MULTIMODAL, DecodeIssue.MULTIMODAL, DecodeIssue.EXTRA_KEYS, DecodeIssue.EXTRA_KEYS),
                issues(b));
        // the decoded store matches a request carrying the same item spans, and only such a request
        try (PrefixIndex index =
                PrefixIndex.create(IndexConfig.builder().blockSize(2).build())) {
            for (KvEvent e : b.events()) {
                index.apply(e);
            }
            BlockHasher h = BlockHasher.builder()
                    .blockSize(2)
                    .loraName("adapter-a")
                    .cacheNamespace("tenant-7")
                    .build();
            int[] prompt = {4, 5, 6, 7, 8, 9};
            List<BlockHasher.MmSpan> items = List.of(
                    new BlockHasher.MmSpan(2, 4, Long.parseUnsignedLong("11495104353665842533")),
                    new BlockHasher.MmSpan(3, 4, ExtraKeys.mmHash("img-uuid-1")));
            MatchResult r = new MatchResult();
            index.match(prompt, 0, 6, h, items, r);
            assertEquals(3, r.depthOf(Worker.of(7)));
            index.match(prompt, 0, 6, h, List.of(), r);
            assertEquals(1, r.depthOf(Worker.of(7)), "without its items the request stops at the image");
        }
    }

    @Test
    void bigramTokenPairsUseTheFirstOfEachPair() throws Exception {
        var b = decode(list(
                0.0,
                list(list(
                        "BlockStored",
                        list(11L, 12L),
                        NIL,
                        list(list(10, 11), list(11, 12), list(12, 13), list(13, 14)),
                        2,
                        NIL,
                        NIL,
                        NIL))));
        assertArrayEquals(
                new int[] {10, 11, 12, 13}, ((KvEvent.StoredTokens) b.events().get(0)).tokenIds());
        assertEquals(List.of(DecodeIssue.BIGRAM_TOKENS), issues(b));
    }

    @Test
    void configuredRankWinsOverTheBatchRank() throws Exception {
        VllmEventDecoder pinned = new VllmEventDecoder(ENGINE.withDpRank(3));
        var b = pinned.decode(pack(list(0.0, list(list("AllBlocksCleared")), 1)));
        assertEquals(Worker.of(7, 3), b.worker());
        assertEquals(List.of(new KvEvent.Cleared(Worker.of(7, 3))), b.events());
        assertEquals(List.of(DecodeIssue.DP_RANK_OVERRIDDEN), issues(b));
        assertEquals(List.of(), issues(pinned.decode(pack(list(0.0, list(), 3)))));
        assertEquals(List.of(), issues(pinned.decode(pack(list(0.0, list())))));
        assertEquals(Worker.of(7, 3), pinned.decode(pack(list(0.0, list()))).worker());
    }

    // ------------------------------------------------------------------ malformed input

    @Test
    void badEventsAreSkippedAndTheRestOfTheBatchIsRead() throws Exception {
        var b = decode(list(
                0.0,
                list(
                        list(
                                "BlockStored",
                                list(1L, "x", 3L),
                                NIL,
                                list(1, 2, 3),
                                1,
                                NIL,
                                NIL), // a hash that is a string
                        list("BlockStored", list(4L), NIL, list(4294967296L), 1, NIL, NIL), // token > u32
                        list("BlockStored", list(5L), NIL, list(-1), 1, NIL, NIL), // negative token
                        list("BlockStored", list(6L), NIL, list(1), 0, NIL, NIL), // block size 0
                        list("BlockStored", list(7L, 8L), NIL, list(1, 2, 3), 2, NIL, NIL), // 1 full block, 2 hashes
                        list("BlockStored", list(9L), NIL), // no token_ids
                        map("block_hashes", list(1L)), // no type
                        list("BlockTeleported", list(1L)), // unknown type
                        list(), // empty
                        list(42, 1, 2), // tag not a string
                        17, // not an event
                        map("type", "BlockRemoved", "block_hashes", "nope"),
                        list("BlockStored", list(1L), NIL, list(1, 2), 1, NIL, 5), // medium not a string
                        list("BlockStored", list(10L), NIL, list(8), 1, NIL, NIL)))); // fine
        assertEquals(
                List.of(new KvEvent.StoredTokens(
                        Worker.of(7, 0), OptionalLong.empty(), new int[] {8}, 1, new long[] {10}, null, null)),
                b.events());
        assertEquals(
                List.of(
                        DecodeIssue.BAD_EVENT,
                        DecodeIssue.BAD_EVENT,
                        DecodeIssue.BAD_EVENT,
                        DecodeIssue.BAD_EVENT,
                        DecodeIssue.HASH_COUNT_MISMATCH,
                        DecodeIssue.BAD_EVENT,
                        DecodeIssue.BAD_EVENT,
                        DecodeIssue.UNKNOWN_EVENT_TYPE,
                        DecodeIssue.BAD_EVENT,
                        DecodeIssue.BAD_EVENT,
                        DecodeIssue.BAD_EVENT,
                        DecodeIssue.BAD_EVENT,
                        DecodeIssue.BAD_EVENT),
                issues(b));
        assertTrue(
                b.issues().get(0).detail().contains("block_hashes[1] is a string"),
                b.issues().get(0).detail());
    }

    @Test
    void garbagePayloadsAreDecodeErrors() {
        record Case(DecodeIssue issue, byte[] payload) {}
        byte[] valid = pack(list(1.0, list(list("AllBlocksCleared")), 0));
        for (Case c : List.of(
                new Case(DecodeIssue.BAD_MSGPACK, new byte[0]),
                new Case(DecodeIssue.BAD_MSGPACK, new byte[] {(byte) 0xc1}), // reserved byte
                new Case(DecodeIssue.BAD_MSGPACK, Arrays.copyOf(valid, valid.length - 3)), // truncated
                new Case(DecodeIssue.BAD_MSGPACK, concat(valid, new byte[] {0})), // trailing bytes
                new Case(
                        DecodeIssue.BAD_MSGPACK,
                        new byte[] {(byte) 0xdd, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff}), // array of 2^31-1
                new Case(DecodeIssue.BAD_MSGPACK, lyingTokenHeader()),
                new Case(DecodeIssue.BAD_BATCH, pack("hello")),
                new Case(DecodeIssue.BAD_BATCH, pack(list(1.0))),
                new Case(DecodeIssue.BAD_BATCH, pack(list("ts", list()))),
                new Case(DecodeIssue.BAD_BATCH, pack(list(1.0, "events"))),
                new Case(DecodeIssue.BAD_BATCH, pack(list(1.0, list(), -1))),
                new Case(DecodeIssue.BAD_BATCH, pack(list(1.0, list(), "0"))),
                new Case(DecodeIssue.BAD_BATCH, pack(map("ts", 1.0))),
                new Case(DecodeIssue.BAD_BATCH, pack(map("events", list()))))) {
            BatchDecodeException e = assertThrows(
                    BatchDecodeException.class,
                    () -> new VllmEventDecoder(ENGINE).decode(c.payload()),
                    () -> Arrays.toString(c.payload()));
            assertEquals(c.issue(), e.issue(), e.getMessage());
        }
    }

    /** A token_ids array header claiming far more elements than the payload holds. */
    private static byte[] lyingTokenHeader() {
        byte[] ok = pack(list(1.0, list(list("BlockStored", list(1L), NIL, list(1), 1))));
        // the token list [1] is packed as 0x91 0x01; make it an array32 of 2^30 elements
        for (int i = 0; i < ok.length - 1; i++) {
            if (ok[i] == (byte) 0x91 && ok[i + 1] == 0x01 && i > 0 && ok[i - 1] == (byte) 0xc0) {
                byte[] out = new byte[ok.length + 4];
                System.arraycopy(ok, 0, out, 0, i);
                out[i] = (byte) 0xdd;
                out[i + 1] = 0x40;
                System.arraycopy(ok, i + 1, out, i + 5, ok.length - i - 1);
                return out;
            }
        }
        throw new AssertionError("token list not found in " + Arrays.toString(ok));
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** Random mutations of valid payloads: either a batch (maybe with issues) or a BatchDecodeException, never anything else. */
    @Test
    void mutatedPayloadsNeverThrowAnythingElse() {
        long seed = TestScale.seed();
        SplittableRandom rnd = new SplittableRandom(seed);
        List<byte[]> seeds = List.of(
                pack(list(
                        1.7e9,
                        list(
                                list(
                                        "BlockStored",
                                        list(11L, -12L),
                                        10L,
                                        list(1, 2, 3, 4),
                                        2,
                                        NIL,
                                        "GPU",
                                        "a",
                                        list(NIL, NIL),
                                        0,
                                        "full_attention"),
                                list("BlockRemoved", list(11L), NIL, 1),
                                list("AllBlocksCleared")),
                        2)),
                pack(map(
                        "ts",
                        1.0,
                        "events",
                        list(map(
                                "type",
                                "BlockStored",
                                "block_hashes",
                                list(U64_MAX),
                                "token_ids",
                                list(list(1, 2), list(2, 3)),
                                "block_size",
                                1,
                                "group_idx",
                                0)),
                        "data_parallel_rank",
                        0)));
        int n = TestScale.iterations(20_000, 500_000);
        for (int i = 0; i < n; i++) {
            byte[] p = seeds.get(rnd.nextInt(seeds.size())).clone();
            int edits = 1 + rnd.nextInt(4);
            for (int k = 0; k < edits; k++) {
                switch (rnd.nextInt(3)) {
                    case 0 -> p[rnd.nextInt(p.length)] = (byte) rnd.nextInt(256);
                    case 1 -> p = Arrays.copyOf(p, rnd.nextInt(p.length + 1));
                    default -> p[rnd.nextInt(p.length)] ^= (byte) (1 << rnd.nextInt(8));
                }
                if (p.length == 0) {
                    break;
                }
            }
            try {
                DecodedBatch b = new VllmEventDecoder(ENGINE).decode(p);
                for (KvEvent e : b.events()) {
                    assertInstanceOf(KvEvent.class, e);
                }
            } catch (BatchDecodeException expected) {
                // fine
            } catch (RuntimeException | OutOfMemoryError | StackOverflowError e) {
                throw new AssertionError(
                        "payload " + Arrays.toString(p) + " threw " + e + " " + TestScale.replay(seed), e);
            }
        }
    }

    /**
     * The payload the fuzz loop above found (seed 104551855353388543): an extra_keys entry whose array
     * header (0xdd) claims 1.6 billion elements in a 97-byte payload. It sized an array from the claim
     * and ran out of heap; the header is now held to the bytes left, so the batch is refused.
     */
    @Test
    void aLyingExtraKeysHeaderIsRefusedBeforeItSizesAnArray() {
        byte[] p = bytes(
                -109, -53, 65, -39, 84, -4, 64, 0, 0, 0, -109, -101, -85, 66, 108, 111, 99, 107, 83, 116, 111, 114, 101,
                100, -110, 11, -12, 10, -108, 1, 2, 3, 4, 2, -64, -93, 71, 80, 85, -87, 97, -110, -64, -64, 0, -82, 102,
                117, 108, -35, 95, 97, 116, 116, 101, 110, 116, 105, 111, 110, -108, -84, 66, 108, 111, 99, 107, 82,
                101, 109, 111, 118, 101, 100, -111, 11, -64, 1, -111, -80, 65, 108, 108, 66, 108, 111, 99, 107, 115, 67,
                108, 101, 97, 114, 101, 100, 2);
        BatchDecodeException e = assertThrows(BatchDecodeException.class, () -> new VllmEventDecoder(ENGINE).decode(p));
        assertTrue(e.getMessage().contains("elements with"), e.getMessage());
    }

    /**
     * A byte-string block hash whose header claims 2 GiB in a payload of a few dozen bytes: refused as a
     * bad batch without allocating what the header claims (the decoder reads only a hash's last 8
     * bytes), so a listener with a small heap is not run out of it by one forged batch.
     */
    @Test
    void aLyingBinaryHashHeaderIsRefusedWithoutAllocatingItsClaim() throws Exception {
        ThreadAllocation allocation = ThreadAllocation.counter();
        assumeTrue(allocation != null, "this JVM has no per-thread allocation counter");
        MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
        p.packArrayHeader(3).packDouble(1.7e9).packArrayHeader(1).packArrayHeader(11);
        p.packString("BlockStored").packArrayHeader(1).packBinaryHeader(Integer.MAX_VALUE);
        byte[] head = p.toByteArray();
        byte[] payload = Arrays.copyOf(head, head.length + 3);
        VllmEventDecoder decoder = new VllmEventDecoder(ENGINE);
        assertThrows(BatchDecodeException.class, () -> decoder.decode(payload)); // warm, and the answer
        long before = allocation.bytes();
        assertThrows(BatchDecodeException.class, () -> decoder.decode(payload));
        long allocated = allocation.bytes() - before;
        assertTrue(allocated < 1 << 20, allocated + " bytes allocated decoding a " + payload.length + "-byte batch");
    }

    private static byte[] bytes(int... values) {
        byte[] b = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            b[i] = (byte) values[i];
        }
        return b;
    }
}
