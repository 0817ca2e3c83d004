package io.kvprefix.zmq.internal;

import io.kvprefix.BlockHasher;
import io.kvprefix.zmq.SubscriberStats.Counter;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Sequence tracking for one engine: decides, batch by batch, what to apply, when to ask the
 * engine's replay socket (a vLLM-style ROUTER) for batches, and when a range is lost for good. It
 * owns no socket; the {@link Port} does the I/O. Times are {@link System#nanoTime()} values passed
 * in by the caller. It implements the rules of docs/LISTENER.md section 3 (start, anchor, gaps,
 * progress-based requests with at most {@value #MAX_FUTILE_ATTEMPTS} futile ones in a row, lost
 * ranges, contradictions, duplicates, restarts, reconnections).
 *
 * <p>Thread-safety: not thread-safe; one thread (the subscriber's I/O thread) drives it.
 */
public final class EngineSync {
    /** Attempts in a row that apply nothing before a range is given up. */
    public static final int MAX_FUTILE_ATTEMPTS = 4;
    /** The first backoff after a futile attempt; it doubles up to the replay timeout. */
    public static final long FIRST_BACKOFF_NANOS = 100_000_000L;
    /** How long a start-up request nobody answered waits before it is sent again anyway. */
    public static final long DEFERRED_NANOS = 30_000_000_000L;

    private static final long NONE = ReplayAttempt.NONE;

    /** What the state machine asks of its engine. */
    public interface Port {
        /** Decode and apply the batch with sequence number {@code seq}. */
        void apply(long seq, byte[] payload);

        /** Send a replay request for every buffered batch from {@code fromSeq} on; false if it could not be sent. */
        boolean requestReplay(long fromSeq);

        /** Forget the replay in progress, so its late answers cannot be taken for a later one's (reconnect the socket). */
        void abandonReplay();

        /** Apply {@code Cleared} to every worker this engine feeds. */
        void clearWorkers();

        /** Report an event worth a log line ({@code warning}: state was lost). */
        void log(boolean warning, String message);
    }

    private record Held(long seq, byte[] payload) {}

    private final Port port;
    private final EngineCounters counters;
    private final boolean hasReplay;
    private final long replayTimeoutNanos;
    private final long stallNanos;
    private final int maxPending;

    private final ArrayDeque<Held> pending = new ArrayDeque<>();
    /** Replay answers past a hole, by number, applied once the hole is filled. */
    private final TreeMap<Long, byte[]> stash = new TreeMap<>();

    /** The next number to apply, or NONE: the next live batch starts the stream where it is. */
    private long next;
    /** The first number applied since the last start, restart or resync (NONE: none yet). */
    private long stretchFrom = NONE;
    /** Whether that stretch starts where a replay said the engine's buffer starts. */
    private boolean stretchFromReplay;
    /** Whether the index holds batches of this engine (applied or restored): losing a range then clears it. */
    private boolean holdsState;
    /** Whether a replay answered in full since the last start or restart: an idle engine is synced by it. */
    private boolean synced;

    private long lastApplied = NONE;
    private long lastHash;
    private boolean lastHashKnown;
    private long lastLive = NONE;
    private String identity;
    private boolean identitySeen;

    private ReplayAttempt attempt;
    /** A start-up request waits for the engine to show up (a live batch or a connection). */
    private boolean deferred;
    /** When a deferred request is sent anyway (the replay socket may have been down alone). */
    private long deferredUntil;

    private int futile;
    private long backoff = FIRST_BACKOFF_NANOS;

    /**
     * @param port the engine's I/O
     * @param counters where to count
     * @param hasReplay whether the engine has a replay endpoint
     * @param start where the stream starts: 0, or the number after the last batch a restored index
     *     holds of this engine (with {@code startHash}, that batch's {@link #hash}, if known)
     * @param startHash the hash of batch {@code start - 1}, or null if unknown (or {@code start} is 0)
     * @param replayTimeoutNanos how long a request may go without its first answer
     * @param maxPending how many live batches may wait for a replay before it is given up
     */
    public EngineSync(
            Port port,
            EngineCounters counters,
            boolean hasReplay,
            long start,
            Long startHash,
            long replayTimeoutNanos,
            int maxPending) {
        if (start < 0) {
            throw new IllegalArgumentException("start must be >= 0, got " + start);
        }
        this.port = port;
        this.counters = counters;
        this.hasReplay = hasReplay;
        this.replayTimeoutNanos = replayTimeoutNanos;
        this.stallNanos = Math.clamp(replayTimeoutNanos / 10, 50_000_000L, 500_000_000L);
        this.maxPending = maxPending;
        this.next = start;
        if (start > 0) {
            holdsState = true;
            lastApplied = start - 1;
            lastHashKnown = startHash != null;
            lastHash = startHash == null ? 0 : startHash;
        }
    }

    /** The hash by which a replayed batch is compared with the one applied: XXH3-64 (seed 0) of its payload bytes. */
    public static long hash(byte[] payload) {
        return BlockHasher.xxh3(payload, 0);
    }

    // ------------------------------------------------------------------ inputs

    /** The sockets are open: with a replay endpoint, the engine is asked at once. */
    public void start(long now) {
        if (hasReplay) {
            begin(now, 0);
        }
    }

    /** A live batch arrived; {@code id} is the publisher's identity if its frames carry one, else null. */
    public void onLive(long seq, String id, byte[] payload, long now) {
        counters.increment(Counter.BATCHES);
        if (identitySeen && !Objects.equals(id, identity)) {
            String was = identity;
            identity = id;
            restart("the publisher's identity changed from " + was + " to " + id, new Held(seq, payload), now);
            return;
        }
        identity = id;
        identitySeen = true;
        if (lastLive != NONE && seq <= lastLive) {
            restart("sequence went back from " + lastLive + " to " + seq, new Held(seq, payload), now);
            return;
        }
        if (lastLive != NONE && seq > lastLive + 1) {
            counters.increment(Counter.GAPS);
            counters.add(Counter.MISSED_BATCHES, seq - lastLive - 1);
        }
        lastLive = seq;
        pending.add(new Held(seq, payload));
        if (attempt != null) {
            if (pending.size() > maxPending) {
                giveUp("more than " + maxPending + " live batches arrived during the replay", now);
            }
            return;
        }
        if (deferred) {
            deferred = false;
            begin(now, 0);
            return;
        }
        drain(now);
    }

    /** A replay answer with a batch arrived. */
    public void onReplayBatch(long seq, byte[] payload, long now) {
        ReplayAttempt a = attempt;
        if (a == null || !a.sent) {
            counters.increment(Counter.STALE_REPLAY_ANSWERS);
            return;
        }
        a.answered = true;
        a.lastAnswerAt = now;
        if (seq < a.from || (a.lastSeq != NONE && seq <= a.lastSeq)) {
            a.contradictions++;
            counters.increment(Counter.REPLAY_CONTRADICTIONS);
            if (a.contradictions == 1) {
                port.log(false, "replay answer " + seq + " contradicts the request from " + a.from + " (ignored)");
            }
            return;
        }
        boolean first = a.lastSeq == NONE;
        if (a.awaitsAnchor()) {
            a.lastSeq = seq;
            if (seq == a.anchor) {
                if (hash(payload) != lastHash) {
                    restart("batch " + seq + " as the engine replays it differs from the one applied", null, now);
                }
                return;
            }
            startsAt(seq, payload, now, "the engine no longer has batch " + a.anchor + ", the last one applied");
            return;
        }
        a.lastSeq = seq;
        if (seq < next) {
            return; // applied already, from the stash or a live copy
        }
        if (seq == next) {
            replayed(a, seq, payload, now);
        } else if (first) {
            startsAt(seq, payload, now, "the engine's replay buffer starts at " + seq + ", after the missing " + next);
        } else {
            a.hole = true;
            if (stash.size() < maxPending) {
                stash.putIfAbsent(seq, payload);
            }
        }
    }

    /** The replay's end marker arrived. */
    public void onReplayEnd(long now) {
        ReplayAttempt a = attempt;
        if (a == null || !a.sent) {
            counters.increment(Counter.STALE_REPLAY_ANSWERS);
            return;
        }
        attempt = null; // over, and its socket is in step again
        if (a.lastSeq != NONE) {
            boolean gapRemains = !pending.isEmpty() && pending.peek().seq() > next;
            if (a.hole || (gapRemains && a.applied == 0)) {
                retry(now, a.applied > 0); // a complete answer that fills nothing of a gap is futile too
            } else {
                finish(now, false); // everything the engine had was delivered
            }
        } else if (a.contradictions > 0) {
            retry(now, false);
        } else if (a.anchor != NONE) {
            restart("the engine has nothing at or after batch " + a.anchor + ", the last one applied", null, now);
        } else if (pending.isEmpty() || pending.peek().seq() <= next) {
            finish(now, false); // nothing published (since the restored state) yet, or nothing is missing
        } else {
            retry(now, false); // maybe asked before it published the batches: again, bounded
        }
    }

    /** The live socket completed a connection ({@code reconnect}: after losing one). */
    public void onConnected(boolean reconnect, long now) {
        if (reconnect) {
            counters.increment(Counter.RECONNECTS);
        }
        if (!hasReplay) {
            return;
        }
        if (deferred) {
            deferred = false;
            begin(now, 0);
        } else if (reconnect && attempt != null) {
            if (attempt.sent) {
                port.abandonReplay(); // its answers may come from a process that has since replaced the engine
            }
            attempt = null;
            begin(now, 0);
        } else if (reconnect && next != NONE) {
            port.log(false, "live connection re-established; checking batch " + lastApplied + " with the engine");
            begin(now, 0);
        }
    }

    /** Time passes: sends a request whose backoff is over, and ends one that is overdue or stalled. */
    public void onTick(long now) {
        ReplayAttempt a = attempt;
        if (a == null) {
            if (deferred && now - deferredUntil >= 0) {
                deferred = false;
                begin(now, 0);
            }
            return;
        }
        if (!a.sent) {
            if (now - a.sendAt >= 0) {
                send(now);
            }
            return;
        }
        boolean overdue = a.answered ? now - a.lastAnswerAt > stallNanos : now - a.deadline > 0;
        if (overdue) {
            // no answer in time, or the answers stopped without an end marker (the ROUTER dropped the rest)
            port.abandonReplay();
            if (!a.answered) {
                port.log(false, "no replay answer within " + replayTimeoutNanos / 1_000_000 + " ms");
            }
            retry(now, a.applied > 0);
        }
    }

    // ------------------------------------------------------------------ gauges

    /** The sequence number of the last batch applied (or restored), or -1. */
    public long lastApplied() {
        return lastApplied;
    }

    /** Whether {@link #lastHash()} is known. */
    public boolean lastHashKnown() {
        return lastHashKnown;
    }

    /** The {@link #hash} of the last batch applied (meaningful if {@link #lastHashKnown()}). */
    public long lastHash() {
        return lastHash;
    }

    /** Live batches waiting behind a replay. */
    public int pending() {
        return pending.size();
    }

    /**
     * {@code waiting}, {@code live}, {@code replaying} or {@code absent}: nothing applied and the
     * start-up replay given up until the engine shows up (docs/LISTENER.md section 2, step 2). An
     * engine that answered its replay with nothing to apply (an idle one) is {@code live}: synced.
     */
    public String state() {
        if (attempt != null) {
            return "replaying";
        }
        if (!holdsState && lastApplied == NONE && !synced) {
            return deferred ? "absent" : "waiting";
        }
        return "live";
    }

    // ------------------------------------------------------------------ internals

    /** Applies held-back live batches in order until one starts a replay. */
    private void drain(long now) {
        while (attempt == null && !pending.isEmpty()) {
            Held p = pending.peek();
            if (next == NONE || p.seq() == next) {
                pending.poll();
                applyBatch(p.seq(), p.payload());
            } else if (p.seq() < next) {
                if (stretchFrom != NONE && p.seq() >= stretchFrom) {
                    pending.poll();
                    counters.increment(Counter.DUPLICATES);
                } else if (stretchFromReplay) {
                    counters.increment(Counter.REPLAY_CONTRADICTIONS);
                    lose(
                            "live batch " + p.seq() + " is older than the start the replay claimed (" + stretchFrom
                                    + ")",
                            p.seq(),
                            false,
                            false,
                            now);
                } else {
                    pending.poll();
                    restart("live batch " + p.seq() + " is older than the state held (" + next + ")", p, now);
                }
            } else {
                if (hasReplay) {
                    port.log(false, "gap: expected " + next + ", got " + p.seq() + "; requesting a replay");
                    begin(now, 0);
                } else {
                    lose(
                            "gap: expected " + next + ", got " + p.seq() + ", and there is no replay endpoint",
                            NONE,
                            false,
                            false,
                            now);
                }
            }
        }
    }

    /** Starts an attempt (anchored at the last batch applied, if its bytes are known), sent after {@code delay}. */
    private void begin(long now, long delay) {
        if (next == NONE) {
            drain(now);
            return;
        }
        long anchor = lastHashKnown && lastApplied == next - 1 ? lastApplied : NONE;
        attempt = new ReplayAttempt(anchor != NONE ? anchor : next, anchor, now + delay);
        if (delay <= 0) {
            send(now);
        }
    }

    private void send(long now) {
        ReplayAttempt a = attempt;
        a.sent = true;
        a.deadline = now + replayTimeoutNanos;
        counters.increment(Counter.REPLAYS);
        if (!port.requestReplay(a.from)) {
            a.deadline = now; // ended at the next tick
        }
    }

    /** Applies replayed batch {@code seq} (the next one), then whatever the stash holds after it. */
    private void replayed(ReplayAttempt a, long seq, byte[] payload, long now) {
        Held h = pending.peek();
        if (h != null && h.seq() == seq && !Arrays.equals(h.payload(), payload)) {
            counters.increment(Counter.REPLAY_CONTRADICTIONS);
            lose("replayed batch " + seq + " differs from its live copy", seq, false, true, now);
            return;
        }
        applyReplayed(a, seq, payload);
        for (Map.Entry<Long, byte[]> e; (e = stash.firstEntry()) != null && e.getKey() <= next; ) {
            stash.pollFirstEntry();
            if (e.getKey() == next) {
                applyReplayed(a, e.getKey(), e.getValue());
            }
        }
        if (lastLive != NONE && next > lastLive) {
            finish(now, true); // caught up with the live stream: the rest of the answer is not needed
        }
    }

    private void applyReplayed(ReplayAttempt a, long seq, byte[] payload) {
        applyBatch(seq, payload);
        a.applied++;
        counters.increment(Counter.REPLAYED_BATCHES);
        Held h = pending.peek();
        if (h != null && h.seq() == seq) {
            pending.poll();
            counters.increment(Counter.DUPLICATES); // its live copy
        }
    }

    /** The engine's first answer {@code seq} is past the number needed: the range before it is gone. */
    private void startsAt(long seq, byte[] payload, long now, String reason) {
        Held h = pending.peek();
        if (h != null && seq > h.seq()) {
            counters.increment(Counter.REPLAY_CONTRADICTIONS);
            if (h.seq() == next) { // nothing is missing: the live stream goes on
                port.log(false, reason + ", past live batch " + h.seq() + " (ignored)");
                endAttempt(true);
                drain(now);
            } else {
                lose(reason + ", which starts past live batch " + h.seq(), h.seq(), false, true, now);
            }
            return;
        }
        lose(reason, seq, true, true, now);
        replayed(attempt, seq, payload, now);
    }

    /**
     * The batches from {@link #next} up to {@code resumeAt} cannot be had: clears the worker if the
     * index holds state of this engine (a resync; else a late join) and goes on from {@code resumeAt}
     * (NONE: the next live batch), within the current replay if {@code fromReplay}, else from the live
     * stream (the replay is dropped).
     */
    private void lose(String reason, long resumeAt, boolean fromReplay, boolean replayFailed, long now) {
        if (holdsState) {
            counters.increment(Counter.RESYNCS);
            if (replayFailed) {
                counters.increment(Counter.REPLAY_FAILURES);
            }
            port.log(true, "lost batches for good (" + reason + "); clearing the engine's workers and resuming");
            port.clearWorkers();
            holdsState = false;
        } else {
            counters.increment(Counter.LATE_JOINS);
            port.log(
                    false,
                    "cannot fetch the batches published before the subscription (" + reason
                            + "); starting from what is available");
        }
        stash.clear();
        next = resumeAt;
        stretchFrom = resumeAt;
        stretchFromReplay = fromReplay;
        if (!fromReplay) {
            endAttempt(true);
            drain(now);
        }
    }

    /** The replay did what was needed: the live stream takes over. */
    private void finish(long now, boolean early) {
        if (early) {
            port.abandonReplay(); // the rest of its answers is not needed
        }
        stash.clear();
        attempt = null;
        futile = 0;
        backoff = FIRST_BACKOFF_NANOS;
        synced = true;
        drain(now);
    }

    /** An attempt ended without completing: the next goes out at once after progress, after a backoff if not. */
    private void retry(long now, boolean progress) {
        attempt = null;
        if (progress) {
            futile = 0;
            backoff = FIRST_BACKOFF_NANOS;
        } else if (++futile >= MAX_FUTILE_ATTEMPTS) {
            giveUp(MAX_FUTILE_ATTEMPTS + " replay requests in a row delivered nothing", now);
            return;
        }
        // live batches that are next now need no replay
        while (next != NONE && !pending.isEmpty() && pending.peek().seq() <= next) {
            Held h = pending.poll();
            if (h.seq() == next) {
                applyBatch(h.seq(), h.payload());
            } else {
                counters.increment(Counter.DUPLICATES);
            }
        }
        if (lastLive != NONE && next != NONE && next > lastLive) {
            finish(now, false);
            return;
        }
        long delay = progress ? 0 : backoff;
        if (!progress) {
            backoff = Math.min(backoff * 2, replayTimeoutNanos);
        }
        begin(now, delay);
    }

    /** The replay cannot deliver: go on from the live stream, or wait for the engine to show up. */
    private void giveUp(String reason, long now) {
        endAttempt(true);
        futile = 0;
        backoff = FIRST_BACKOFF_NANOS;
        Held h = pending.peek();
        if (h == null) {
            counters.increment(Counter.REPLAY_FAILURES); // counted even when nothing was applied yet
            deferred = true;
            deferredUntil = now + DEFERRED_NANOS;
            port.log(
                    false,
                    reason + "; asking again when the engine shows up (or in " + DEFERRED_NANOS / 1_000_000_000L
                            + " s)");
        } else if (next != NONE && h.seq() <= next) {
            port.log(false, reason + "; going on with the live stream (nothing is missing)");
            drain(now);
        } else {
            lose(reason, h.seq(), false, true, now);
        }
    }

    private void endAttempt(boolean abandon) {
        if (attempt != null) {
            if (abandon && attempt.sent) {
                port.abandonReplay();
            }
            attempt = null;
        }
    }

    /** The publisher is another process: clear, drop what is held, start again from 0. */
    private void restart(String reason, Held keep, long now) {
        endAttempt(true);
        counters.increment(Counter.RESTARTS);
        port.log(true, reason + ": the publisher restarted; clearing its workers");
        port.clearWorkers();
        pending.clear();
        stash.clear();
        next = 0;
        stretchFrom = NONE;
        stretchFromReplay = false;
        holdsState = false;
        synced = false;
        lastApplied = NONE;
        lastHashKnown = false;
        lastLive = NONE;
        futile = 0;
        backoff = FIRST_BACKOFF_NANOS;
        deferred = false;
        if (keep != null) {
            pending.add(keep);
            lastLive = keep.seq();
        }
        if (hasReplay) {
            begin(now, 0);
        } else {
            drain(now);
        }
    }

    private void applyBatch(long seq, byte[] payload) {
        port.apply(seq, payload);
        lastApplied = seq;
        lastHash = hash(payload);
        lastHashKnown = true;
        holdsState = true;
        next = seq + 1;
        if (stretchFrom == NONE) {
            stretchFrom = seq;
        }
    }
}
