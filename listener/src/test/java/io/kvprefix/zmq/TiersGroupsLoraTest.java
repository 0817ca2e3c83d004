package io.kvprefix.zmq;

import static io.kvprefix.zmq.VllmEventDecoderTest.list;
import static io.kvprefix.zmq.VllmEventDecoderTest.map;
import static io.kvprefix.zmq.VllmEventDecoderTest.pack;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.kvprefix.BlockHasher;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.Medium;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Three things a real deployment sends, decoded from the engines' own layouts and applied to an
 * index: lower tiers (vLLM's offloading connector and SGLang's HiCache), a hybrid model's groups,
 * and LoRA adapters.
 *
 * <p>Layouts: vLLM's {@code BlockStored} / {@code BlockRemoved} of {@code vllm/distributed/kv_events.py}
 * (fork local-inference-lab/vllm @ {@code b6b82137404e5bc1488ebd4ed18b395fe55b2b9f}: {@code medium},
 * {@code lora_name}, {@code group_idx}, {@code kv_cache_spec_kind}); the OffloadingConnector's CPU
 * events as vLLM PRs #43468 and #39275 describe them (placeholders with {@code block_size} 0 and no
 * tokens unless {@code self_describing_kv_events} is set, the CPU tier reusing the GPU's block
 * hashes); SGLang's {@code StorageMedium.CPU = "CPU_PINNED"} in
 * {@code python/sglang/srt/disaggregation/kv_events.py} @ {@code 612d579090db24ec7c47cc5ca6b83e0c649b8c28}.
 */
class TiersGroupsLoraTest {
    private static final Object NIL = null;
    private static final EngineEndpoint VLLM = EngineEndpoint.of("tcp://127.0.0.1:5557", 7);
    private static final Worker W = Worker.of(7);

    private static int[] tokens(int n) {
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = 1000 + i;
        }
        return t;
    }

    private static List<Object> ints(int[] t) {
        List<Object> out = new java.util.ArrayList<>();
        for (int x : t) {
            out.add(x);
        }
        return out;
    }

    private static void applyAll(PrefixIndex index, DecodedBatch b) {
        for (KvEvent e : b.events()) {
            index.apply(e);
        }
    }

    @Test
    void offloadedBlocksStayRoutableAfterTheGpuEvictsThem() throws Exception {
        VllmEventDecoder d = new VllmEventDecoder(VLLM);
        int[] t = tokens(8);
        try (PrefixIndex index = PrefixIndex.create(IndexConfig.defaults())) {
            // the GPU block pool stores 4 blocks; the connector offloads them (placeholders, GPU hashes)
            DecodedBatch b = d.decode(pack(list(
                    1.0,
                    list(
                            list("BlockStored", list(1L, 2L, 3L, 4L), NIL, ints(t), 2, NIL, "GPU", NIL),
                            list("BlockStored", list(1L, 2L, 3L, 4L), NIL, list(), 0, NIL, "CPU", NIL)))));
            assertInstanceOf(KvEvent.Copied.class, b.events().get(1));
            assertEquals(
                    List.of(DecodeIssue.TIER_CPU, DecodeIssue.PLACEHOLDER_STORE),
                    b.issues().stream().map(DecodedBatch.Issue::issue).toList());
            applyAll(index, b);
            // GPU turnover: vLLM evicts one hash per BlockRemoved
            applyAll(
                    index,
                    d.decode(pack(list(
                            2.0,
                            list(
                                    list("BlockRemoved", list(4L), "GPU"),
                                    list("BlockRemoved", list(3L), "GPU"),
                                    list("BlockRemoved", list(2L), "GPU"))))));
            MatchResult r = new MatchResult();
            index.match(t, 0, 8, BlockHasher.of(2), r);
            assertEquals(1, r.depthOf(W), "the GPU holds the first block");
            assertEquals(4, r.anyTierDepthOf(W), "the CPU tier still holds all four");
            // a self-describing CPU store (tokens, parent) on a block the GPU never had, then the CPU drops one
            int[] more = {2000, 2001};
            applyAll(
                    index,
                    d.decode(pack(list(
                            3.0,
                            list(
                                    list("BlockStored", list(5L), 4L, ints(more), 2, NIL, "CPU", NIL),
                                    list("BlockRemoved", list(2L), "CPU"))))));
            int[] all = java.util.Arrays.copyOf(t, 10);
            all[8] = 2000;
            all[9] = 2001;
            index.match(all, 0, 10, BlockHasher.of(2), r);
            assertEquals(1, r.anyTierDepthOf(W), "block 2 left its last tier");
            applyAll(
                    index,
                    d.decode(pack(
                            list(4.0, list(list("BlockStored", list(2L), 1L, list(1002, 1003), 2, NIL, "GPU", NIL))))));
            index.match(all, 0, 10, BlockHasher.of(2), r);
            assertEquals(2, r.depthOf(W));
            assertEquals(5, r.anyTierDepthOf(W), "onloaded to the GPU again: the CPU's 3, 4 and 5 follow");
        }
    }

    @Test
    void sglangHostTierIsTheCpuTier() throws Exception {
        EngineEventDecoder d = new SglangEventDecoder(EngineEndpoint.parse("tcp://127.0.0.1:5557=8,format=sglang"));
        try (PrefixIndex index = PrefixIndex.create(IndexConfig.defaults())) {
            applyAll(
                    index,
                    d.decode(pack(list(
                            1.0,
                            list(
                                    list("BlockStored", list(-1L, -2L), NIL, list(1, 2, 3, 4), 2, NIL, "GPU"),
                                    list("BlockStored", list(-1L, -2L), NIL, list(1, 2, 3, 4), 2, NIL, "CPU_PINNED"),
                                    list("BlockRemoved", list(-2L, -1L), "GPU"),
                                    list("BlockStored", list(-9L), NIL, list(1, 2), 2, NIL, "EXTERNAL")),
                            0))));
            MatchResult r = new MatchResult();
            index.match(new int[] {1, 2, 3, 4}, 0, 4, BlockHasher.of(2), r);
            assertEquals(List.of(new MatchResult.Score(Worker.of(8), 0, 2)), r.scores());
        }
    }

    /**
     * A hybrid model with a full-attention group 0 and a sliding-window group 1. vLLM strips the group
     * from the external hash, so both groups publish the same hashes for the same tokens, and the
     * sliding-window group evicts blocks that fell out of its window while full attention keeps them.
     * kvprefix indexes full attention only (the documented rule: docs/ENGINES.md section 1, {@link VllmEventDecoder}), so
     * the answer is the full-attention depth, as before the model had a second group.
     */
    @Test
    void aSlidingWindowGroupNeitherAddsNorRemovesFullAttentionBlocks() throws Exception {
        VllmEventDecoder d = new VllmEventDecoder(VLLM);
        int[] t = tokens(8);
        try (PrefixIndex index = PrefixIndex.create(IndexConfig.defaults())) {
            DecodedBatch b = d.decode(pack(list(
                    1.0,
                    list(
                            map(
                                    "type",
                                    "BlockStored",
                                    "block_hashes",
                                    list(1L, 2L, 3L, 4L),
                                    "parent_block_hash",
                                    NIL,
                                    "token_ids",
                                    ints(t),
                                    "block_size",
                                    2,
                                    "lora_id",
                                    NIL,
                                    "medium",
                                    "GPU",
                                    "lora_name",
                                    NIL,
                                    "group_idx",
                                    0,
                                    "kv_cache_spec_kind",
                                    "full_attention"),
                            map(
                                    "type",
                                    "BlockStored",
                                    "block_hashes",
                                    list(1L, 2L, 3L, 4L),
                                    "parent_block_hash",
                                    NIL,
                                    "token_ids",
                                    ints(t),
                                    "block_size",
                                    2,
                                    "lora_id",
                                    NIL,
                                    "medium",
                                    "GPU",
                                    "lora_name",
                                    NIL,
                                    "group_idx",
                                    1,
                                    "kv_cache_spec_kind",
                                    "sliding_window",
                                    "kv_cache_spec_sliding_window",
                                    4),
                            // the window moved on: group 1 frees its first blocks (removals carry only the group)
                            map("type", "BlockRemoved", "block_hashes", list(1L), "medium", "GPU", "group_idx", 1),
                            map("type", "BlockRemoved", "block_hashes", list(2L), "medium", "GPU", "group_idx", 1)))));
            assertEquals(
                    List.of(
                            DecodeIssue.NON_FULL_ATTENTION_GROUP,
                            DecodeIssue.NON_FULL_ATTENTION_GROUP,
                            DecodeIssue.NON_FULL_ATTENTION_GROUP),
                    b.issues().stream().map(DecodedBatch.Issue::issue).toList());
            applyAll(index, b);
            MatchResult r = new MatchResult();
            index.match(t, 0, 8, BlockHasher.of(2), r);
            assertEquals(4, r.depthOf(W), "the full-attention depth, untouched by the window's evictions");
            // a full-attention eviction is applied
            applyAll(
                    index,
                    d.decode(pack(list(
                            2.0,
                            list(map(
                                    "type",
                                    "BlockRemoved",
                                    "block_hashes",
                                    list(3L),
                                    "medium",
                                    "GPU",
                                    "group_idx",
                                    0))))));
            index.match(t, 0, 8, BlockHasher.of(2), r);
            assertEquals(2, r.depthOf(W));
        }
    }

    /**
     * LoRA end to end: vLLM salts its block hashes by {@code lora_name} (PR #27211) and sends it with
     * every store; kvprefix salts the same way as Dynamo's {@code compute_salt_hash}
     * ({@code 1337 + XXH3(lora_name, 0)}, docs/SPEC.md section 2.1), so a request for an adapter
     * matches only blocks stored under that adapter: the failure TensorRT-LLM #18156 reports, where
     * router and engine salted differently.
     */
    @Test
    void aLoraRequestMatchesOnlyBlocksOfTheSameAdapter() throws Exception {
        int[] t = tokens(4);
        VllmEventDecoder d = new VllmEventDecoder(VLLM);
        TrtllmEventDecoder trt = new TrtllmEventDecoder(EngineEndpoint.parse("tcp://127.0.0.1:1=9,format=trtllm"), 2);
        try (PrefixIndex index = PrefixIndex.create(IndexConfig.defaults())) {
            applyAll(
                    index,
                    d.decode(pack(list(
                            1.0,
                            list(
                                    list("BlockStored", list(1L, 2L), NIL, ints(t), 2, 1, "GPU", "adapter-a"),
                                    list("BlockStored", list(3L, 4L), NIL, ints(t), 2, NIL, "GPU", NIL)),
                            0))));
            String tok = "{\"type\":\"unique_token\",\"token_id\":%d,\"token_extra_id\":0}";
            String json =
                    "{\"event_id\":1,\"data\":{\"type\":\"stored\",\"parent_hash\":null,\"lora_name\":\"adapter-b\",\"blocks\":["
                            + "{\"type\":\"stored_block\",\"block_hash\":5,\"tokens\":[" + tok.formatted(1000) + ","
                            + tok.formatted(1001) + "],\"cache_level\":0,\"priority\":35}]}}";
            applyAll(index, trt.decode(json.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
            MatchResult r = new MatchResult();
            for (String lora : new String[] {"adapter-a", null, "adapter-b", "adapter-c"}) {
                BlockHasher h =
                        BlockHasher.builder().blockSize(2).loraName(lora).build();
                index.match(t, 0, 4, h, r);
                List<MatchResult.Score> want = switch (lora == null ? "" : lora) {
                    case "adapter-a" -> List.of(new MatchResult.Score(W, 2));
                    case "" -> List.of(new MatchResult.Score(W, 2));
                    case "adapter-b" -> List.of(new MatchResult.Score(Worker.of(9), 1));
                    default -> List.of();
                };
                assertEquals(want, r.scores(), "a request for " + lora);
            }
            // the salt is Dynamo's: seed 1337 + XXH3("adapter-a", 0) = 8842669519798868182 (docs/SPEC.md section 2.3)
            assertEquals(
                    Long.parseUnsignedLong("8842669519798868182"),
                    BlockHasher.builder()
                            .blockSize(2)
                            .loraName("adapter-a")
                            .build()
                            .seed());
        }
        assertEquals(Medium.CPU, Medium.fromEngine("CPU_PINNED"));
    }
}
