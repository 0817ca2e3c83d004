package io.kvprefix.zmq;

import static io.kvprefix.zmq.VllmEventDecoderTest.list;
import static io.kvprefix.zmq.VllmEventDecoderTest.map;
import static io.kvprefix.zmq.VllmEventDecoderTest.pack;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kvprefix.BlockHasher;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The {@code sglang} and {@code trtllm} formats on payloads laid out as the engines' own sources lay
 * them out: SGLang's {@code python/sglang/srt/disaggregation/kv_events.py} @
 * {@code 612d579090db24ec7c47cc5ca6b83e0c649b8c28} ({@code BlockStored}, {@code BlockStoredWithMetadata}
 * with {@code metadata = {cache_salt}} at position 7, {@code EventBatch [ts, events, attn_dp_rank]}) and
 * the map events of SGLang #37482 ({@code cache_salt}, {@code component_type}); TensorRT-LLM's
 * {@code KVCacheEventSerializer} in {@code tensorrt_llm/_utils.py} @
 * {@code ed53795b33fc139493f762a1c6c53f691cf52d38} ({@code event_id}, {@code data}, {@code window_size},
 * {@code attention_dp_rank}; {@code stored_block} with {@code unique_token}s), with the newer
 * {@code mm_keys} / {@code lora_name} fields Dynamo's publisher tests use.
 */
class OtherEnginesDecoderTest {
    private static final Object NIL = null;
    private static final EngineEndpoint SGLANG = EngineEndpoint.parse("tcp://127.0.0.1:5557=9,format=sglang");
    private static final EngineEndpoint TRTLLM = EngineEndpoint.parse("tcp://127.0.0.1:1=5,format=trtllm");

    private static List<DecodeIssue> issues(DecodedBatch b) {
        return b.issues().stream().map(DecodedBatch.Issue::issue).toList();
    }

    @Test
    void sglangSaltAtPositionSevenIsTheCacheNamespace() throws Exception {
        EngineEventDecoder d = EngineEventDecoder.forEngine(SGLANG);
        assertInstanceOf(SglangEventDecoder.class, d);
        DecodedBatch b = d.decode(pack(list(
                1.7e9,
                list(
                        // BlockStoredWithMetadata: [tag, hashes, parent, tokens, block_size, lora_id, medium, metadata]
                        list(
                                "BlockStored",
                                list(-5L, 6L),
                                NIL,
                                list(1, 2, 3, 4),
                                2,
                                NIL,
                                "GPU",
                                map("cache_salt", "t1")),
                        list("BlockStored", list(7L), 6L, list(5, 6), 2, NIL, "GPU"),
                        // HiCache's host tier: kvprefix's CPU tier
                        list("BlockStored", list(8L), NIL, list(1, 2), 2, NIL, "CPU_PINNED"),
                        list("BlockRemoved", list(7L), "GPU")),
                3)));
        assertEquals(Worker.of(9, 3), b.worker(), "attn_dp_rank picks the rank");
        assertEquals(4, b.events().size());
        assertEquals(io.kvprefix.Medium.CPU, ((KvEvent.StoredTokens) b.events().get(2)).medium());
        var s0 = (KvEvent.StoredTokens) b.events().get(0);
        assertEquals("t1", s0.cacheNamespace());
        assertNull(s0.loraName());
        assertNull(((KvEvent.StoredTokens) b.events().get(1)).cacheNamespace());
        assertEquals(List.of(DecodeIssue.TIER_CPU), issues(b));
        // the newer map events: cache_salt and component_type keys
        DecodedBatch m = d.decode(pack(list(
                2.0,
                list(
                        map(
                                "type",
                                "BlockStored",
                                "block_hashes",
                                list(1L),
                                "token_ids",
                                list(1, 2),
                                "block_size",
                                2,
                                "cache_salt",
                                "t1",
                                "component_type",
                                "full"),
                        map(
                                "type",
                                "BlockStored",
                                "block_hashes",
                                list(2L),
                                "token_ids",
                                list(1, 2),
                                "block_size",
                                2,
                                "component_type",
                                "swa"),
                        map("type", "BlockRemoved", "block_hashes", list(2L), "component_type", "mamba")),
                0)));
        assertEquals(1, m.events().size());
        assertEquals("t1", ((KvEvent.StoredTokens) m.events().get(0)).cacheNamespace());
        assertEquals(List.of(DecodeIssue.NON_FULL_ATTENTION_GROUP, DecodeIssue.NON_FULL_ATTENTION_GROUP), issues(m));
        // a router salting its requests the same way matches the salted store, an unsalted one does not
        try (PrefixIndex index = PrefixIndex.create(IndexConfig.defaults())) {
            b.events().forEach(index::apply);
            MatchResult r = new MatchResult();
            index.match(
                    new int[] {1, 2, 3, 4},
                    0,
                    4,
                    BlockHasher.builder().blockSize(2).cacheNamespace("t1").build(),
                    r);
            assertEquals(2, r.depthOf(Worker.of(9, 3)));
            index.match(new int[] {1, 2, 3, 4}, 0, 4, BlockHasher.of(2), r);
            assertEquals(0, r.depthOf(Worker.of(9, 3)));
        }
    }

    private static byte[] line(String json) {
        return json.getBytes(StandardCharsets.UTF_8);
    }

    private static String block(long hash, int... tokens) {
        StringBuilder sb = new StringBuilder("{\"type\":\"stored_block\",\"block_hash\":" + hash + ",\"tokens\":[");
        for (int i = 0; i < tokens.length; i++) {
            sb.append(i > 0 ? "," : "")
                    .append("{\"type\":\"unique_token\",\"token_id\":")
                    .append(tokens[i])
                    .append(",\"token_extra_id\":0}");
        }
        return sb.append("],\"cache_level\":0,\"priority\":35}").toString();
    }

    @Test
    void trtllmEventsAsTheSerializerWritesThem() throws Exception {
        TrtllmEventDecoder d = new TrtllmEventDecoder(TRTLLM, 2);
        // start-up: one created event per attention window; only the largest window is indexed
        DecodedBatch c = d.decode(
                line(
                        "[{\"event_id\":0,\"data\":{\"type\":\"created\",\"num_blocks_per_cache_level\":[100,0]},\"window_size\":4096},"
                                + "{\"event_id\":1,\"data\":{\"type\":\"created\",\"num_blocks_per_cache_level\":[50,0]},\"window_size\":128}]"));
        assertEquals(List.of(), c.events());
        String plain = block(-2L, 3, 4);
        String mmBlock = plain.substring(0, plain.length() - 1) // the same block with its mm_keys
                + ",\"mm_keys\":[{\"type\":\"mm_key\",\"hash\":\"00000000000000ff" + "0".repeat(48)
                + "\",\"start_offset\":0}]}";
        DecodedBatch s = d.decode(line("{\"event_id\":2,\"data\":{\"type\":\"stored\",\"parent_hash\":null,\"blocks\":["
                + block(1, 1, 2) + "," + mmBlock + "," + block(3, 5)
                + "],\"lora_name\":\"adapter-a\"},\"window_size\":4096,\"attention_dp_rank\":1}"));
        assertEquals(Worker.of(5, 1), s.worker());
        var st = (KvEvent.StoredTokens) s.events().get(0);
        assertArrayEquals(new int[] {1, 2, 3, 4}, st.tokenIds());
        assertArrayEquals(new long[] {1, -2}, st.blockHashes(), "signed hashes are the same 64 bits");
        assertEquals("adapter-a", st.loraName());
        assertNull(st.mmHashes()[0]);
        assertArrayEquals(
                new long[] {255}, st.mmHashes()[1], "mm_key 00000000000000ff... is mm_hash 255 (Dynamo's test)");
        assertEquals(List.of(DecodeIssue.PARTIAL_BLOCK, DecodeIssue.MULTIMODAL), issues(s));
        // another window, an update, a removal that names the partial block, a gap in the ids
        DecodedBatch r = d.decode(
                line(
                        "[{\"event_id\":3,\"data\":{\"type\":\"stored\",\"parent_hash\":null,\"blocks\":["
                                + block(9, 1, 2) + "]},\"window_size\":128},"
                                + "{\"event_id\":4,\"data\":{\"type\":\"updated\",\"block_hash\":1,\"cache_level\":{\"type\":\"event_diff\",\"new_value\":1,\"old_value\":0}},\"window_size\":4096},"
                                + "{\"event_id\":6,\"data\":{\"type\":\"removed\",\"block_hashes\":[3,-2]},\"window_size\":4096,\"attention_dp_rank\":1}]"));
        assertEquals(List.of(new KvEvent.Removed(Worker.of(5, 1), new long[] {-2})), r.events());
        assertEquals(
                List.of(DecodeIssue.NON_FULL_ATTENTION_GROUP, DecodeIssue.UNUSED_EVENT, DecodeIssue.EVENT_ID_GAP),
                issues(r));
        // the store matches a request hashed with the same LoRA name, with its image
        try (PrefixIndex index = PrefixIndex.create(IndexConfig.defaults())) {
            s.events().forEach(index::apply);
            MatchResult m = new MatchResult();
            BlockHasher h =
                    BlockHasher.builder().blockSize(2).loraName("adapter-a").build();
            index.match(new int[] {1, 2, 3, 4}, 0, 4, h, List.of(new BlockHasher.MmSpan(2, 3, 255)), m);
            assertEquals(2, m.depthOf(Worker.of(5, 1)));
            index.match(new int[] {1, 2, 3, 4}, 0, 4, BlockHasher.of(2), List.of(new BlockHasher.MmSpan(2, 3, 255)), m);
            assertEquals(0, m.depthOf(Worker.of(5, 1)), "the engine salted by its adapter: an unsalted request misses");
        }
        // a restart: ids start again with created; the engine's workers are cleared first
        DecodedBatch again = d.decode(
                line(
                        "{\"event_id\":0,\"data\":{\"type\":\"created\",\"num_blocks_per_cache_level\":[100,0]},\"window_size\":4096}"));
        assertEquals(
                List.of(new KvEvent.Cleared(Worker.of(5, 1)), new KvEvent.Cleared(Worker.of(5, 0))),
                again.events(),
                "every rank that sent an event of the largest window");
        // lora_id alone is no salt; too many tokens in a block rejects the event
        DecodedBatch bad = d.decode(
                line("[{\"event_id\":1,\"data\":{\"type\":\"stored\",\"parent_hash\":7,\"lora_id\":3,\"blocks\":["
                        + block(11, 1, 2)
                        + "]}},{\"event_id\":2,\"data\":{\"type\":\"stored\",\"parent_hash\":null,\"blocks\":["
                        + block(12, 1, 2, 3) + "]}}]"));
        assertEquals(1, bad.events().size());
        assertEquals(List.of(DecodeIssue.LORA_ID_WITHOUT_NAME, DecodeIssue.BAD_EVENT), issues(bad));
        var e1 = assertThrows(BatchDecodeException.class, () -> d.decode(line("{\"event_id\":1,")));
        assertEquals(DecodeIssue.BAD_JSON, e1.issue());
        assertEquals(
                DecodeIssue.BAD_BATCH,
                assertThrows(BatchDecodeException.class, () -> d.decode(line("42")))
                        .issue());
        assertEquals(
                DecodeIssue.BAD_JSON,
                assertThrows(BatchDecodeException.class, () -> d.decode(new byte[] {(byte) 0xff}))
                        .issue());
    }
}
