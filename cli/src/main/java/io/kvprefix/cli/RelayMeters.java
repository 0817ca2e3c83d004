package io.kvprefix.cli;

import io.kvprefix.nats.EventRelay;
import io.kvprefix.nats.RelayStats;
import io.kvprefix.nats.RelayStats.EngineStats;
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
 * last refresh took. The relay's engines are fixed when it starts. Its readiness is the subscriber's
 * ({@link ListenMetrics}), not {@link #notReady}.
 */
final class RelayMeters extends StatsMeters<RelayStats> {
    RelayMeters(EventRelay relay) {
        super(relay::stats, relay.stats(), 0);
    }

    @Override
    void bindTo(MeterRegistry r) {
        RelayStats first = last();
        counter(
                r,
                "kvprefix.relay.stream.resets",
                "the stream was found gone or made anew, re-created and re-filled",
                Tags.of("stream", first.stream()),
                s -> s.streamResets());
        for (int i = 0; i < first.engines().size(); i++) {
            EngineStats e = first.engines().get(i);
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
            gauge(
                    r,
                    "kvprefix.relay.queued",
                    "records received and not acknowledged yet",
                    t,
                    s -> s.engines().get(at).queued());
            gauge(
                    r,
                    "kvprefix.relay.publish.failing",
                    "1 while the last publish failed and no frame has landed since",
                    t,
                    s -> failing(s.engines().get(at)));
        }
    }

    private static double failing(EngineStats e) {
        return e.lastError() == null ? 0 : 1;
    }

    private void counter(MeterRegistry r, String name, String help, Tags t, int at, ToDoubleFunction<EngineStats> f) {
        counter(r, name, help, t, s -> f.applyAsDouble(s.engines().get(at)));
    }
}
