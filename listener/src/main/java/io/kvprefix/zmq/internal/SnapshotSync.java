package io.kvprefix.zmq.internal;

import io.kvprefix.zmq.SubscriberStats.Counter;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Objects;

/**
 * The snapshot-protocol state machine for one engine (provisional vLLM PR #57789, behind
 * {@code format=vllm-snapshot}; docs/LISTENER.md section 8). On start, and whenever the publisher's
 * UUID changes (a restart), it clears the worker and asks the snapshot endpoint for the engine's
 * compacted cache; live batches that arrive meanwhile are held. A checked {@link SnapshotReply} is
 * applied after a clear, then the held batches after its resume point, in order: those at or before
 * it are dropped, a gap after it clears and asks again. Idle heartbeats carry the last published
 * number: a heartbeat past what was applied is a gap. It fails closed: a refused or failing snapshot
 * leaves the worker cleared and {@link #synced()} false until a later snapshot applies whole.
 *
 * <p>Thread-safety: not thread-safe; one thread (the subscriber's I/O thread) drives it.
 */
public final class SnapshotSync {
    /** What the state machine asks of its engine. */
    public interface Port {
        /** Decode and apply one batch (a snapshot batch when {@code seq} is -1); throws if it cannot. */
        void apply(long seq, byte[] payload);

        /** Send a snapshot request; false if it could not be sent. */
        boolean requestSnapshot();

        /** Apply {@code Cleared} to every worker this engine feeds. */
        void clearWorkers();

        /** Report an event worth a log line ({@code warning}: state was lost). */
        void log(boolean warning, String message);
    }

    private record Held(long seq, byte[] payload) {}

    private final Port port;
    private final EngineCounters counters;
    private final int maxHeld;
    private final ArrayDeque<Held> held = new ArrayDeque<>();
    private String uuid;
    private boolean synced;
    private boolean waiting;
    /** A snapshot was refused: nothing is asked again until the publisher's UUID changes. */
    private boolean failedClosed;

    private long lastApplied = -1;
    private long heartbeats;
    private long snapshotsApplied;
    private long snapshotsRefused;
    private long dropped;

    /** A state machine that holds at most {@code maxHeld} live batches while a snapshot is awaited. */
    public SnapshotSync(Port port, int maxHeld) {
        this(port, maxHeld, new EngineCounters());
    }

    /** As {@link #SnapshotSync(Port, int)}, counting restarts, gaps, snapshots and heartbeats in {@code counters}. */
    public SnapshotSync(Port port, int maxHeld, EngineCounters counters) {
        this.port = Objects.requireNonNull(port, "port");
        this.counters = Objects.requireNonNull(counters, "counters");
        if (maxHeld < 1) {
            throw new IllegalArgumentException("maxHeld must be positive: " + maxHeld);
        }
        this.maxHeld = maxHeld;
    }

    /** Start: clear the worker and ask for the engine's snapshot. */
    public void start() {
        resync("start", true);
    }

    /**
     * Asks for a snapshot again without clearing (the worker holds nothing applied since the last
     * clear): an unanswered or unsent request. Held batches are kept. Not after a refusal.
     */
    public void retry(String reason) {
        if (!synced && !failedClosed) {
            resync(reason, false);
        }
    }

    /** A live batch numbered {@code seq} from the publisher {@code id}. */
    public void onLive(String id, long seq, byte[] payload) {
        counters.increment(Counter.BATCHES);
        if (restarted(id)) {
            held.add(new Held(seq, payload));
            return;
        }
        if (waiting) {
            if (held.size() >= maxHeld) {
                held.clear();
                resync("more than " + maxHeld + " live batches arrived while the snapshot was awaited", true);
            }
            held.add(new Held(seq, payload));
            return;
        }
        if (!synced) {
            return;
        }
        if (seq <= lastApplied) {
            dropped++;
            counters.increment(Counter.DUPLICATES);
        } else if (seq == lastApplied + 1) {
            applyLive(seq, payload);
        } else {
            counters.increment(Counter.GAPS);
            counters.add(Counter.MISSED_BATCHES, seq - lastApplied - 1);
            counters.increment(Counter.RESYNCS);
            resync("gap: batch " + seq + " after " + lastApplied, true);
        }
    }

    /** An idle heartbeat from {@code id} whose last published batch is {@code lastSeq}. */
    public void onHeartbeat(String id, long lastSeq) {
        heartbeats++;
        counters.increment(Counter.HEARTBEATS);
        if (restarted(id) || waiting || !synced) {
            return;
        }
        if (lastSeq > lastApplied) {
            counters.increment(Counter.GAPS);
            counters.add(Counter.MISSED_BATCHES, lastSeq - lastApplied);
            counters.increment(Counter.RESYNCS);
            resync("heartbeat says batch " + lastSeq + " was published, " + lastApplied + " applied", true);
        }
    }

    /** The snapshot endpoint's answer, as frames after the delimiter. */
    public void onSnapshotFrames(List<byte[]> frames) {
        if (!waiting) {
            counters.increment(Counter.STALE_REPLAY_ANSWERS);
            port.log(false, "snapshot answer nobody asked for (late or repeated); ignored");
            return;
        }
        SnapshotReply reply;
        try {
            reply = SnapshotReply.parse(frames);
        } catch (IllegalArgumentException e) {
            refuse(e.getMessage());
            return;
        }
        if (uuid != null && !uuid.equals(reply.uuid())) {
            port.log(true, "snapshot from publisher " + reply.uuid() + " while " + uuid + " is live; asking again");
            resync("stale snapshot", true);
            return;
        }
        uuid = reply.uuid();
        port.clearWorkers();
        try {
            for (byte[] b : reply.batches()) {
                port.apply(-1, b);
            }
        } catch (RuntimeException e) {
            refuse("snapshot batch failed to apply: " + e.getMessage());
            return;
        }
        waiting = false;
        synced = true;
        snapshotsApplied++;
        counters.increment(Counter.SNAPSHOTS_APPLIED);
        lastApplied = reply.resumeSeq();
        ArrayDeque<Held> after = new ArrayDeque<>(held);
        held.clear();
        for (Held h : after) {
            onLive(uuid, h.seq(), h.payload());
        }
    }

    private boolean restarted(String id) {
        if (id == null || id.equals(uuid)) {
            return false;
        }
        if (uuid == null) {
            uuid = id;
            return false;
        }
        String was = uuid;
        uuid = id;
        held.clear();
        failedClosed = false;
        counters.increment(Counter.RESTARTS);
        resync("publisher UUID " + was + " became " + id + " (restart)", true);
        return true;
    }

    private void refuse(String reason) {
        snapshotsRefused++;
        counters.increment(Counter.SNAPSHOTS_REFUSED);
        port.clearWorkers();
        synced = false;
        waiting = false;
        failedClosed = true;
        held.clear();
        port.log(true, "snapshot refused, worker not synced: " + reason);
    }

    private void resync(String reason, boolean clear) {
        if (clear) {
            port.clearWorkers();
        }
        synced = false;
        failedClosed = false;
        waiting = port.requestSnapshot();
        counters.increment(Counter.SNAPSHOT_REQUESTS);
        port.log(!"start".equals(reason), "asking for a snapshot: " + reason);
    }

    private void applyLive(long seq, byte[] payload) {
        try {
            port.apply(seq, payload);
            lastApplied = seq;
        } catch (RuntimeException e) {
            resync("batch " + seq + " failed to apply: " + e.getMessage(), true);
        }
    }

    /** Whether the worker holds a whole snapshot plus its contiguous live suffix. */
    public boolean synced() {
        return synced;
    }

    /**
     * {@code snapshotting} (a snapshot awaited or to be asked for), {@code live} (synced) or
     * {@code unsynced} (a snapshot was refused: failed closed until the publisher's UUID changes).
     */
    public String state() {
        return synced ? "live" : failedClosed ? "unsynced" : "snapshotting";
    }

    /** Live batches held while a snapshot is awaited. */
    public int held() {
        return held.size();
    }

    /** Whether a snapshot request is outstanding. */
    public boolean waiting() {
        return waiting;
    }

    /** The last live number applied (a snapshot's resume point counts), or -1. */
    public long lastApplied() {
        return lastApplied;
    }

    /** The publisher UUID in force, or null before the first snapshot or live batch. */
    public String uuid() {
        return uuid;
    }

    /** Heartbeats seen (they keep an idle stream known-alive). */
    public long heartbeats() {
        return heartbeats;
    }

    /** Snapshots applied whole. */
    public long snapshotsApplied() {
        return snapshotsApplied;
    }

    /** Snapshots refused (damaged, incomplete or failing to apply). */
    public long snapshotsRefused() {
        return snapshotsRefused;
    }

    /** Live batches dropped as already covered by the snapshot or already applied. */
    public long dropped() {
        return dropped;
    }
}
