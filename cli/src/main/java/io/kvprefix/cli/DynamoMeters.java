package io.kvprefix.cli;

import io.kvprefix.EventStatus;
import io.kvprefix.nats.DynamoSource;
import io.kvprefix.nats.DynamoStats;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
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
final class DynamoMeters {
    /** Not counters: the durable stream's sequences, served as gauges. */
    private static final Set<String> GAUGES = Set.of("stream_seq", "first_stream_seq");

    private final DynamoSource source;
    private final long target;
    private volatile DynamoStats last;
    private volatile boolean caughtUp;

    /** Meters of {@code source}; {@code target} is the durable stream's last sequence when it started (0: none). */
    DynamoMeters(DynamoSource source, long target) {
        this.source = source;
        this.target = target;
        this.last = source.stats();
    }

    void bindTo(MeterRegistry r) {
        String tag = source.source();
        for (String name : DynamoStats.counterNames()) {
            String meter = "kvprefix.dynamo." + name.replace('_', '.');
            if (GAUGES.contains(name)) {
                Gauge.builder(meter, this, m -> m.last.counter(name))
                        .description("durable mode: " + name.replace('_', ' ') + " applied (0: none)")
                        .tag("source", tag)
                        .register(r);
            } else {
                FunctionCounter.builder(meter, this, m -> m.last.counter(name))
                        .description(name.replace('_', ' ') + " (docs/ENGINES.md section 4.4)")
                        .tag("source", tag)
                        .register(r);
            }
        }
        for (EventStatus st : EventStatus.values()) {
            FunctionCounter.builder("kvprefix.dynamo.applied", this, m -> m.last.applied(st))
                    .description("events the index answered, by status")
                    .tag("source", tag)
                    .tag("status", st.wireName())
                    .register(r);
        }
        Gauge.builder("kvprefix.dynamo.publishers", this, m -> m.last.publishers())
                .description("event-plane publishers heard from (0 in durable mode)")
                .tag("source", tag)
                .register(r);
    }

    /** Takes the source's stats once for a scrape. */
    void refresh() {
        last = source.stats();
    }

    /** Null when ready, else why (docs/METRICS.md section 2). */
    String notReady() {
        DynamoStats s = source.stats();
        last = s;
        if (!caughtUp && s.counter("stream_seq") < target) {
            return "applied stream sequence " + s.counter("stream_seq") + " of " + target
                    + " (the stream's last when it started)";
        }
        caughtUp = true;
        return null;
    }
}
