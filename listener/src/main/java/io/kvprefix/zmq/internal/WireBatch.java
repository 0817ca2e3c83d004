package io.kvprefix.zmq.internal;

import io.kvprefix.zmq.DecodeIssue;
import java.util.List;
import java.util.OptionalInt;

/**
 * One vLLM event batch as it was on the wire, before it is mapped to kvprefix events: the
 * publisher's timestamp, its dp rank if it gave one, and its events in order.
 *
 * <p>Thread-safety: immutable once built (the arrays inside are not copied and must not be modified).
 *
 * @param timestamp the publisher's {@code ts} (seconds since the epoch, as a double)
 * @param dpRank the batch's {@code data_parallel_rank}, or empty
 * @param events the events, malformed ones included as {@link Bad}
 */
public record WireBatch(double timestamp, OptionalInt dpRank, List<Event> events) {

    /** One event of a batch. Thread-safety: every implementation is an immutable record. */
    public sealed interface Event permits Stored, Removed, Cleared, Bad {}

    /**
     * {@code BlockStored}.
     *
     * @param blockHashes engine hashes, as 64 bits
     * @param hasParent whether {@code parent_block_hash} was given (non-nil)
     * @param parent the parent's engine hash if {@code hasParent}
     * @param tokenIds the tokens (the first of each pair when they came as pairs)
     * @param bigram whether the tokens came as (token, next token) pairs
     * @param blockSize tokens per block
     * @param loraId the legacy {@code lora_id}, or 0 when absent / nil
     * @param medium the medium, or null when absent / nil
     * @param loraName the LoRA name, or null when absent / nil
     * @param extraKeys the {@code extra_keys} as kvprefix reads them, or null when absent / nil
     * @param groupIdx the KV-cache group, or -1 when absent / nil
     * @param specKind the {@code kv_cache_spec_kind}, or null when absent / nil; SGLang's
     *     {@code component_type} ({@code full}, {@code swa}, {@code mamba}) is given here as
     *     {@code full_attention}, {@code sliding_window} or {@code mamba}
     * @param cacheSalt SGLang's {@code cache_salt} (its {@code metadata} at position 7, or the map key),
     *     or null
     * @param mmKeys TensorRT-LLM's {@code mm_keys}: per block, its items' {@code mm_hash}es (the first
     *     16 hex digits of each key's hash), or null when absent / nil
     */
    public record Stored(
            long[] blockHashes,
            boolean hasParent,
            long parent,
            int[] tokenIds,
            boolean bigram,
            int blockSize,
            long loraId,
            String medium,
            String loraName,
            ExtraKeys extraKeys,
            int groupIdx,
            String specKind,
            String cacheSalt,
            long[][] mmKeys)
            implements Event {}

    /**
     * {@code BlockRemoved}.
     *
     * @param blockHashes engine hashes
     * @param medium the medium, or null
     * @param groupIdx the KV-cache group, or -1
     * @param specKind the {@code kv_cache_spec_kind}, or null
     * @param locality the {@code locality} ({@code LOCAL}, {@code REMOTE}), or null when absent / nil
     * @param remainingCopyCounts {@code remaining_copy_counts} (vLLM #48933, unmerged), or null when absent
     *     / nil; as sent, not checked against {@code blockHashes}
     */
    public record Removed(
            long[] blockHashes,
            String medium,
            int groupIdx,
            String specKind,
            String locality,
            int[] remainingCopyCounts)
            implements Event {}

    /** {@code AllBlocksCleared}. */
    public record Cleared() implements Event {}

    /**
     * An event that could not be read; the rest of the batch was.
     *
     * @param issue what kind of problem
     * @param detail a human-readable description
     */
    public record Bad(DecodeIssue issue, String detail) implements Event {}
}
