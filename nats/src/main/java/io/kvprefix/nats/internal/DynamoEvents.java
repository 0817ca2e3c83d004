package io.kvprefix.nats.internal;

import io.kvprefix.KvEvent;
import io.kvprefix.Medium;
import io.kvprefix.Worker;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Dynamo's {@code RouterEvent} and event-plane envelope, read from a {@link DynamoTree}, and mapped
 * onto kvprefix's events as docs/ENGINES.md section 4.3 says: {@code tokens_hash} is the local
 * hash, {@code block_hash} the engine hash, {@code storage_tier} the tier, {@code Cleared} clears
 * the emitting (worker, dp rank).
 *
 * <p>Thread-safety: stateless.
 */
public final class DynamoEvents {
    private DynamoEvents() {}

    /** The event-plane envelope: who published, its per-publisher sequence, and the payload bytes. */
    public record Envelope(long publisherId, long sequence, long publishedAt, String topic, byte[] payload) {}

    /**
     * One decoded {@code RouterEvent}.
     *
     * @param worker the (worker_id, dp_rank) it is about
     * @param eventId the worker's event id
     * @param event the kvprefix event, or null when it is not indexed ({@code skipped} says why)
     * @param skipped null, or why the event is not applied: {@code tier} (a tier kvprefix does not
     *     index), {@code domain} (a cache owner's residency, not the worker's), {@code position} (a
     *     store at a start position with no parent)
     * @param multimodalBlocks blocks that carried {@code mm_extra_info}
     */
    public record Decoded(Worker worker, long eventId, KvEvent event, String skipped, int multimodalBlocks) {}

    /** The envelope in a map (named MessagePack, or the JSON of older builds with a byte-list payload). */
    public static Envelope envelope(Object tree) throws IOException {
        Map<String, Object> m = map(tree, "envelope");
        Object payload = m.get("payload");
        byte[] bytes;
        if (payload instanceof byte[] b) {
            bytes = b;
        } else if (payload instanceof List<?> l) {
            bytes = new byte[l.size()];
            for (int i = 0; i < bytes.length; i++) {
                bytes[i] = (byte) num(l.get(i), "payload byte");
            }
        } else {
            throw new IOException("envelope: payload is not bytes");
        }
        Object topic = m.get("topic");
        return new Envelope(
                num(m.get("publisher_id"), "publisher_id"),
                num(m.get("sequence"), "sequence"),
                m.get("published_at") == null ? 0 : num(m.get("published_at"), "published_at"),
                topic instanceof String s ? s : "",
                bytes);
    }

    /** Whether a tree is an envelope rather than a bare {@code RouterEvent}. */
    public static boolean isEnvelope(Object tree) {
        return tree instanceof Map<?, ?> m && m.containsKey("publisher_id") && m.containsKey("payload");
    }

    /** One {@code RouterEvent}; {@link IOException} names the field that is missing or malformed. */
    public static Decoded routerEvent(Object tree) throws IOException {
        Map<String, Object> m = map(tree, "RouterEvent");
        long workerId = num(m.get("worker_id"), "worker_id");
        Map<String, Object> ev = map(m.get("event"), "event");
        long eventId = ev.get("event_id") == null ? 0 : num(ev.get("event_id"), "event_id");
        int rank = ev.get("dp_rank") == null ? 0 : (int) num(ev.get("dp_rank"), "dp_rank");
        Worker worker = Worker.of(workerId, rank);
        Object tierName = m.get("storage_tier");
        String tier = tierName == null ? "device" : str(tierName, "storage_tier");
        Medium medium = medium(tier);
        if ("cache_owner".equals(m.get("residency_domain"))) {
            return new Decoded(worker, eventId, null, "domain", 0);
        }
        Object data = ev.get("data");
        if ("cleared".equals(data) || data instanceof Map<?, ?> dm && dm.containsKey("cleared")) {
            return new Decoded(worker, eventId, new KvEvent.Cleared(worker), null, 0);
        }
        Map<String, Object> d = map(data, "event.data");
        if (d.get("removed") != null) {
            long[] hashes = nums(map(d.get("removed"), "removed").get("block_hashes"), "block_hashes");
            return medium == null
                    ? new Decoded(worker, eventId, null, "tier", 0)
                    : new Decoded(worker, eventId, new KvEvent.Removed(worker, hashes, medium), null, 0);
        }
        if (d.get("stored") != null) {
            return stored(worker, eventId, map(d.get("stored"), "stored"), medium);
        }
        throw new IOException("event.data is none of stored, removed, cleared: " + d.keySet());
    }

    private static Decoded stored(Worker worker, long eventId, Map<String, Object> s, Medium medium)
            throws IOException {
        List<?> blocks = list(s.get("blocks"), "blocks");
        long[] engine = new long[blocks.size()];
        long[] local = new long[blocks.size()];
        int mm = 0;
        for (int i = 0; i < engine.length; i++) {
            Map<String, Object> b = map(blocks.get(i), "blocks[" + i + "]");
            engine[i] = num(b.get("block_hash"), "block_hash");
            local[i] = num(b.get("tokens_hash"), "tokens_hash");
            if (b.get("mm_extra_info") != null) {
                mm++; // its mm hashes are in tokens_hash already (Dynamo's publisher hashes them in)
            }
        }
        Object parent = s.get("parent_hash");
        Object start = s.get("start_position");
        if (parent == null && start != null && num(start, "start_position") > 0) {
            return new Decoded(worker, eventId, null, "position", mm);
        }
        if (medium == null) {
            return new Decoded(worker, eventId, null, "tier", mm);
        }
        OptionalLong p = parent == null ? OptionalLong.empty() : OptionalLong.of(num(parent, "parent_hash"));
        return new Decoded(worker, eventId, new KvEvent.Stored(worker, p, engine, local, medium), null, mm);
    }

    /** Dynamo's {@code StorageTier} (snake case) as a kvprefix tier; null for {@code external}. */
    static Medium medium(String tier) throws IOException {
        return switch (tier) {
            case "device" -> Medium.GPU;
            case "host_pinned" -> Medium.CPU;
            case "disk" -> Medium.DISK;
            case "external" -> null;
            default -> throw new IOException("unknown storage_tier " + tier);
        };
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object v, String what) throws IOException {
        if (v instanceof Map<?, ?> m) {
            return (Map<String, Object>) m;
        }
        throw new IOException(what + " is not a map" + (v == null ? " (missing)" : ""));
    }

    private static List<?> list(Object v, String what) throws IOException {
        if (v instanceof List<?> l) {
            return l;
        }
        throw new IOException(what + " is not a list" + (v == null ? " (missing)" : ""));
    }

    private static long num(Object v, String what) throws IOException {
        if (v instanceof Long l) {
            return l;
        }
        throw new IOException(what + " is not an integer" + (v == null ? " (missing)" : ""));
    }

    private static String str(Object v, String what) throws IOException {
        if (v instanceof String s) {
            return s;
        }
        throw new IOException(what + " is not a string");
    }

    private static long[] nums(Object v, String what) throws IOException {
        List<?> l = list(v, what);
        long[] out = new long[l.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = num(l.get(i), what + "[" + i + "]");
        }
        return out;
    }
}
