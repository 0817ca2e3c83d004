package io.kvprefix.zmq;

import io.kvprefix.KvEvent;
import io.kvprefix.Worker;
import io.kvprefix.zmq.DecodedBatch.Issue;
import io.kvprefix.zmq.internal.Json;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;

/**
 * The {@code trtllm} format of {@link EngineEventDecoder}: TensorRT-LLM's KV-cache events as
 * {@code LLM.get_kv_cache_events()} returns them, one JSON line per payload (one event or a list of
 * them; {@code json.dumps} of the Python dicts gives it), as {@code kvprefix listen --trtllm-events}
 * reads them. Events are mapped as Dynamo's TensorRT-LLM publisher maps them: only the largest
 * attention window is indexed, stores of full blocks become {@link KvEvent.StoredTokens}, partial
 * blocks are noted and skipped, and an event id that starts again means a restart (every worker of
 * the engine is cleared first). docs/ENGINES.md section 3 has every field and the TensorRT-LLM and
 * Dynamo sources it was read from.
 *
 * <p>Thread-safety: not thread-safe (it keeps the window, the last event id and the partial blocks);
 * one per engine, from one thread at a time.
 */
public final class TrtllmEventDecoder implements EngineEventDecoder {
    private final EngineEndpoint engine;
    private final int blockSize;
    private int learnedBlockSize;
    private long maxWindow = -1;
    private long lastEventId = -1;
    private final Set<Worker> seen = new LinkedHashSet<>();
    private final Map<Worker, Set<Long>> partial = new HashMap<>();

    /**
     * A decoder for {@code engine}'s events whose blocks hold {@code blockSize} tokens (TensorRT-LLM's
     * {@code tokens_per_block}); 0 to take it from the first stored block and keep the largest seen.
     */
    public TrtllmEventDecoder(EngineEndpoint engine, int blockSize) {
        this.engine = Objects.requireNonNull(engine, "engine");
        if (blockSize < 0) {
            throw new IllegalArgumentException("block size must be >= 0 (0: learn it), got " + blockSize);
        }
        this.blockSize = blockSize;
    }

    /** A decoder that learns the block size from the stored blocks (see {@link #TrtllmEventDecoder(EngineEndpoint, int)}). */
    public TrtllmEventDecoder(EngineEndpoint engine) {
        this(engine, 0);
    }

    @Override
    public DecodedBatch decode(byte[] payload) throws BatchDecodeException {
        Object v;
        try {
            String text = StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(payload))
                    .toString();
            v = Json.parse(text);
        } catch (CharacterCodingException e) {
            throw new BatchDecodeException(DecodeIssue.BAD_JSON, "not valid UTF-8");
        } catch (IllegalArgumentException e) {
            throw new BatchDecodeException(DecodeIssue.BAD_JSON, e.getMessage());
        }
        List<?> list = v instanceof List<?> l ? l : v instanceof Map<?, ?> ? List.of(v) : null;
        if (list == null) {
            throw new BatchDecodeException(DecodeIssue.BAD_BATCH, "a line must hold an event object or a list of them");
        }
        List<KvEvent> events = new ArrayList<>();
        List<Issue> issues = new ArrayList<>(0);
        Worker first = null;
        for (Object o : list) {
            if (!(o instanceof Map<?, ?> m)) {
                issues.add(new Issue(DecodeIssue.BAD_EVENT, "an event is not a JSON object"));
                continue;
            }
            Worker w;
            try {
                w = engine.worker(rank(m));
                event(m, w, events, issues);
            } catch (IllegalArgumentException e) {
                issues.add(new Issue(DecodeIssue.BAD_EVENT, e.getMessage()));
                continue;
            }
            first = first == null ? w : first;
        }
        Worker bw = first != null ? first : engine.worker(OptionalInt.empty());
        return new DecodedBatch(Double.NaN, bw, OptionalInt.empty(), events, issues);
    }

    private static OptionalInt rank(Map<?, ?> m) {
        Object r = m.get("attention_dp_rank");
        if (r == null) {
            return OptionalInt.empty();
        }
        if (!(r instanceof Long l) || l < 0 || l > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("attention_dp_rank is not a rank: " + r);
        }
        return OptionalInt.of((int) (long) l);
    }

    private void event(Map<?, ?> m, Worker w, List<KvEvent> out, List<Issue> issues) {
        if (!(m.get("data") instanceof Map<?, ?> data)) {
            throw new IllegalArgumentException("event without a data object");
        }
        String type = data.get("type") instanceof String t ? t : null;
        long id = m.get("event_id") instanceof Long l ? l : -1;
        Long window = m.get("window_size") instanceof Long l ? l : null;
        if ("created".equals(type)) {
            if (id >= 0 && id <= lastEventId) { // ids start again: the engine restarted and its cache is empty
                issues.add(new Issue(DecodeIssue.EVENT_ID_GAP, "created event " + id + " after " + lastEventId));
                for (Worker s : seen) {
                    out.add(new KvEvent.Cleared(s));
                }
                partial.clear();
                maxWindow = -1;
            }
            if (window != null) {
                maxWindow = Math.max(maxWindow, window);
            }
            lastEventId = Math.max(id, -1);
            issues.add(new Issue(DecodeIssue.UNUSED_EVENT, "created"));
            return;
        }
        if (id >= 0 && lastEventId >= 0 && id != lastEventId + 1) {
            issues.add(new Issue(DecodeIssue.EVENT_ID_GAP, "event " + id + " after " + lastEventId));
        }
        lastEventId = id >= 0 ? id : lastEventId;
        if (window != null && maxWindow >= 0 && window != maxWindow) {
            issues.add(new Issue(DecodeIssue.NON_FULL_ATTENTION_GROUP, type + " of window " + window));
            return;
        }
        seen.add(w);
        switch (type == null ? "" : type) {
            case "stored" -> stored(data, w, out, issues);
            case "removed" -> {
                Set<Long> p = partial.getOrDefault(w, Set.of());
                List<Long> names = new ArrayList<>();
                for (Object h : list(data, "block_hashes")) {
                    long name = hash(h, "block_hashes");
                    if (!p.isEmpty() && partial.get(w).remove(name)) {
                        continue;
                    }
                    names.add(name);
                }
                out.add(new KvEvent.Removed(
                        w, names.stream().mapToLong(Long::longValue).toArray()));
            }
            case "updated" -> issues.add(new Issue(DecodeIssue.UNUSED_EVENT, "updated"));
            default -> issues.add(new Issue(DecodeIssue.UNKNOWN_EVENT_TYPE, "event type '" + type + "'"));
        }
    }

    private void stored(Map<?, ?> data, Worker w, List<KvEvent> out, List<Issue> issues) {
        Object ph = data.get("parent_hash");
        OptionalLong parent = ph == null ? OptionalLong.empty() : OptionalLong.of(hash(ph, "parent_hash"));
        String lora = data.get("lora_name") instanceof String s && !s.isEmpty() ? s : null;
        long loraId = data.get("lora_id") instanceof Long l ? l : 0;
        String salt = null;
        List<Long> names = new ArrayList<>();
        List<int[]> tokens = new ArrayList<>();
        List<long[]> mm = new ArrayList<>();
        int bs = blockSize;
        for (Object o : list(data, "blocks")) {
            if (!(o instanceof Map<?, ?> b)) {
                throw new IllegalArgumentException("stored: a block is not an object");
            }
            if (b.get("block_hash") == null) {
                continue; // Dynamo skips a block without a hash
            }
            long name = hash(b.get("block_hash"), "block_hash");
            int[] t = tokens(b);
            if (bs == 0) {
                learnedBlockSize = Math.max(learnedBlockSize, t.length);
                bs = learnedBlockSize;
            }
            if (t.length > bs) {
                throw new IllegalArgumentException(
                        "stored: a block of " + t.length + " tokens, more than the block size " + bs);
            }
            if (t.length < bs) {
                partial.computeIfAbsent(w, k -> new HashSet<>()).add(name);
                issues.add(new Issue(DecodeIssue.PARTIAL_BLOCK, "stored: a block of " + t.length + " tokens"));
                break;
            }
            loraId = loraId != 0 ? loraId : b.get("lora_id") instanceof Long l ? l : 0;
            salt = salt != null ? salt : b.get("cache_salt") instanceof String s && !s.isEmpty() ? s : null;
            names.add(name);
            tokens.add(t);
            mm.add(mmKeys(b));
        }
        if (lora == null && loraId != 0) {
            issues.add(new Issue(
                    DecodeIssue.LORA_ID_WITHOUT_NAME,
                    "stored with lora_id " + loraId + " and no lora_name: hashed without a LoRA salt"));
        }
        if (bs == 0) { // no full block: nothing to store
            return;
        }
        out.add(storedTokens(w, parent, bs, names, tokens, mm, lora, salt, issues));
    }

    /** The stored event of the full blocks read: their tokens one after the other, their names and keys. */
    private static KvEvent.StoredTokens storedTokens(
            Worker w,
            OptionalLong parent,
            int bs,
            List<Long> names,
            List<int[]> tokens,
            List<long[]> mm,
            String lora,
            String salt,
            List<Issue> issues) {
        int[] all = new int[tokens.size() * bs];
        boolean anyMm = false;
        for (int i = 0; i < tokens.size(); i++) {
            System.arraycopy(tokens.get(i), 0, all, i * bs, bs);
            anyMm |= mm.get(i) != null;
        }
        KvEvent.StoredTokens stored = new KvEvent.StoredTokens(
                w,
                parent,
                all,
                bs,
                names.stream().mapToLong(Long::longValue).toArray(),
                lora,
                salt,
                anyMm ? mm.toArray(new long[0][]) : null);
        if (anyMm) {
            issues.add(new Issue(DecodeIssue.MULTIMODAL, "stored with mm_keys"));
        }
        return stored;
    }

    private static int[] tokens(Map<?, ?> b) {
        List<?> ts = list(b, "tokens");
        int[] out = new int[ts.size()];
        for (int i = 0; i < out.length; i++) {
            Object id = ts.get(i) instanceof Map<?, ?> t ? t.get("token_id") : ts.get(i);
            if (!(id instanceof Long l) || l < 0 || l > 0xFFFF_FFFFL) {
                throw new IllegalArgumentException("stored: tokens[" + i + "] is not a token id");
            }
            out[i] = (int) (long) l;
        }
        return out;
    }

    /** A block's {@code mm_keys}: each key's hash, the first 16 hex digits as an unsigned number. */
    private static long[] mmKeys(Map<?, ?> b) {
        if (!(b.get("mm_keys") instanceof List<?> keys) || keys.isEmpty()) {
            return null;
        }
        long[] out = new long[keys.size()];
        for (int i = 0; i < out.length; i++) {
            Object h = keys.get(i) instanceof Map<?, ?> k ? k.get("hash") : null;
            if (!(h instanceof String hex) || hex.length() < 16) {
                throw new IllegalArgumentException("stored: mm_keys[" + i + "] has no hex hash");
            }
            try {
                out[i] = Long.parseUnsignedLong(hex.substring(0, 16), 16);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("stored: mm_keys[" + i + "] hash is not hex");
            }
        }
        return out;
    }

    private static List<?> list(Map<?, ?> m, String key) {
        if (!(m.get(key) instanceof List<?> l)) {
            throw new IllegalArgumentException("'" + key + "' is not a list");
        }
        return l;
    }

    /** A block hash: a signed or unsigned 64-bit integer, or a hex string (its low 64 bits). */
    private static long hash(Object h, String what) {
        if (h instanceof Long l) {
            return l;
        }
        if (h instanceof BigInteger b && b.signum() > 0 && b.bitLength() <= 64) {
            return b.longValue();
        }
        if (h instanceof String s && !s.isEmpty() && s.length() <= 128) {
            try {
                String low = s.length() > 16 ? s.substring(s.length() - 16) : s;
                return Long.parseUnsignedLong(low, 16);
            } catch (NumberFormatException e) {
                // below
            }
        }
        throw new IllegalArgumentException(what + " is not a 64-bit hash: " + h);
    }
}
