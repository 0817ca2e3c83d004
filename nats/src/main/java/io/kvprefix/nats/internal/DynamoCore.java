package io.kvprefix.nats.internal;

import io.kvprefix.EventStatus;
import io.kvprefix.KvEvent;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Applies a Dynamo deployment's KV events to an index, one message at a time, with the rules of
 * docs/ENGINES.md section 4.4: per-publisher sequence gaps are counted and clear the publisher's
 * workers (Dynamo recovers them over its request plane, which kvprefix does not speak); a worker
 * heard from a new {@code publisher_id} restarted and is cleared first; repeated sequences are
 * dropped. Counters are read with {@link #counters()}.
 *
 * <p>Thread-safety: every method is synchronized; messages are applied one at a time.
 */
public final class DynamoCore {
    /** The counter names, in {@link #counters()} order. */
    public static final List<String> NAMES = List.of(
            "messages",
            "events",
            "decode_errors",
            "sequence_gaps",
            "duplicates",
            "restarts",
            "workers_cleared",
            "skipped_tier",
            "skipped_domain",
            "skipped_position",
            "multimodal_blocks",
            "event_id_gaps",
            "stream_seq",
            "first_stream_seq");

    private final PrefixIndex index;
    private final long[] c = new long[NAMES.size()];
    private final long[] statuses = new long[EventStatus.values().length];
    private final Map<Long, Long> lastSeq = new HashMap<>();
    private final Map<Long, Long> publisherOf = new HashMap<>();
    private final Map<Worker, Long> lastEventId = new HashMap<>();
    private String lastError;

    public DynamoCore(PrefixIndex index) {
        this.index = index;
    }

    /** A core NATS (event plane) message: an envelope around a RouterEvent, or an older bare JSON one. */
    public synchronized void onCoreMessage(byte[] data) {
        c[0]++;
        try {
            Object tree = tree(data);
            if (!DynamoEvents.isEnvelope(tree)) {
                apply(DynamoEvents.routerEvent(tree)); // older builds: JSON RouterEvent on kv_events
                return;
            }
            DynamoEvents.Envelope e = DynamoEvents.envelope(tree);
            Long prev = lastSeq.get(e.publisherId());
            if (prev != null && Long.compareUnsigned(e.sequence(), prev) <= 0) {
                c[4]++;
                return;
            }
            if (prev != null && e.sequence() - prev > 1) {
                c[3] += e.sequence() - prev - 1;
                clearPublisher(e.publisherId());
            }
            lastSeq.put(e.publisherId(), e.sequence());
            DynamoEvents.Decoded d = DynamoEvents.routerEvent(tree(e.payload()));
            Long owner = publisherOf.put(d.worker().workerId(), e.publisherId());
            if (owner != null && owner != e.publisherId()) {
                c[5]++; // the worker's publisher restarted: what it held went with it
                lastSeq.remove(owner);
                clearWorker(d.worker().workerId());
            }
            apply(d);
        } catch (IOException | RuntimeException ex) {
            c[2]++;
            lastError = ex.getMessage();
        }
    }

    /** A JetStream (durable mode) message: one RouterEvent, at {@code streamSeq} in the stream. */
    public synchronized void onStreamMessage(byte[] data, long streamSeq) {
        c[0]++;
        if (c[13] == 0) {
            c[13] = streamSeq;
        }
        c[12] = streamSeq;
        try {
            apply(DynamoEvents.routerEvent(tree(data)));
        } catch (IOException | RuntimeException ex) {
            c[2]++;
            lastError = ex.getMessage();
        }
    }

    private static Object tree(byte[] data) throws IOException {
        if (data.length > 0 && data[0] == '{') {
            return DynamoTree.json(data);
        }
        return DynamoTree.msgpack(data);
    }

    private void apply(DynamoEvents.Decoded d) {
        c[10] += d.multimodalBlocks();
        Long last = lastEventId.put(d.worker(), d.eventId());
        if (last != null && d.eventId() - last > 1) {
            c[11] += d.eventId() - last - 1;
        }
        if (d.event() == null) {
            switch (d.skipped()) {
                case "tier" -> c[7]++;
                case "domain" -> c[8]++;
                default -> c[9]++;
            }
            return;
        }
        c[1]++;
        statuses[index.apply(d.event()).ordinal()]++;
    }

    private void clearPublisher(long publisherId) {
        List<Long> workers = new ArrayList<>();
        publisherOf.forEach((w, p) -> {
            if (p == publisherId) {
                workers.add(w);
            }
        });
        workers.forEach(this::clearWorker);
    }

    private void clearWorker(long workerId) {
        c[6]++;
        index.apply(new KvEvent.RemoveWorker(workerId));
        lastEventId.keySet().removeIf(w -> w.workerId() == workerId);
    }

    /** The counters, in {@link #NAMES} order. */
    public synchronized long[] counters() {
        return c.clone();
    }

    /** Events applied, by {@link EventStatus} ordinal. */
    public synchronized long[] statuses() {
        return statuses.clone();
    }

    /** Publishers heard from. */
    public synchronized int publishers() {
        return lastSeq.size();
    }

    /** The last decode error, or null. */
    public synchronized String lastError() {
        return lastError;
    }
}
