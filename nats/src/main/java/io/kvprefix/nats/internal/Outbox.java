package io.kvprefix.nats.internal;

import io.kvprefix.nats.internal.Frames.Record;
import io.kvprefix.zmq.EngineEndpoint;
import io.nats.client.impl.Headers;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * One engine's side of the relay: the records waiting to be published, and the one frame in flight.
 * An engine never has two frames in flight, so its frames land in the stream in order, with no hole
 * a later frame could hide: a frame is published again, with the same message id (JetStream drops
 * it if it landed the first time), until it is acknowledged, and only then is the next one built
 * from everything that queued up meanwhile.
 *
 * <p>Thread-safety: every method is {@code synchronized}; the subscriber's I/O thread adds records,
 * the relay's publishing thread takes frames, the ack callbacks settle them.
 */
public final class Outbox {
    /** A frame being published: its id, first record, records and headers. */
    public record InFlight(String id, long firstRec, List<Record> records, Headers headers, byte[] body) {}

    private final EngineEndpoint engine;
    private final String subject;
    private final String key;
    private final int maxQueued;
    private final Runnable onAdd;
    private final ArrayDeque<Record> queue = new ArrayDeque<>();
    private long nextRec;
    private InFlight inFlight;
    private long retryAt;
    private boolean sendDue;

    private long frames;
    private long batches;
    private long clears;
    private long duplicates;
    private long retries;
    private long oversized;
    private long lastSeqPublished = -1;
    private String lastError;

    /**
     * @param nextRec the number the engine's next record gets (one past the stream's last)
     * @param maxQueued how many records may wait before {@link #add} blocks the caller
     * @param onAdd called (outside the lock) after each record is queued, to wake the publisher
     */
    public Outbox(EngineEndpoint engine, String subject, long nextRec, int maxQueued, Runnable onAdd) {
        this.onAdd = onAdd;
        this.engine = engine;
        this.subject = subject;
        this.key = Frames.engineKey(engine);
        this.nextRec = nextRec;
        this.maxQueued = maxQueued;
    }

    public EngineEndpoint engine() {
        return engine;
    }

    public String subject() {
        return subject;
    }

    /** Queues a record; blocks while {@code maxQueued} records wait (the server is away). */
    public void add(Record r) throws InterruptedException {
        synchronized (this) {
            while (queue.size() >= maxQueued) {
                wait(100);
            }
            queue.add(r);
        }
        onAdd.run();
    }

    /**
     * The frame to publish now, or null: a new one from the queue if none is in flight, the one in
     * flight again once its retry is due.
     */
    public synchronized InFlight take(long now) {
        if (inFlight != null) {
            if (!sendDue || now - retryAt < 0) {
                return null;
            }
            sendDue = false;
            retries++;
            return inFlight;
        }
        if (queue.isEmpty()) {
            return null;
        }
        List<Record> records = new ArrayList<>();
        int bytes = 0;
        while (!queue.isEmpty() && (records.isEmpty() || bytes + queue.peek().size() <= Frames.MAX_FRAME_BYTES)) {
            Record r = queue.poll();
            if (!r.isClear() && r.payload().length > Frames.MAX_FRAME_BYTES) {
                oversized++; // it cannot travel: the replicas must drop the engine's state instead
                System.getLogger("io.kvprefix.nats")
                        .log(
                                System.Logger.Level.WARNING,
                                "kvprefix relay: " + engine.endpoint() + ": batch " + r.seq() + " has "
                                        + r.payload().length + " bytes, more than a frame holds ("
                                        + Frames.MAX_FRAME_BYTES + "); publishing a clear in its place");
                r = Record.clear();
            }
            bytes += r.size();
            records.add(r);
        }
        notifyAll();
        long first = nextRec;
        nextRec += records.size();
        String id = Frames.messageId(key, first);
        Headers h = new Headers(); // the id header is added by the publish options
        h.add(Frames.VERSION, Frames.FORMAT);
        h.add(Frames.ENGINE, engine.toSpec());
        h.add(Frames.FIRST_REC, Long.toString(first));
        h.add(Frames.LAST_REC, Long.toString(first + records.size() - 1));
        Record last = records.get(records.size() - 1);
        if (!last.isClear()) {
            h.add(Frames.LAST_SEQ, Long.toString(last.seq()));
        }
        inFlight = new InFlight(id, first, List.copyOf(records), h, Frames.body(records));
        return inFlight;
    }

    /** The frame {@code f} landed ({@code duplicate}: it had landed before). */
    public synchronized void acked(InFlight f, boolean duplicate) {
        if (inFlight != f) {
            return;
        }
        inFlight = null;
        lastError = null; // the stream takes frames again: the last error is history
        frames++;
        duplicates += duplicate ? 1 : 0;
        for (Record r : f.records()) {
            if (r.isClear()) {
                clears++;
            } else {
                batches++;
                lastSeqPublished = r.seq();
            }
        }
    }

    /** Publishing {@code f} failed; it goes again at {@code retryAt}. */
    public synchronized void failed(InFlight f, long retryAt, String error) {
        if (inFlight != f) {
            return;
        }
        this.retryAt = retryAt;
        this.sendDue = true;
        this.lastError = error;
    }

    /**
     * The stream was made anew: drop what is queued and in flight (the engine's replay sends it
     * again). Record numbers go on from where they were, so a frame of the old numbering that landed
     * in the new stream meanwhile shows up as a gap, never as a later frame's duplicate.
     */
    public synchronized void restart() {
        queue.clear();
        inFlight = null;
        sendDue = false;
        notifyAll();
    }

    /** Nothing queued and nothing in flight. */
    public synchronized boolean idle() {
        return inFlight == null && queue.isEmpty();
    }

    /** Counters: frames, batches, clears, duplicate acks, retries, queued records, next record, last seq, oversized. */
    public synchronized long[] counters() {
        return new long[] {
            frames,
            batches,
            clears,
            duplicates,
            retries,
            queue.size() + (inFlight == null ? 0 : inFlight.records().size()),
            nextRec,
            lastSeqPublished,
            oversized
        };
    }

    /** The last publish error, or null. */
    public synchronized String lastError() {
        return lastError;
    }
}
