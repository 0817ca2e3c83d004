package io.kvprefix.zmq;

/**
 * The {@code sglang} format of {@link EngineEventDecoder}: SGLang's own KV-event publisher
 * ({@code python/sglang/srt/disaggregation/kv_events.py}, read at
 * {@code 612d579090db24ec7c47cc5ca6b83e0c649b8c28} and a later version with {@code StorageMedium}
 * and metadata), which speaks vLLM's ZMQ framing with a layout of its own. What differs from vLLM,
 * and how kvprefix reads it:
 *
 * <ul>
 *   <li>The batch is {@code [ts, events, attn_dp_rank]}: the third field has another name but
 *       vLLM's position, and picks the dp rank the same way.
 *   <li>{@code BlockStored} is {@code [tag, block_hashes, parent_block_hash, token_ids, block_size,
 *       lora_id, medium]}, with no {@code lora_name}, {@code extra_keys} or {@code group_idx}; a
 *       salted store ({@code BlockStoredWithMetadata}) puts {@code {cache_salt: str}} at position 7,
 *       where vLLM has {@code lora_name}. The salt becomes the store's cache namespace (docs/SPEC.md
 *       section 2.1), as in Dynamo, so a router that salts its requests the same way matches them.
 *       Newer versions (SGLang #37482) send events as maps tagged by {@code "type"}, with
 *       {@code cache_salt} and {@code component_type} keys.
 *   <li>{@code component_type} ({@code full}, {@code swa}, {@code mamba}) plays vLLM's
 *       {@code kv_cache_spec_kind}: only {@code full} blocks are indexed (the hybrid-model rule of
 *       {@link VllmEventDecoder}).
 *   <li>Media are {@code GPU}, {@code CPU_PINNED} (the host tier of HiCache, which announces a host
 *       copy only after its write-through DMA is confirmed and removes it when the copy is dropped),
 *       {@code DISK} and {@code EXTERNAL}: the first three are kvprefix's GPU, CPU and DISK tiers
 *       (docs/SPEC.md section 3.1), {@code EXTERNAL} is not indexed.
 *   <li>Hashes are SHA-256 prefixes as signed 64-bit integers: opaque names to kvprefix, which hashes
 *       the tokens itself. With no {@code lora_name}, a LoRA store is hashed without a salt
 *       ({@link DecodeIssue#LORA_ID_WITHOUT_NAME}).
 * </ul>
 *
 * <p>The reader behind both formats accepts the union of the two layouts (Dynamo reads both the same
 * way), so this decoder is vLLM's reading under SGLang's name and sources.
 *
 * <p>Thread-safety: not thread-safe (it learns group kinds as it goes); one per engine.
 */
public final class SglangEventDecoder implements EngineEventDecoder {
    private final VllmEventDecoder reader;

    /** A decoder for the events of {@code engine}. */
    public SglangEventDecoder(EngineEndpoint engine) {
        this.reader = new VllmEventDecoder(engine);
    }

    @Override
    public DecodedBatch decode(byte[] payload) throws BatchDecodeException {
        return reader.decode(payload);
    }
}
