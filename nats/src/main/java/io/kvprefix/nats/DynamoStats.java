package io.kvprefix.nats;

import io.kvprefix.EventStatus;
import io.kvprefix.nats.internal.DynamoCore;
import java.util.List;
import java.util.Locale;

/**
 * What a {@link DynamoSource} has read and applied (docs/ENGINES.md section 4.4): messages, events,
 * decode errors, the event-plane sequence gaps, repeats and restarts, the workers cleared for them,
 * the events skipped and why, and how the index was bootstrapped.
 *
 * <p>Thread-safety: immutable.
 */
public final class DynamoStats {
    private final String mode;
    private final String source;
    private final String bootstrap;
    private final long[] counters;
    private final long[] statuses;
    private final int publishers;
    private final String lastError;

    DynamoStats(String mode, String source, String bootstrap, DynamoCore core) {
        this.mode = mode;
        this.source = source;
        this.bootstrap = bootstrap;
        this.counters = core.counters();
        this.statuses = core.statuses();
        this.publishers = core.publishers();
        this.lastError = core.lastError();
    }

    /** A counter by its name ({@code messages}, {@code events}, {@code sequence_gaps}, ...; docs/ENGINES.md section 4.4). */
    public long counter(String name) {
        int i = DynamoCore.NAMES.indexOf(name);
        if (i < 0) {
            throw new IllegalArgumentException("no Dynamo counter " + name + "; there are " + DynamoCore.NAMES);
        }
        return counters[i];
    }

    /** Every counter's name, in the order {@link #toJson()} writes them. */
    public static List<String> counterNames() {
        return DynamoCore.NAMES;
    }

    /** Events the index answered with {@code status}. */
    public long applied(EventStatus status) {
        return statuses[status.ordinal()];
    }

    /** Event-plane publishers heard from (0 in durable mode). */
    public int publishers() {
        return publishers;
    }

    /** How the index started: {@code stream-start} (durable mode) or {@code live} (event plane). */
    public String bootstrap() {
        return bootstrap;
    }

    /** One line for the periodic status. */
    public String summary() {
        return String.format(
                Locale.ROOT,
                "dynamo %s %s: %d messages, %d events (%d ok), %d decode errors, %d gaps, %d restarts, %d workers cleared",
                mode,
                source,
                counter("messages"),
                counter("events"),
                applied(EventStatus.OK),
                counter("decode_errors"),
                counter("sequence_gaps"),
                counter("restarts"),
                counter("workers_cleared"));
    }

    /** The stats as one JSON object: mode, source, bootstrap, every counter, the statuses, the last error. */
    public String toJson() {
        StringBuilder sb = new StringBuilder("{\"mode\":");
        Json.string(sb, mode);
        sb.append(",\"source\":");
        Json.string(sb, source);
        sb.append(",\"bootstrap\":");
        Json.string(sb, bootstrap);
        sb.append(",\"publishers\":").append(publishers);
        for (int i = 0; i < counters.length; i++) {
            sb.append(",\"").append(DynamoCore.NAMES.get(i)).append("\":").append(counters[i]);
        }
        sb.append(",\"statuses\":{");
        for (EventStatus s : EventStatus.values()) {
            sb.append(s.ordinal() == 0 ? "" : ",")
                    .append('"')
                    .append(s.wireName())
                    .append("\":");
            sb.append(statuses[s.ordinal()]);
        }
        sb.append("},\"last_error\":");
        if (lastError == null) {
            sb.append("null");
        } else {
            Json.string(sb, lastError);
        }
        return sb.append('}').toString();
    }

    @Override
    public String toString() {
        return toJson();
    }
}
