package io.kvprefix.zmq;

/**
 * Something the subscriber or an {@link EngineEventDecoder} noticed about a frame, a batch or one
 * event, counted per engine in {@link SubscriberStats} and logged once per engine and kind. Its
 * {@link Category}: an error (malformed, skipped), ignored (well-formed but out of scope), or a note
 * (applied with a caveat); docs/ENGINES.md section 5 lists them by category.
 *
 * <p>Thread-safety: an immutable enum.
 */
public enum DecodeIssue {
    /** A live message that is not {@code [topic, seq, payload]}, or a replay answer that is not
     * {@code ["", seq, payload]} / {@code ["", topic, seq, payload]}. */
    BAD_FRAMES("bad_frames", Category.ERROR),
    /** A sequence frame that is not 8 bytes. */
    BAD_SEQUENCE("bad_sequence", Category.ERROR),
    /** A payload that is not exactly one msgpack value (truncated, invalid bytes, trailing bytes). */
    BAD_MSGPACK("bad_msgpack", Category.ERROR),
    /** A payload that is msgpack but not a batch {@code [ts, [events...], dp_rank?]} (or its map form). */
    BAD_BATCH("bad_batch", Category.ERROR),
    /** An event whose tag is none of {@code BlockStored}, {@code BlockRemoved}, {@code AllBlocksCleared}. */
    UNKNOWN_EVENT_TYPE("unknown_event_type", Category.ERROR),
    /** An event with a required field missing, or a field of the wrong type or out of range. */
    BAD_EVENT("bad_event", Category.ERROR),
    /** A payload that should be a JSON line (TensorRT-LLM's events) and is not valid UTF-8 JSON. */
    BAD_JSON("bad_json", Category.ERROR),
    /** A {@code BlockStored} whose number of block hashes differs from its number of full blocks of tokens. */
    HASH_COUNT_MISMATCH("hash_count_mismatch", Category.ERROR),

    /** An event about a medium kvprefix does not index (not a GPU, CPU or disk tier, such as SGLang's
     * {@code EXTERNAL}; {@link io.kvprefix.Medium#fromEngine}). */
    NON_DEVICE_MEDIUM("medium", Category.IGNORED),
    /** An event about a KV-cache group that is not full attention (hybrid models: sliding window, mamba, ...;
     * for TensorRT-LLM, an event of an attention window other than the largest). */
    NON_FULL_ATTENTION_GROUP("group", Category.IGNORED),

    /** A store whose {@code extra_keys} hold something kvprefix does not hash (a string that is no
     * multimodal item, LoRA name or Dynamo namespace, such as vLLM's own {@code cache_salt}; or a list
     * whose length differs from the number of blocks): applied, hashed without it. */
    EXTRA_KEYS("extra_keys", Category.NOTE),
    /** An event on the host-memory tier ({@code CPU}, {@code CPU_PINNED}), applied to it (docs/SPEC.md
     * section 3.1). */
    TIER_CPU("tier_cpu", Category.NOTE),
    /** An event on the disk or storage tier ({@code DISK}, {@code STORAGE}), applied to it. */
    TIER_DISK("tier_disk", Category.NOTE),
    /** A lower-tier store without tokens ({@code block_size} 0: vLLM's offloading connector unless it
     * sends self-describing events), applied by name as a {@link io.kvprefix.KvEvent.Copied}. */
    PLACEHOLDER_STORE("placeholder_store", Category.NOTE),
    /** Format {@code vllm-copies}: removed blocks whose {@code remaining_copy_counts} says a copy of the
     * block is left on the engine, so the block stays indexed (docs/ENGINES.md section 1.1). */
    COPY_REMAINS("copy_remains", Category.NOTE),
    /** A store with multimodal items in its {@code extra_keys}: applied, each block hashed with its
     * items' {@code mm_hash}es (docs/SPEC.md section 2.1). Counted so that operators see them. */
    MULTIMODAL("multimodal", Category.NOTE),
    /** An event kvprefix has no use for: TensorRT-LLM's {@code updated} (cache level or priority of a
     * block) and {@code created} (the pool's sizes). */
    UNUSED_EVENT("unused_event", Category.IGNORED),
    /** TensorRT-LLM blocks with fewer tokens than the block size: not full blocks, so not indexed, and
     * their later removal is not an error (Dynamo's {@code partial_block_hashes}). */
    PARTIAL_BLOCK("partial_block", Category.NOTE),
    /** TensorRT-LLM event ids that skip numbers (the engine's queue dropped events), or that start
     * again with a {@code created} event (the engine restarted: its workers are cleared). */
    EVENT_ID_GAP("event_id_gap", Category.NOTE),
    /** A store with a non-zero {@code lora_id} but no {@code lora_name}: applied unsalted (docs/SPEC.md
     * section 2.1 salts by name only). */
    LORA_ID_WITHOUT_NAME("lora_id_without_name", Category.NOTE),
    /** A store whose {@code token_ids} came as (token, next token) pairs (Eagle); the first of each
     * pair is the block's token. */
    BIGRAM_TOKENS("bigram_tokens", Category.NOTE),
    /** A batch whose {@code data_parallel_rank} differs from the rank the engine was configured with;
     * the configured rank wins. */
    DP_RANK_OVERRIDDEN("dp_rank_overridden", Category.NOTE);

    /** Kinds of issue. Thread-safety: an immutable enum. */
    public enum Category {
        /** Malformed input, skipped. */
        ERROR,
        /** Well-formed but out of scope, skipped. */
        IGNORED,
        /** Applied with a caveat. */
        NOTE
    }

    private final String wireName;
    private final Category category;

    DecodeIssue(String wireName, Category category) {
        this.wireName = wireName;
        this.category = category;
    }

    /** The name used in the JSON statistics, such as {@code bad_msgpack}. */
    public String wireName() {
        return wireName;
    }

    /** Error, ignored, or note. */
    public Category category() {
        return category;
    }
}
