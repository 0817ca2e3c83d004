package io.kvprefix.zmq;

import io.kvprefix.KvEvent;
import io.kvprefix.Medium;
import io.kvprefix.Worker;
import io.kvprefix.zmq.DecodedBatch.Issue;
import io.kvprefix.zmq.internal.ExtraKeys;
import io.kvprefix.zmq.internal.WireBatch;
import io.kvprefix.zmq.internal.WireReader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * The {@code vllm} format of {@link EngineEventDecoder}: turns the msgpack payload of one vLLM
 * KV-event batch into kvprefix {@link KvEvent}s for one engine. The {@link KvEventSubscriber} uses
 * one per engine whose format is {@code vllm} (the default); a router that receives vLLM payloads
 * some other way can use it directly.
 *
 * <p>Both encodings vLLM has used are read (tagged arrays and maps); {@code BlockStored} becomes a
 * {@link KvEvent.StoredTokens} that kvprefix hashes itself, {@code BlockRemoved} a
 * {@link KvEvent.Removed}, {@code AllBlocksCleared} a {@link KvEvent.Cleared}; lower tiers, hybrid
 * models' groups, LoRA names and {@code extra_keys} are mapped field by field as docs/ENGINES.md
 * section 1 states, and what is skipped or noted is a {@link DecodeIssue}.
 *
 * <p>Thread-safety: not thread-safe (it learns group kinds as it goes); use one decoder per engine,
 * from one thread at a time.
 */
public final class VllmEventDecoder implements EngineEventDecoder {
    private final EngineEndpoint engine;
    /** KV-cache group index -> whether it is full attention, learned from stores that name their kind. */
    private final Map<Integer, Boolean> groupIsFullAttention = new HashMap<>();

    /** Whether a removal whose {@code remaining_copy_counts} says a copy remains keeps the block. */
    private final boolean copyCounts;

    /** A decoder for the events of {@code engine} (its worker id and, if set, its fixed dp rank). */
    public VllmEventDecoder(EngineEndpoint engine) {
        this(engine, false);
    }

    /**
     * A decoder that, if {@code copyCounts}, reads vLLM #48933's {@code remaining_copy_counts} (unmerged):
     * a block a copy of which remains is not removed (docs/ENGINES.md section 1.1).
     */
    public VllmEventDecoder(EngineEndpoint engine, boolean copyCounts) {
        this.engine = Objects.requireNonNull(engine, "engine");
        this.copyCounts = copyCounts;
    }

    /**
     * Decodes one payload.
     *
     * @throws BatchDecodeException if the payload as a whole is unreadable ({@link DecodeIssue#BAD_MSGPACK},
     *         {@link DecodeIssue#BAD_BATCH}); problems with single events come back as {@link Issue}s
     */
    @Override
    public DecodedBatch decode(byte[] payload) throws BatchDecodeException {
        WireBatch wire = WireReader.read(payload);
        Worker worker = engine.worker(wire.dpRank());
        List<Issue> issues = new ArrayList<>(0);
        if (engine.dpRank().isPresent()
                && wire.dpRank().isPresent()
                && wire.dpRank().getAsInt() != engine.dpRank().getAsInt()) {
            issues.add(new Issue(
                    DecodeIssue.DP_RANK_OVERRIDDEN,
                    "batch dp rank "
                            + Integer.toUnsignedString(wire.dpRank().getAsInt()) + ", engine configured as rank "
                            + Integer.toUnsignedString(engine.dpRank().getAsInt())));
        }
        List<KvEvent> events = new ArrayList<>(wire.events().size());
        for (WireBatch.Event e : wire.events()) {
            switch (e) {
                case WireBatch.Bad b -> issues.add(new Issue(b.issue(), b.detail()));
                case WireBatch.Cleared c -> events.add(new KvEvent.Cleared(worker));
                case WireBatch.Removed r -> {
                    if (skipped(r.medium(), r.groupIdx(), r.specKind(), "BlockRemoved", issues)) {
                        continue;
                    }
                    long[] gone = copyCounts ? lastCopies(r, issues) : r.blockHashes();
                    if (gone != null && gone.length > 0) {
                        events.add(new KvEvent.Removed(worker, gone, tier(r.medium(), issues)));
                    }
                }
                case WireBatch.Stored s -> {
                    if (s.groupIdx() >= 0 && s.specKind() != null) {
                        groupIsFullAttention.put(s.groupIdx(), isFullAttention(s.specKind()));
                    }
                    if (skipped(s.medium(), s.groupIdx(), s.specKind(), "BlockStored", issues)) {
                        continue;
                    }
                    KvEvent stored = stored(worker, s, issues);
                    if (stored != null) {
                        events.add(stored);
                    }
                }
            }
        }
        return new DecodedBatch(wire.timestamp(), worker, wire.dpRank(), events, issues);
    }

    /**
     * The hashes of {@code r} whose last copy went ({@code remaining_copy_counts} 0, or no counts sent);
     * null when the counts do not line up with the hashes (the event is {@code bad_event}).
     */
    private static long[] lastCopies(WireBatch.Removed r, List<Issue> issues) {
        int[] counts = r.remainingCopyCounts();
        if (counts == null) {
            return r.blockHashes();
        }
        if (counts.length != r.blockHashes().length) {
            issues.add(new Issue(
                    DecodeIssue.BAD_EVENT,
                    "BlockRemoved: " + counts.length + " remaining_copy_counts for " + r.blockHashes().length
                            + " block hashes"));
            return null;
        }
        long[] gone = new long[counts.length];
        int n = 0;
        for (int i = 0; i < counts.length; i++) {
            if (counts[i] == 0) {
                gone[n++] = r.blockHashes()[i];
            }
        }
        if (n < counts.length) {
            issues.add(new Issue(
                    DecodeIssue.COPY_REMAINS, "BlockRemoved: " + (counts.length - n) + " blocks with a copy left"));
        }
        return n == counts.length ? gone : Arrays.copyOf(gone, n);
    }

    /** The event's tier (GPU when absent), counted when it is a lower one. */
    private static Medium tier(String medium, List<Issue> issues) {
        Medium m = Medium.fromEngine(medium);
        if (m == Medium.CPU) {
            issues.add(new Issue(DecodeIssue.TIER_CPU, "an event on medium '" + medium + "'"));
        } else if (m == Medium.DISK) {
            issues.add(new Issue(DecodeIssue.TIER_DISK, "an event on medium '" + medium + "'"));
        }
        return m;
    }

    private static KvEvent stored(Worker worker, WireBatch.Stored s, List<Issue> issues) {
        Medium medium = tier(s.medium(), issues);
        if (s.blockSize() == 0) { // a placeholder: an offloading tier naming blocks by their GPU hashes only
            if (medium == Medium.GPU || s.tokenIds().length > 0) {
                issues.add(new Issue(DecodeIssue.BAD_EVENT, "BlockStored with block_size 0 on the GPU or with tokens"));
                return null;
            }
            issues.add(new Issue(DecodeIssue.PLACEHOLDER_STORE, "BlockStored without tokens on " + medium));
            return new KvEvent.Copied(worker, s.blockHashes(), medium);
        }
        int fullBlocks = s.tokenIds().length / s.blockSize();
        if (fullBlocks != s.blockHashes().length) {
            issues.add(new Issue(
                    DecodeIssue.HASH_COUNT_MISMATCH,
                    "BlockStored: " + s.tokenIds().length
                            + " tokens at block size " + s.blockSize() + " make " + fullBlocks + " full blocks, but "
                            + s.blockHashes().length + " block hashes were given"));
            return null;
        }
        String lora = s.loraName() == null || s.loraName().isEmpty() ? null : s.loraName();
        if (lora == null && s.loraId() != 0) {
            issues.add(new Issue(
                    DecodeIssue.LORA_ID_WITHOUT_NAME,
                    "BlockStored with lora_id " + s.loraId() + " and no lora_name: hashed without a LoRA salt"));
        }
        long[][] mm = null;
        // SGLang's cache_salt (a top-level field) takes precedence over a namespace in extra_keys, as in Dynamo
        String namespace = s.cacheSalt() == null || s.cacheSalt().isEmpty() ? null : s.cacheSalt();
        ExtraKeys x = s.extraKeys();
        if (x != null) {
            namespace = namespace != null ? namespace : x.namespace();
            long unknown =
                    x.unrecognized().stream().filter(k -> !k.equals(lora)).count();
            if (x.hasItems() && x.perEntry().length == fullBlocks) {
                mm = x.perEntry();
                issues.add(new Issue(DecodeIssue.MULTIMODAL, "BlockStored with multimodal items"));
            } else if (x.hasItems()) {
                unknown++;
            }
            if (unknown > 0) {
                issues.add(new Issue(
                        DecodeIssue.EXTRA_KEYS,
                        "BlockStored with extra_keys kvprefix does not hash (" + x.perEntry().length + " entries for "
                                + fullBlocks + " blocks, " + x.unrecognized().size() + " unrecognised strings)"));
            }
        }
        if (mm == null && s.mmKeys() != null) {
            mm = multimodal(s.mmKeys(), fullBlocks, issues);
        }
        if (s.bigram()) {
            issues.add(new Issue(
                    DecodeIssue.BIGRAM_TOKENS, "BlockStored with (token, next token) pairs: first of each used"));
        }
        OptionalLong parent = s.hasParent() ? OptionalLong.of(s.parent()) : OptionalLong.empty();
        return new KvEvent.StoredTokens(
                worker, parent, s.tokenIds(), s.blockSize(), s.blockHashes(), lora, namespace, mm, medium);
    }

    /** TensorRT-LLM's per-block {@code mm_keys} as the blocks' items, when they line up with the blocks. */
    private static long[][] multimodal(long[][] mmKeys, int fullBlocks, List<Issue> issues) {
        if (Arrays.stream(mmKeys).allMatch(k -> k.length == 0)) {
            return null;
        }
        if (mmKeys.length != fullBlocks) {
            issues.add(new Issue(
                    DecodeIssue.EXTRA_KEYS,
                    "BlockStored with mm_keys for " + mmKeys.length + " of " + fullBlocks + " blocks: not hashed"));
            return null;
        }
        issues.add(new Issue(DecodeIssue.MULTIMODAL, "BlockStored with multimodal items"));
        return mmKeys;
    }

    private boolean skipped(String medium, int groupIdx, String specKind, String what, List<Issue> issues) {
        if (Medium.fromEngine(medium) == null) {
            issues.add(new Issue(DecodeIssue.NON_DEVICE_MEDIUM, what + " on medium '" + medium + "'"));
            return true;
        }
        boolean full;
        if (specKind != null) {
            full = isFullAttention(specKind);
        } else {
            int g = Math.max(groupIdx, 0);
            full = groupIsFullAttention.getOrDefault(g, g == 0);
        }
        if (!full) {
            issues.add(new Issue(
                    DecodeIssue.NON_FULL_ATTENTION_GROUP,
                    what + " of KV-cache group " + Math.max(groupIdx, 0)
                            + (specKind == null ? "" : " (" + specKind + ")")));
            return true;
        }
        return false;
    }

    private static boolean isFullAttention(String kind) {
        return kind.equals("full_attention") || kind.equals("mla_attention") || kind.equals("sink_full_attention");
    }
}
