package io.kvprefix.nats;

import io.kvprefix.zmq.EngineEndpoint;
import io.kvprefix.zmq.SubscriberStats;
import java.util.List;
import java.util.Objects;

/**
 * A snapshot of an {@link EventRelay}'s counters: per engine what reached the stream, and the
 * counters of the subscriber that reads the engines ({@link SubscriberStats}: batches, gaps,
 * replays, resyncs).
 *
 * <p>Thread-safety: immutable.
 *
 * @param stream the stream's name
 * @param streamResets times the stream was found gone or made anew, and re-created and re-filled
 *     from the engines (docs/FLEET.md section 3)
 * @param engines per engine, in the order they were added
 * @param subscriber the engine side
 */
public record RelayStats(String stream, long streamResets, List<EngineStats> engines, SubscriberStats subscriber) {
    public RelayStats {
        Objects.requireNonNull(stream, "stream");
        engines = List.copyOf(engines);
        Objects.requireNonNull(subscriber, "subscriber");
    }

    /**
     * One engine's side of the relay.
     *
     * <p>Thread-safety: immutable.
     *
     * @param engine the engine
     * @param subject its subject in the stream
     * @param frames frames acknowledged by the stream
     * @param batches batches in those frames
     * @param clears clears in those frames
     * @param duplicateAcks frames the stream had already (a resend of one that had landed)
     * @param retries frames sent again after a failure or a missing ack
     * @param queued records received and not yet acknowledged
     * @param nextRecord the number the next record gets
     * @param lastSeqPublished the engine sequence number of the last batch acknowledged, or -1
     * @param oversized batches too large for a frame, published as a clear instead
     * @param lastError the last publish error, or null once a frame has landed since
     */
    public record EngineStats(
            EngineEndpoint engine,
            String subject,
            long frames,
            long batches,
            long clears,
            long duplicateAcks,
            long retries,
            long queued,
            long nextRecord,
            long lastSeqPublished,
            long oversized,
            String lastError) {}

    /** A counter summed over the engines. */
    private long sum(java.util.function.ToLongFunction<EngineStats> f) {
        return engines.stream().mapToLong(f).sum();
    }

    /** Batches acknowledged by the stream, all engines. */
    public long batches() {
        return sum(EngineStats::batches);
    }

    /** Frames sent again after a failure or a missing ack, all engines. */
    public long retries() {
        return sum(EngineStats::retries);
    }

    /** One line for a log. */
    public String summary() {
        return engines.size() + " engines, " + streamResets + " stream resets, " + sum(EngineStats::frames)
                + " frames, " + batches() + " batches, "
                + sum(EngineStats::clears) + " clears, " + sum(EngineStats::retries) + " retries, "
                + sum(EngineStats::queued) + " queued; engines: " + subscriber.summary();
    }

    /**
     * One JSON object (one line): {@code {"stream":NAME,"frames":N,"batches":N,"clears":N,
     * "duplicate_acks":N,"retries":N,"queued":N,"oversized":N,"stream_resets":N,"engines":[{"endpoint":...,"subject":...,"frames":N,...,
     * "next_record":N,"last_seq":N,"last_error":...|null}],"subscriber":{SubscriberStats JSON}}}.
     */
    public String toJson() {
        StringBuilder sb = new StringBuilder(256 + 256 * engines.size());
        sb.append("{\"stream\":");
        Json.string(sb, stream);
        sb.append(",\"frames\":").append(sum(EngineStats::frames));
        sb.append(",\"batches\":").append(batches());
        sb.append(",\"clears\":").append(sum(EngineStats::clears));
        sb.append(",\"duplicate_acks\":").append(sum(EngineStats::duplicateAcks));
        sb.append(",\"retries\":").append(sum(EngineStats::retries));
        sb.append(",\"queued\":").append(sum(EngineStats::queued));
        sb.append(",\"oversized\":").append(sum(EngineStats::oversized));
        sb.append(",\"stream_resets\":").append(streamResets);
        sb.append(",\"engines\":[");
        for (int i = 0; i < engines.size(); i++) {
            EngineStats e = engines.get(i);
            sb.append(i > 0 ? "," : "").append("{\"endpoint\":");
            Json.string(sb, e.engine().endpoint());
            sb.append(",\"subject\":");
            Json.string(sb, e.subject());
            sb.append(",\"frames\":").append(e.frames());
            sb.append(",\"batches\":").append(e.batches());
            sb.append(",\"clears\":").append(e.clears());
            sb.append(",\"duplicate_acks\":").append(e.duplicateAcks());
            sb.append(",\"retries\":").append(e.retries());
            sb.append(",\"queued\":").append(e.queued());
            sb.append(",\"next_record\":").append(e.nextRecord());
            sb.append(",\"last_seq\":").append(e.lastSeqPublished());
            sb.append(",\"oversized\":").append(e.oversized());
            sb.append(",\"last_error\":");
            if (e.lastError() == null) {
                sb.append("null");
            } else {
                Json.string(sb, e.lastError());
            }
            sb.append('}');
        }
        sb.append("],\"subscriber\":").append(subscriber.toJson()).append('}');
        return sb.toString();
    }
}
