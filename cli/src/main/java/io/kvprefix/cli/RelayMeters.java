package io.kvprefix.cli;

import io.kvprefix.nats.EventRelay;
import io.kvprefix.nats.RelayStats;
import io.kvprefix.nats.RelayStats.EngineStats;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.function.ToDoubleFunction;

/**
 * A relay's meters for {@code relay --metrics-port} (docs/METRICS.md sections 1 and 2): per engine
 * (labels {@code engine} and {@code worker}, as the subscriber's) the frames the stream acknowledged,
 * batches and clears in them, duplicate acks, retries, records queued and whether its last publish
 * failed; the stream's resets (label {@code stream}). The engine side (replay requests, gaps, lag)
 * is the subscriber's meters, bound beside these by {@link ListenMetrics#watch(EventRelay, boolean)}.
 *
 * <p>Thread-safety: {@link #refresh} may be called from any thread; the meters read the stats the
 * last refresh took. The relay's engines are fixed when it starts.
 */
final class RelayMeters {
    private final EventRelay relay;
    private volatile RelayStats last;

    RelayMeters(EventRelay relay) {
        this.relay = relay;
        this.last = relay.stats();
    }

    void bindTo(MeterRegistry r) {
        FunctionCounter.builder("kvprefix.relay.stream.resets", this, m -> m.last.streamResets())
                .description("the stream was found gone or made anew, re-created and re-filled")
                .tag("stream", last.stream())
                .register(r);
        for (int i = 0; i < last.engines().size(); i++) {
            EngineStats e = last.engines().get(i);
            Tags t = Tags.of(
                    "engine",
                    e.engine().endpoint(),
                    "worker",
                    Long.toUnsignedString(e.engine().workerId()));
            int at = i;
            counter(r, "kvprefix.relay.acks", "frames the stream acknowledged", t, at, EngineStats::frames);
            counter(r, "kvprefix.relay.batches", "batches published to the stream", t, at, EngineStats::batches);
            counter(r, "kvprefix.relay.clears", "clears published to the stream", t, at, EngineStats::clears);
            counter(
                    r,
                    "kvprefix.relay.duplicate.acks",
                    "frames the stream had already",
                    t,
                    at,
                    EngineStats::duplicateAcks);
            counter(r, "kvprefix.relay.retries", "frames sent again after an error", t, at, EngineStats::retries);
            counter(
                    r,
                    "kvprefix.relay.oversized",
                    "batches too large for a frame, published as a clear",
                    t,
                    at,
                    EngineStats::oversized);
            Gauge.builder(
                            "kvprefix.relay.queued",
                            this,
                            m -> m.last.engines().get(at).queued())
                    .description("records received and not acknowledged yet")
                    .tags(t)
                    .register(r);
            Gauge.builder(
                            "kvprefix.relay.publish.failing",
                            this,
                            m -> failing(m.last.engines().get(at)))
                    .description("1 while the last publish failed and no frame has landed since")
                    .tags(t)
                    .register(r);
        }
    }

    private static double failing(EngineStats e) {
        return e.lastError() == null ? 0 : 1;
    }

    private void counter(MeterRegistry r, String name, String help, Tags t, int at, ToDoubleFunction<EngineStats> f) {
        FunctionCounter.builder(
                        name, this, m -> f.applyAsDouble(m.last.engines().get(at)))
                .description(help)
                .tags(t)
                .register(r);
    }

    /** Takes the relay's stats once for a scrape. */
    void refresh() {
        last = relay.stats();
    }
}
