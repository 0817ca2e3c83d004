package io.kvprefix.zmq.internal;

import io.kvprefix.zmq.SubscriberStats.Counter;
import java.util.ArrayDeque;

/**
 * Sequence tracking for one engine: decides, batch by batch, what to apply, when to ask the
 * engine's replay socket for missing batches, and when a range is lost for good. It owns no socket;
 * the {@link Port} does the I/O. Times are {@link System#nanoTime()} values passed in by the caller.
 *
 * <p>The rules:
 * <ul>
 *   <li><b>In order:</b> a live batch with the next sequence number is applied.
 *   <li><b>Gap</b> (a live batch beyond the next number): with a replay endpoint, ask for everything
 *       from the next number on, and hold live batches back until the replay ends; batches the
 *       replay delivers are applied in order. Without one, or when the replay cannot deliver the
 *       range (its first answer is past the number asked for because the engine's buffer no longer
 *       holds it, it delivers nothing, it times out, or more than {@code maxPending} live batches
 *       pile up meanwhile), the range is lost: the worker is cleared (a <em>resync</em>) and
 *       application goes on from the first batch still available.
 *   <li><b>Holes in a replay</b> (answers skip a number after the first one: the engine's ROUTER
 *       dropped some under load): ask again from the missing number, up to
 *       {@value #MAX_REPLAY_ATTEMPTS} requests per gap, then resync.
 *   <li><b>Duplicates:</b> a batch at or after the start of the latest replay but before the next
 *       number was already applied (live copies of replayed batches are still in flight when the
 *       replay ends) and is dropped. Once a live batch has been applied in order again, no earlier
 *       number can legitimately arrive.
 *   <li><b>Restart:</b> any other batch whose number went backwards means the publisher restarted
 *       (vLLM numbers from 0 per process, and a new process starts with an empty cache): the worker is
 *       cleared and the batch is taken as a new start.
 *   <li><b>Start:</b> the first batch seen (also after a restart) is taken as it is if its number is
 *       0. If it is later and there is a replay endpoint, everything from 0 is requested first, as
 *       Dynamo does, to rebuild what the engine cached before the subscription began; if the engine's
 *       buffer no longer reaches back to 0 (or there is no replay endpoint), the subscription starts
 *       incomplete (a <em>late join</em>): stores whose parents were never seen will answer
 *       {@code parent_block_not_found}.
 *   <li><b>Resume</b> ({@link #resume}): the index was restored from a snapshot that holds every
 *       batch up to some number {@code L}. With a replay endpoint, everything from {@code L + 1} is
 *       requested at once; an empty answer means nothing was published since, and an answer that
 *       starts past {@code L + 1} means the engine's buffer no longer reaches back: the range is lost
 *       (a resync, as for any gap). Without one, the next live batch tells: {@code L + 1} goes on, a
 *       later one is a lost range, an earlier one a restart.
 * </ul>
 *
 * <p>Thread-safety: not thread-safe; one thread (the subscriber's I/O thread) drives it.
 */
public final class EngineSync {
    /** Replay requests per gap when answers keep arriving with holes. */
    public static final int MAX_REPLAY_ATTEMPTS = 3;

    private static final long NONE = -1;

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

    private record Pending(long seq, byte[] payload) {}

    private final Port port;
    private final EngineCounters counters;
    private final boolean hasReplay;
    private final boolean bootstrapReplay;
    private final long replayTimeoutNanos;
    private final int maxPending;

    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    /** The next sequence number expected, or NONE: the next batch starts (or restarts) the stream. */
    private long next = NONE;
    /** Whether a batch arrived since the start (or the last restart): only the first may trigger a replay from 0. */
    private boolean started;
    /** Lower end of the window of numbers that count as duplicates (below {@link #next}), or NONE. */
    private long duplicatesFrom = NONE;

    private long lastApplied = NONE;

    private boolean replaying;
    private boolean bootstrapping;
    /** The replay in progress is the one {@link #resume} sent: an empty answer means a quiet engine. */
    private boolean resuming;

    private boolean replayAnswered;
    private boolean replayHole;
    private int replayAttempts;
    private long replayDeadline;

    /**
     * @param port the engine's I/O
     * @param counters where to count
     * @param hasReplay whether the engine has a replay endpoint
     * @param bootstrapReplay whether to request everything from 0 when the first batch seen is later
     * @param replayTimeoutNanos how long a replay may go without an answer before it is given up
     * @param maxPending how many live batches may wait for a replay before it is given up
     */
    public EngineSync(
            Port port,
            EngineCounters counters,
            boolean hasReplay,
            boolean bootstrapReplay,
            long replayTimeoutNanos,
            int maxPending) {
        this.port = port;
        this.counters = counters;
        this.hasReplay = hasReplay;
        this.bootstrapReplay = bootstrapReplay;
        this.replayTimeoutNanos = replayTimeoutNanos;
        this.maxPending = maxPending;
    }

    /**
     * Takes up the stream after batch {@code lastSeq}, which was applied before (restored from a
     * snapshot, or kept by an earlier process): the next batch expected is {@code lastSeq + 1}, and
     * with a replay endpoint everything from there is asked for at once. An empty answer means the
     * engine has published nothing since; an answer that starts later means the range is lost (a
     * resync). Call it before any batch arrives.
     */
    public void resume(long lastSeq, long now) {
        if (started || lastSeq < 0) {
            throw new IllegalStateException("resume before the first batch, from a batch number >= 0");
        }
        next = lastSeq + 1;
        lastApplied = lastSeq;
        started = true;
        port.log(false, "resuming after batch " + lastSeq);
        if (hasReplay) {
            resuming = true;
            replayAttempts = 1;
            sendReplay(next, now);
        }
    }

    /** A live batch arrived. */
    public void onLive(long seq, byte[] payload, long now) {
        counters.increment(Counter.BATCHES);
        pending.add(new Pending(seq, payload));
        if (replaying) {
            if (pending.size() <= maxPending) {
                return;
            }
            giveUpReplay("more than " + maxPending + " live batches arrived during the replay");
        }
        drain(now);
    }

    /** A replay answer with a batch arrived. */
    public void onReplayBatch(long seq, byte[] payload, long now) {
        if (!replaying) {
            counters.increment(Counter.STALE_REPLAY_ANSWERS);
            return;
        }
        replayDeadline = now + replayTimeoutNanos;
        if (replayHole) {
            return; // everything after a hole comes again with the next request
        }
        boolean first = !replayAnswered;
        replayAnswered = true;
        if (seq < next) {
            counters.increment(Counter.DUPLICATES);
        } else if (seq == next) {
            applyBatch(seq, payload);
            counters.increment(Counter.REPLAYED_BATCHES);
        } else if (first) {
            replayFailed("the engine's replay buffer starts at " + seq + ", after the missing " + next);
            applyBatch(seq, payload);
            counters.increment(Counter.REPLAYED_BATCHES);
        } else {
            replayHole = true;
        }
    }

    /** The replay's end marker arrived. */
    public void onReplayEnd(long now) {
        if (!replaying) {
            counters.increment(Counter.STALE_REPLAY_ANSWERS);
            return;
        }
        replaying = false;
        if (replayHole) {
            if (replayAttempts < MAX_REPLAY_ATTEMPTS) {
                port.log(
                        false,
                        "replay answers skipped batches after " + (next - 1) + "; asking again (attempt "
                                + (replayAttempts + 1) + " of " + MAX_REPLAY_ATTEMPTS + ")");
                sendReplay(next, now);
                replayAttempts++;
                return;
            }
            replayFailed("replay answers skipped batches " + MAX_REPLAY_ATTEMPTS + " times");
        } else if (!replayAnswered && !resuming) {
            replayFailed("the engine had nothing to replay from " + next);
        }
        bootstrapping = false;
        resuming = false;
        drain(now);
    }

    /** Time passes: gives up a replay that has not answered within the timeout. */
    public void onTick(long now) {
        if (replaying && now - replayDeadline > 0) {
            giveUpReplay("no replay answer within " + replayTimeoutNanos / 1_000_000 + " ms");
            drain(now);
        }
    }

    /** The sequence number of the last batch applied, or -1. */
    public long lastApplied() {
        return lastApplied;
    }

    /** Live batches waiting behind a replay. */
    public int pending() {
        return pending.size();
    }

    /** {@code waiting}, {@code live} or {@code replaying}. */
    public String state() {
        return replaying ? "replaying" : lastApplied == NONE && !started ? "waiting" : "live";
    }

    // ------------------------------------------------------------------ internals

    /** Applies held-back live batches in order until one starts a replay. */
    private void drain(long now) {
        while (!replaying && !pending.isEmpty()) {
            Pending p = pending.peek();
            if (handle(p.seq(), p.payload(), now)) {
                pending.poll();
            }
        }
    }

    /** Handles one live batch; false if it started a replay and must be handled again afterwards. */
    private boolean handle(long seq, byte[] payload, long now) {
        if (next == NONE) {
            if (!started && seq > 0) {
                started = true;
                if (hasReplay && bootstrapReplay) {
                    startReplay(0, true, now);
                    return false;
                }
                counters.increment(Counter.LATE_JOINS);
                port.log(false, "first batch seen is " + seq + " and there is no replay to fetch the earlier ones");
            }
            started = true;
            applyBatch(seq, payload);
            duplicatesFrom = NONE;
            return true;
        }
        if (seq == next) {
            applyBatch(seq, payload);
            duplicatesFrom = NONE;
            return true;
        }
        if (seq < next) {
            if (duplicatesFrom != NONE && seq >= duplicatesFrom) {
                counters.increment(Counter.DUPLICATES);
                return true;
            }
            counters.increment(Counter.RESTARTS);
            port.log(
                    true,
                    "sequence went back from " + (next - 1) + " to " + seq
                            + ": the publisher restarted; clearing its workers");
            port.clearWorkers();
            next = NONE;
            started = false;
            duplicatesFrom = NONE;
            return handle(seq, payload, now);
        }
        counters.increment(Counter.GAPS);
        counters.add(Counter.MISSED_BATCHES, seq - next);
        if (hasReplay) {
            port.log(false, "gap: expected " + next + ", got " + seq + "; requesting a replay");
            startReplay(next, false, now);
            return false;
        }
        loseRange("gap: expected " + next + ", got " + seq + ", and there is no replay endpoint");
        return handle(seq, payload, now);
    }

    private void startReplay(long from, boolean bootstrap, long now) {
        bootstrapping = bootstrap;
        if (bootstrap) {
            next = from;
        }
        replayAttempts = 1;
        sendReplay(from, now);
    }

    private void sendReplay(long from, long now) {
        replaying = true;
        replayAnswered = false;
        replayHole = false;
        duplicatesFrom = duplicatesFrom == NONE ? from : Math.min(duplicatesFrom, from);
        replayDeadline = now + replayTimeoutNanos;
        counters.increment(Counter.REPLAYS);
        if (!port.requestReplay(from)) {
            replayDeadline = now; // given up at the next tick
        }
    }

    private void giveUpReplay(String reason) {
        replaying = false;
        resuming = false;
        port.abandonReplay();
        replayFailed(reason);
        bootstrapping = false;
    }

    /** A replay could not deliver its range; at start-up that is a late join, not a failure. */
    private void replayFailed(String reason) {
        if (!bootstrapping) {
            counters.increment(Counter.REPLAY_FAILURES);
        }
        loseRange(reason);
    }

    /** The batches from {@link #next} on cannot be had: clear the worker (unless still starting) and start over. */
    private void loseRange(String reason) {
        if (bootstrapping) {
            counters.increment(Counter.LATE_JOINS);
            port.log(
                    false,
                    "cannot fetch the batches published before the subscription (" + reason
                            + "); starting from what is available");
        } else {
            counters.increment(Counter.RESYNCS);
            port.log(
                    true,
                    "lost batches for good (" + reason
                            + "); clearing the engine's workers and resuming from the live stream");
            port.clearWorkers();
        }
        next = NONE;
        started = true;
    }

    private void applyBatch(long seq, byte[] payload) {
        port.apply(seq, payload);
        lastApplied = seq;
        next = seq + 1;
    }
}
