package io.kvprefix.cli;

import io.kvprefix.EventStatus;
import io.kvprefix.nats.DynamoSource;
import io.kvprefix.nats.DynamoStats;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.Set;

/**
 * The meters and readiness of {@code listen --dynamo --metrics-port} (docs/METRICS.md sections 1
 * and 2): every {@link DynamoStats} counter as {@code kvprefix_dynamo_X_total}, the events applied by
 * status, the publishers heard from, and the stream sequences applied (durable mode). Ready once the
 * source reads: in event-plane mode at once (it is live from then on), in durable mode once it has
 * applied the stream up to its last sequence at the moment it started.
 *
 * <p>Thread-safety: {@link #refresh} and {@link #notReady} may be called from any thread; the meters
 * read the stats the last refresh took.
 */
final class DynamoMeters extends StatsMeters<DynamoStats> {
    /** Not counters: the durable stream's sequences, served as gauges. */
    private static final Set<String> GAUGES = Set.of("stream_seq", "first_stream_seq");

    private final String tag;

    /** Meters of {@code source}; {@code target} is the durable stream's last sequence when it started (0: none). */
    DynamoMeters(DynamoSource source, long target) {
        super(source::stats, source.stats(), target);
        this.tag = source.source();
    }

    @Override
    void bindTo(MeterRegistry r) {
        Tags t = Tags.of("source", tag);
        for (String name : DynamoStats.counterNames()) {
            String meter = "kvprefix.dynamo." + name.replace('_', '.');
            if (GAUGES.contains(name)) {
                gauge(
                        r,
                        meter,
                        "durable mode: " + name.replace('_', ' ') + " applied (0: none)",
                        t,
                        s -> s.counter(name));
            } else {
                counter(r, meter, name.replace('_', ' ') + " (docs/ENGINES.md section 4.4)", t, s -> s.counter(name));
            }
        }
        for (EventStatus st : EventStatus.values()) {
            counter(
                    r,
                    "kvprefix.dynamo.applied",
                    "events the index answered, by status",
                    t.and("status", st.wireName()),
                    s -> s.applied(st));
        }
        gauge(
                r,
                "kvprefix.dynamo.publishers",
                "event-plane publishers heard from (0 in durable mode)",
                t,
                s -> s.publishers());
    }

    @Override
    long appliedSequence(DynamoStats s) {
        return s.counter("stream_seq");
    }
}
