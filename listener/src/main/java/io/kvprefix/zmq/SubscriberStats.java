package io.kvprefix.zmq;

import io.kvprefix.EventStatus;
import io.kvprefix.zmq.internal.EngineCounters;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A snapshot of a {@link KvEventSubscriber}'s counters: per engine and in total (the total includes
 * engines removed since the subscriber started).
 *
 * <p>Per engine: batches received, events applied per kind and {@link EventStatus}, sequence gaps and
 * the batches they covered, replay requests and failures, resyncs (the worker cleared because a range
 * of batches was lost for good), publisher restarts, duplicates dropped, {@link DecodeIssue}s, and the
 * engine's current state, last applied sequence number, lag and batches waiting behind a replay.
 * {@link #toJson()} writes it all as one JSON object.
 *
 * <p>Thread-safety: immutable.
 */
public final class SubscriberStats {

    /** Event counters of one engine (or of all of them). Thread-safety: an immutable enum. */
    public enum Counter {
        /** Live batches received with a readable sequence number. */
        BATCHES("batches"),
        /** Batches applied from replay answers. */
        REPLAYED_BATCHES("replayed_batches"),
        /** Batches dropped because they had been applied already (live copies of replayed batches). */
        DUPLICATES("duplicates"),
        /** Sequence gaps detected on the live stream. */
        GAPS("gaps"),
        /** Batches the gaps covered (not received live). */
        MISSED_BATCHES("missed_batches"),
        /** Replay requests sent (at start, after a reconnection, for gaps, and again after holes, stalls and timeouts). */
        REPLAYS("replays"),
        /** Ranges a replay could not deliver (evicted from the engine's buffer, nothing to replay, requests that deliver nothing). */
        REPLAY_FAILURES("replay_failures"),
        /** Times the worker was cleared because batches were lost for good, then fed from the live stream again. */
        RESYNCS("resyncs"),
        /**
         * Times the publisher turned out to be another process (the sequence went back, its identity
         * changed, or the replayed last batch differs or is missing); the worker is cleared.
         */
        RESTARTS("restarts"),
        /** Subscriptions that started after the engine had published and could not fetch the earlier batches. */
        LATE_JOINS("late_joins"),
        /** Replay answers that arrived when no replay was in progress (dropped). */
        STALE_REPLAY_ANSWERS("stale_replay_answers"),
        /** Events the index refused with an exception (for example because it was closed). */
        APPLY_ERRORS("apply_errors"),
        /** Blocks of the stores the index applied {@code ok}. */
        BLOCKS_STORED("blocks_stored"),
        /** Block hashes of the removals the index applied {@code ok} (a removal naming an unknown hash is not counted). */
        BLOCKS_REMOVED("blocks_removed"),
        /**
         * Replay answers that contradict the request or the live stream (numbers below the one asked
         * for or not increasing, bytes that differ from the live copy, a buffer that starts past a live
         * batch, a live batch older than the start a replay claimed); never believed.
         */
        REPLAY_CONTRADICTIONS("replay_contradictions"),
        /** Times the live connection was re-established after it dropped (each one is checked through the replay). */
        RECONNECTS("reconnects"),
        /** Snapshot requests sent to a snapshot endpoint (docs/LISTENER.md section 8). */
        SNAPSHOT_REQUESTS("snapshot_requests"),
        /** Snapshots applied whole: the worker then holds the engine's compacted cache. */
        SNAPSHOTS_APPLIED("snapshots_applied"),
        /** Snapshots refused (damaged, incomplete, or a batch that failed to apply): the worker stays not synced. */
        SNAPSHOTS_REFUSED("snapshots_refused"),
        /** Snapshot requests that went unanswered for the replay timeout (then asked again). */
        SNAPSHOT_TIMEOUTS("snapshot_timeouts"),
        /** Idle heartbeats received on the live stream of an engine with a snapshot endpoint. */
        HEARTBEATS("heartbeats");

        private final String wireName;

        Counter(String wireName) {
            this.wireName = wireName;
        }

        /** The name used in the JSON form. */
        public String wireName() {
            return wireName;
        }
    }

    /** Kinds of applied event. Thread-safety: an immutable enum. */
    public enum EventKind {
        /** {@code BlockStored}. */
        STORED("stored"),
        /** {@code BlockRemoved}. */
        REMOVED("removed"),
        /** {@code AllBlocksCleared}. */
        CLEARED("cleared");

        private final String wireName;

        EventKind(String wireName) {
            this.wireName = wireName;
        }

        /** The name used in the JSON form. */
        public String wireName() {
            return wireName;
        }
    }

    /**
     * Counter values: {@link Counter}s, applied events per kind and status, and {@link DecodeIssue}s.
     *
     * <p>Thread-safety: immutable.
     */
    public static final class Counts {
        private final long[] v;

        /** Counts from a raw array in {@link EngineCounters}' layout (copied). */
        Counts(long[] raw) {
            if (raw.length != EngineCounters.SIZE) {
                throw new IllegalArgumentException(
                        "expected " + EngineCounters.SIZE + " counter values, got " + raw.length);
            }
            this.v = raw.clone();
        }

        /** The value of {@code counter}. */
        public long get(Counter counter) {
            return v[EngineCounters.index(counter)];
        }

        /** Events of {@code kind} applied with {@code status}. */
        public long events(EventKind kind, EventStatus status) {
            return v[EngineCounters.index(kind, status)];
        }

        /** Events of {@code kind} applied, any status. */
        public long events(EventKind kind) {
            long n = 0;
            for (EventStatus s : EventStatus.values()) {
                n += events(kind, s);
            }
            return n;
        }

        /** Events applied, any kind and status. */
        public long events() {
            long n = 0;
            for (EventKind k : EventKind.values()) {
                n += events(k);
            }
            return n;
        }

        /** How often {@code issue} occurred. */
        public long issues(DecodeIssue issue) {
            return v[EngineCounters.index(issue)];
        }

        /** All {@link DecodeIssue.Category#ERROR} issues together. */
        public long decodeErrors() {
            long n = 0;
            for (DecodeIssue i : DecodeIssue.values()) {
                if (i.category() == DecodeIssue.Category.ERROR) {
                    n += issues(i);
                }
            }
            return n;
        }

        Counts plus(Counts o) {
            long[] sum = v.clone();
            for (int i = 0; i < sum.length; i++) {
                sum[i] += o.v[i];
            }
            return new Counts(sum);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Counts c && Arrays.equals(v, c.v);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(v);
        }

        void appendJson(StringBuilder sb) {
            for (Counter c : Counter.values()) {
                sb.append('"').append(c.wireName()).append("\":").append(get(c)).append(',');
            }
            sb.append("\"events\":{");
            for (EventKind k : EventKind.values()) {
                if (k.ordinal() > 0) {
                    sb.append(',');
                }
                sb.append('"').append(k.wireName()).append("\":{");
                for (EventStatus s : EventStatus.values()) {
                    if (s.ordinal() > 0) {
                        sb.append(',');
                    }
                    sb.append('"').append(s.wireName()).append("\":").append(events(k, s));
                }
                sb.append('}');
            }
            sb.append("},\"decode_errors\":");
            issues(sb, DecodeIssue.Category.ERROR);
            sb.append(",\"ignored\":");
            issues(sb, DecodeIssue.Category.IGNORED);
            sb.append(",\"notes\":");
            issues(sb, DecodeIssue.Category.NOTE);
        }

        private void issues(StringBuilder sb, DecodeIssue.Category category) {
            sb.append('{');
            boolean first = true;
            for (DecodeIssue i : DecodeIssue.values()) {
                if (i.category() == category) {
                    sb.append(first ? "" : ",")
                            .append('"')
                            .append(i.wireName())
                            .append("\":")
                            .append(issues(i));
                    first = false;
                }
            }
            sb.append('}');
        }
    }

    /**
     * One engine's state and counters.
     *
     * <p>Thread-safety: immutable.
     *
     * @param engine the engine
     * @param state {@code waiting} (nothing applied yet), {@code live}, {@code replaying} or {@code absent}; with
     *     a snapshot endpoint {@code snapshotting} (a snapshot awaited) or {@code unsynced} (one refused)
     * @param lastSeq the sequence number of the last batch applied, or -1
     * @param lagMillis wall-clock time between the publisher stamping the last applied batch and its
     *        application, in milliseconds (includes clock skew between the hosts), or -1
     * @param pendingBatches live batches waiting for a replay to finish
     * @param counts the engine's counters
     */
    public record EngineStats(
            EngineEndpoint engine, String state, long lastSeq, long lagMillis, int pendingBatches, Counts counts) {
        public EngineStats {
            Objects.requireNonNull(engine, "engine");
            Objects.requireNonNull(state, "state");
            Objects.requireNonNull(counts, "counts");
        }
    }

    private final List<EngineStats> engines;
    private final Counts total;

    SubscriberStats(List<EngineStats> engines, Counts retired) {
        this.engines = List.copyOf(engines);
        Counts t = retired;
        for (EngineStats e : engines) {
            t = t.plus(e.counts());
        }
        this.total = t;
    }

    /** The engines subscribed to now, in the order they were added. */
    public List<EngineStats> engines() {
        return engines;
    }

    /** The engine subscribed at {@code endpoint}, if any. */
    public Optional<EngineStats> engine(String endpoint) {
        return engines.stream()
                .filter(e -> e.engine().endpoint().equals(endpoint))
                .findFirst();
    }

    /** Counters summed over every engine, those removed included. */
    public Counts total() {
        return total;
    }

    /**
     * True when no replay is outstanding: no engine is waiting for a replay's answers or holding
     * live batches back behind one. An engine that has sent nothing yet ({@code waiting}) does not
     * count as outstanding: an idle engine publishes nothing, and nothing is known to be missing.
     * This is what {@code kvprefix listen}'s {@code /health/ready} reports.
     */
    public boolean caughtUp() {
        for (EngineStats e : engines) {
            if (e.state().equals("replaying") || e.pendingBatches() > 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Why the subscriber is not ready, or null (docs/METRICS.md section 2): an engine is ready once it
     * synced (its replay answered, or a batch applied: {@code live}), or, with {@code absentIsReady},
     * once declared {@code absent}; {@code replaying} engines, and {@code waiting} ones with a replay
     * endpoint (their start-up replay has not answered), hold readiness back. An engine without one
     * counts as synced from the start: nothing can be asked of it, and an idle engine publishes
     * nothing. The reason names each engine that is not ready and its state.
     */
    public String notReady(boolean absentIsReady) {
        StringBuilder why = new StringBuilder();
        for (EngineStats e : engines) {
            boolean ready = e.state().equals("live") && e.pendingBatches() == 0
                    || e.state().equals("waiting")
                            && e.engine().replayEndpoint().isEmpty()
                    || absentIsReady && e.state().equals("absent");
            if (!ready) {
                why.append(why.isEmpty() ? "" : "; ")
                        .append("engine ")
                        .append(e.engine().endpoint())
                        .append(' ')
                        .append(e.pendingBatches() > 0 && e.state().equals("live") ? "replaying" : e.state());
            }
        }
        return why.isEmpty() ? null : why.toString();
    }

    /** One line for a log: engines, events, gaps, replays, resyncs, decode errors, the worst lag. */
    public String summary() {
        long maxLag = engines.stream().mapToLong(EngineStats::lagMillis).max().orElse(-1);
        long live = engines.stream().filter(e -> e.state().equals("live")).count();
        return engines.size() + " engines (" + live + " live), " + total.get(Counter.BATCHES) + " batches, "
                + total.events() + " events (" + (total.events() - okEvents()) + " not ok), "
                + total.get(Counter.GAPS) + " gaps, " + total.get(Counter.REPLAYS) + " replays, "
                + total.get(Counter.RESYNCS) + " resyncs, " + total.decodeErrors() + " decode errors"
                + (maxLag >= 0 ? ", max lag " + maxLag + " ms" : "");
    }

    private long okEvents() {
        long n = 0;
        for (EventKind k : EventKind.values()) {
            n += total.events(k, EventStatus.OK);
        }
        return n;
    }

    /**
     * The snapshot as one JSON object (one line):
     * {@code {"total":{counters...},"engines":[{"endpoint":...,"worker":W,"dp_rank":R|null,"replay":...|null,
     * "format":...,"snapshot":... (only with one),"state":...,"last_seq":N,"lag_ms":N,"pending":N, counters...}, ...]}}, where the counters are
     * every {@link Counter} by its wire name, {@code "events":{"stored":{"ok":N,...},...}},
     * {@code "decode_errors":{...}}, {@code "ignored":{...}} and {@code "notes":{...}}. Numbers are
     * unsigned decimals.
     */
    public String toJson() {
        StringBuilder sb = new StringBuilder(512 + 1024 * engines.size());
        sb.append("{\"total\":{");
        total.appendJson(sb);
        sb.append("},\"engines\":[");
        for (int i = 0; i < engines.size(); i++) {
            EngineStats e = engines.get(i);
            EngineEndpoint ep = e.engine();
            sb.append(i > 0 ? "," : "").append("{\"endpoint\":");
            jsonString(sb, ep.endpoint());
            sb.append(",\"worker\":")
                    .append(Long.toUnsignedString(ep.workerId()))
                    .append(",\"dp_rank\":")
                    .append(
                            ep.dpRank().isPresent()
                                    ? Integer.toUnsignedString(ep.dpRank().getAsInt())
                                    : "null")
                    .append(",\"replay\":");
            if (ep.replayEndpoint().isPresent()) {
                jsonString(sb, ep.replayEndpoint().get());
            } else {
                sb.append("null");
            }
            sb.append(",\"format\":");
            jsonString(sb, ep.format());
            if (ep.snapshotEndpoint().isPresent()) { // only then: the line is unchanged without the opt-in
                sb.append(",\"snapshot\":");
                jsonString(sb, ep.snapshotEndpoint().get());
            }
            sb.append(",\"state\":\"")
                    .append(e.state())
                    .append("\",\"last_seq\":")
                    .append(e.lastSeq())
                    .append(",\"lag_ms\":")
                    .append(e.lagMillis())
                    .append(",\"pending\":")
                    .append(e.pendingBatches())
                    .append(',');
            e.counts().appendJson(sb);
            sb.append('}');
        }
        return sb.append("]}").toString();
    }

    private static void jsonString(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                sb.append('\\').append(c);
            } else if (c < 0x20) {
                sb.append(String.format("\\u%04x", (int) c));
            } else {
                sb.append(c);
            }
        }
        sb.append('"');
    }

    @Override
    public String toString() {
        return "SubscriberStats[" + summary() + "]";
    }
}
