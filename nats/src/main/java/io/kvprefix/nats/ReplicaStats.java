package io.kvprefix.nats;

import io.kvprefix.EventStatus;
import io.kvprefix.nats.internal.EngineFeed;
import io.kvprefix.zmq.DecodeIssue;
import io.kvprefix.zmq.EngineEndpoint;
import io.kvprefix.zmq.SubscriberStats.EventKind;
import java.util.List;
import java.util.Objects;

/**
 * A snapshot of a {@link StreamReplica}'s counters, as {@code kvprefix listen --nats} prints them
 * (docs/FLEET.md section 4).
 *
 * <p>Thread-safety: immutable (the counter arrays are copies and not handed out).
 *
 * @param stream the stream's name
 * @param appliedSeq the stream sequence of the last message applied (0 if none)
 * @param streamLastSeq the stream's last sequence when the stats were taken, -1 if unknown
 * @param pending messages after the last one applied, as the server said with it, -1 before the first
 * @param resyncs times messages the replica needed had been dropped by the stream's retention
 * @param messages messages applied
 * @param badMessages messages skipped as unreadable
 * @param lastLagMicros lag of the last batch applied (engine publish to replica apply), µs, -1 if none
 * @param lagP50Micros median lag, µs, -1 if none
 * @param lagP99Micros 99th-percentile lag, µs, -1 if none
 * @param lagMaxMicros largest lag, µs
 * @param lagCount batches whose lag was measured
 * @param uptimeMillis time since the replica started consuming
 * @param bootstrapSeq the stream sequence of the snapshot the replica started from, -1 if none
 * @param bootstrapMillis how long finding, downloading and restoring that snapshot took, -1 if none
 * @param snapshotsPublished snapshots this replica published
 * @param streamResets times the stream was made anew (another creation time) and the replica cleared
 *     its index and read the new stream from its start (docs/FLEET.md section 4)
 * @param streamGone whether the stream was missing at the last check: what the index holds is stale
 * @param engines per engine (records, events per kind and status, decode issues), in order of their
 *     first message
 */
public record ReplicaStats(
        String stream,
        long appliedSeq,
        long streamLastSeq,
        long pending,
        long resyncs,
        long messages,
        long badMessages,
        long lastLagMicros,
        long lagP50Micros,
        long lagP99Micros,
        long lagMaxMicros,
        long lagCount,
        long uptimeMillis,
        long bootstrapSeq,
        long bootstrapMillis,
        long snapshotsPublished,
        long streamResets,
        boolean streamGone,
        List<EngineStats> engines) {
    public ReplicaStats {
        Objects.requireNonNull(stream, "stream");
        engines = List.copyOf(engines);
    }

    /**
     * One engine's records in the stream as this replica applied them.
     *
     * <p>Thread-safety: immutable.
     */
    public static final class EngineStats {
        private final EngineEndpoint engine;
        private final String subject;
        private final long nextRecord;
        private final long lastSeq;
        private final long[] c;

        EngineStats(EngineEndpoint engine, String subject, long nextRecord, long lastSeq, long[] counters) {
            this.engine = engine;
            this.subject = subject;
            this.nextRecord = nextRecord;
            this.lastSeq = lastSeq;
            this.c = counters.clone();
        }

        public EngineEndpoint engine() {
            return engine;
        }

        public String subject() {
            return subject;
        }

        /** The number of the next record expected. */
        public long nextRecord() {
            return nextRecord;
        }

        /** The engine sequence number of the last batch applied, -1 if none (or a clear came after it). */
        public long lastSeq() {
            return lastSeq;
        }

        /** Batches applied. */
        public long batches() {
            return c[EngineFeed.BATCHES];
        }

        /** Clears applied (ranges the relay lost, engine restarts). */
        public long clears() {
            return c[EngineFeed.CLEARS];
        }

        /** Records skipped because they had been applied. */
        public long duplicates() {
            return c[EngineFeed.DUPLICATES];
        }

        /** Records found missing between two frames (never written by a correct relay). */
        public long gaps() {
            return c[EngineFeed.GAPS];
        }

        /** Events the index refused with an exception. */
        public long applyErrors() {
            return c[EngineFeed.APPLY_ERRORS];
        }

        /** Frames that could not be read. */
        public long badFrames() {
            return c[EngineFeed.BAD_FRAMES];
        }

        /** Events of {@code kind} applied with {@code status}. */
        public long events(EventKind kind, EventStatus status) {
            return c[EngineFeed.eventSlot(kind, status)];
        }

        /** How often {@code issue} occurred. */
        public long issues(DecodeIssue issue) {
            return c[EngineFeed.issueSlot(issue)];
        }
    }

    /** Batches applied, all engines. */
    public long batches() {
        return engines.stream().mapToLong(EngineStats::batches).sum();
    }

    /** Events applied, all engines, kinds and statuses. */
    public long events() {
        long n = 0;
        for (EngineStats e : engines) {
            for (EventKind k : EventKind.values()) {
                for (EventStatus s : EventStatus.values()) {
                    n += e.events(k, s);
                }
            }
        }
        return n;
    }

    /** One line for a log. */
    public String summary() {
        return engines.size() + " engines, stream seq " + appliedSeq + " of " + streamLastSeq + ", " + batches()
                + " batches, " + events() + " events, " + resyncs + " resyncs, " + streamResets + " stream resets"
                + (streamGone ? ", the stream is gone (stale)" : "")
                + (lagCount > 0 ? ", lag p50 " + millis(lagP50Micros) + " ms p99 " + millis(lagP99Micros) + " ms" : "");
    }

    private static String millis(long micros) {
        return String.format(java.util.Locale.ROOT, "%.3f", micros / 1000.0);
    }

    /**
     * One JSON object (one line): {@code {"stream":NAME,"stream_seq":N,"stream_last_seq":N,"pending":N,
     * "resyncs":N,"messages":N,"bad_messages":N,"lag_ms":X,"lag_ms_p50":X,"lag_ms_p99":X,"lag_ms_max":X,
     * "lag_samples":N,"bootstrap_seq":N,"bootstrap_ms":N,"snapshots":N,"stream_resets":N,"stream_gone":B,"batches":N,"events":{"stored":{"ok":N,...},...},"engines":[{"endpoint":...,
     * "worker":W,"subject":...,"next_record":N,"last_seq":N,"batches":N,"clears":N,"duplicates":N,"gaps":N,
     * "apply_errors":N,"bad_frames":N,"events":{...},"decode_errors":{...},"ignored":{...},"notes":{...}}]}}};
     * lags are in milliseconds with microsecond digits, -1 when none was measured.
     */
    public String toJson() {
        StringBuilder sb = new StringBuilder(512 + 1024 * engines.size());
        sb.append("{\"stream\":");
        Json.string(sb, stream);
        sb.append(",\"stream_seq\":").append(appliedSeq);
        sb.append(",\"stream_last_seq\":").append(streamLastSeq);
        sb.append(",\"pending\":").append(pending);
        sb.append(",\"resyncs\":").append(resyncs);
        sb.append(",\"messages\":").append(messages);
        sb.append(",\"bad_messages\":").append(badMessages);
        sb.append(",\"lag_ms\":").append(lagMs(lastLagMicros));
        sb.append(",\"lag_ms_p50\":").append(lagMs(lagP50Micros));
        sb.append(",\"lag_ms_p99\":").append(lagMs(lagP99Micros));
        sb.append(",\"lag_ms_max\":").append(lagCount == 0 ? "-1" : millis(lagMaxMicros));
        sb.append(",\"lag_samples\":").append(lagCount);
        sb.append(",\"bootstrap_seq\":").append(bootstrapSeq);
        sb.append(",\"bootstrap_ms\":").append(bootstrapMillis);
        sb.append(",\"snapshots\":").append(snapshotsPublished);
        sb.append(",\"stream_resets\":").append(streamResets);
        sb.append(",\"stream_gone\":").append(streamGone);
        sb.append(",\"batches\":").append(batches());
        sb.append(",\"events\":");
        events(sb, null);
        sb.append(",\"engines\":[");
        for (int i = 0; i < engines.size(); i++) {
            sb.append(i > 0 ? "," : "");
            engine(sb, engines.get(i));
        }
        return sb.append("]}").toString();
    }

    /** One engine's object in {@link #toJson}. */
    private void engine(StringBuilder sb, EngineStats e) {
        sb.append("{\"endpoint\":");
        Json.string(sb, e.engine().endpoint());
        sb.append(",\"worker\":").append(Long.toUnsignedString(e.engine().workerId()));
        sb.append(",\"subject\":");
        Json.string(sb, e.subject());
        sb.append(",\"next_record\":").append(e.nextRecord());
        sb.append(",\"last_seq\":").append(e.lastSeq());
        sb.append(",\"batches\":").append(e.batches());
        sb.append(",\"clears\":").append(e.clears());
        sb.append(",\"duplicates\":").append(e.duplicates());
        sb.append(",\"gaps\":").append(e.gaps());
        sb.append(",\"apply_errors\":").append(e.applyErrors());
        sb.append(",\"bad_frames\":").append(e.badFrames());
        sb.append(",\"events\":");
        events(sb, e);
        for (DecodeIssue.Category cat : DecodeIssue.Category.values()) {
            sb.append(",\"")
                    .append(
                            switch (cat) {
                                case ERROR -> "decode_errors";
                                case IGNORED -> "ignored";
                                case NOTE -> "notes";
                            })
                    .append("\":{");
            boolean first = true;
            for (DecodeIssue d : DecodeIssue.values()) {
                if (d.category() == cat) {
                    sb.append(first ? "" : ",")
                            .append('"')
                            .append(d.wireName())
                            .append("\":")
                            .append(e.issues(d));
                    first = false;
                }
            }
            sb.append('}');
        }
        sb.append('}');
    }

    private void events(StringBuilder sb, EngineStats only) {
        sb.append('{');
        for (EventKind k : EventKind.values()) {
            sb.append(k.ordinal() > 0 ? "," : "")
                    .append('"')
                    .append(k.wireName())
                    .append("\":{");
            for (EventStatus s : EventStatus.values()) {
                long n = 0;
                for (EngineStats e : only == null ? engines : List.of(only)) {
                    n += e.events(k, s);
                }
                sb.append(s.ordinal() > 0 ? "," : "")
                        .append('"')
                        .append(s.wireName())
                        .append("\":")
                        .append(n);
            }
            sb.append('}');
        }
        sb.append('}');
    }

    private static String lagMs(long micros) {
        return micros < 0 ? "-1" : millis(micros);
    }
}
