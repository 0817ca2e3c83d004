package io.kvprefix.metrics;

import io.kvprefix.EventStatus;
import io.kvprefix.metrics.internal.Snapshots;
import io.kvprefix.zmq.DecodeIssue;
import io.kvprefix.zmq.KvEventSubscriber;
import io.kvprefix.zmq.SubscriberStats;
import io.kvprefix.zmq.SubscriberStats.EngineStats;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * The meters of a {@link KvEventSubscriber}, per engine (labels {@code engine}, its endpoint, and
 * {@code worker}, its worker id): every counter of {@link SubscriberStats}, events by kind and
 * status, decode issues, lag, pending batches, last sequence and replaying, plus the engines and
 * whether no replay is outstanding (what {@code /health/ready} reports); docs/METRICS.md section 1
 * names each.
 *
 * <p>Values are read from {@link KvEventSubscriber#stats()}: one snapshot per scrape (at most one a
 * second otherwise). Engines added or removed later get or lose their meters at the next
 * {@link #refresh()}, which {@link MetricsServer} calls before each scrape (call it yourself before
 * scraping another way).
 *
 * <p>Thread-safety: thread-safe.
 */
public final class SubscriberMetrics implements MeterBinder {
    private record View(SubscriberStats stats, Map<String, EngineStats> engines) {}

    private final Supplier<SubscriberStats> subscriber;
    private final Tags tags;
    private final Snapshots<View> view;
    private final Map<String, List<Meter>> meters = new HashMap<>();
    private MeterRegistry registry;

    /** Meters for {@code subscriber}, without extra tags. */
    public SubscriberMetrics(KvEventSubscriber subscriber) {
        this(subscriber, Tags.empty());
    }

    /** Meters for {@code subscriber}, each with {@code tags}. */
    public SubscriberMetrics(KvEventSubscriber subscriber, Iterable<Tag> tags) {
        this(Objects.requireNonNull(subscriber, "subscriber")::stats, tags);
    }

    /**
     * Meters over {@code stats}, each with {@code tags}: for a subscriber another component owns, such
     * as the one inside a {@code kvprefix relay} (docs/METRICS.md section 2).
     */
    public SubscriberMetrics(Supplier<SubscriberStats> stats, Iterable<Tag> tags) {
        this.subscriber = Objects.requireNonNull(stats, "stats");
        this.tags = Tags.of(tags);
        this.view = new Snapshots<>(this::take, Duration.ofSeconds(1).toNanos());
    }

    private View take() {
        SubscriberStats s = subscriber.get();
        Map<String, EngineStats> byEndpoint = new LinkedHashMap<>();
        for (EngineStats e : s.engines()) {
            byEndpoint.put(e.engine().endpoint(), e);
        }
        return new View(s, byEndpoint);
    }

    @Override
    public synchronized void bindTo(MeterRegistry registry) {
        if (this.registry != null) {
            throw new IllegalStateException("SubscriberMetrics is bound already; make one per registry");
        }
        this.registry = registry;
        Gauge.builder("kvprefix.subscriber.engines", this, m -> {
                    View v = m.view.get();
                    return v == null ? Double.NaN : v.engines().size();
                })
                .description("Engines subscribed to")
                .tags(tags)
                .register(registry);
        Gauge.builder("kvprefix.subscriber.caught.up", this, m -> {
                    View v = m.view.get();
                    return v == null ? Double.NaN : v.stats().caughtUp() ? 1 : 0;
                })
                .description("1 when no engine has a replay outstanding (the readiness of kvprefix listen)")
                .tags(tags)
                .register(registry);
        refresh();
    }

    /** Takes a fresh snapshot, and registers the meters of new engines and removes those of engines gone. */
    public synchronized void refresh() {
        View v = view.refresh();
        if (registry == null || v == null) {
            return;
        }
        for (EngineStats e : v.engines().values()) {
            meters.computeIfAbsent(e.engine().endpoint(), k -> register(e));
        }
        meters.entrySet().removeIf(en -> {
            if (v.engines().containsKey(en.getKey())) {
                return false;
            }
            en.getValue().forEach(registry::remove);
            return true;
        });
    }

    private List<Meter> register(EngineStats e) {
        String endpoint = e.engine().endpoint();
        Tags t = tags.and(
                "engine", endpoint, "worker", Long.toUnsignedString(e.engine().workerId()));
        List<Meter> out = new ArrayList<>();
        for (SubscriberStats.Counter c : SubscriberStats.Counter.values()) {
            out.add(counter(
                    "kvprefix.subscriber." + c.wireName().replace('_', '.'),
                    c.wireName().replace('_', ' '),
                    t,
                    endpoint,
                    s -> s.counts().get(c)));
        }
        for (SubscriberStats.EventKind k : SubscriberStats.EventKind.values()) {
            for (EventStatus st : EventStatus.values()) {
                out.add(counter(
                        "kvprefix.subscriber.events",
                        "Engine events applied, by kind and status",
                        t.and("kind", k.wireName(), "status", st.wireName()),
                        endpoint,
                        s -> s.counts().events(k, st)));
            }
        }
        for (DecodeIssue i : DecodeIssue.values()) {
            String name = switch (i.category()) {
                case ERROR -> "kvprefix.subscriber.decode.errors";
                case IGNORED -> "kvprefix.subscriber.ignored.events";
                case NOTE -> "kvprefix.subscriber.notes";
            };
            out.add(counter(
                    name,
                    "Decode issues, by issue",
                    t.and("issue", i.wireName()),
                    endpoint,
                    s -> s.counts().issues(i)));
        }
        gauges(t, endpoint, out);
        return out;
    }

    /** The engine's gauges: lag, batches held, last sequence, replaying. */
    private void gauges(Tags t, String endpoint, List<Meter> out) {
        out.add(gauge(
                "kvprefix.subscriber.lag",
                "seconds",
                "Publisher stamp to application, last batch",
                t,
                endpoint,
                s -> s.lagMillis() < 0 ? Double.NaN : s.lagMillis() / 1000.0));
        out.add(gauge(
                "kvprefix.subscriber.pending.batches",
                null,
                "Live batches held behind a replay",
                t,
                endpoint,
                s -> s.pendingBatches()));
        out.add(gauge(
                "kvprefix.subscriber.last.sequence",
                null,
                "Sequence number of the last batch applied",
                t,
                endpoint,
                s -> s.lastSeq()));
        out.add(gauge(
                "kvprefix.subscriber.replaying",
                null,
                "1 while a replay is outstanding",
                t,
                endpoint,
                s -> s.state().equals("replaying") ? 1 : 0));
    }

    private Meter counter(String name, String help, Tags t, String endpoint, ToDoubleFunction<EngineStats> f) {
        return FunctionCounter.builder(name, this, m -> m.read(endpoint, f))
                .description(help)
                .tags(t)
                .register(registry);
    }

    private Meter gauge(
            String name, String unit, String help, Tags t, String endpoint, ToDoubleFunction<EngineStats> f) {
        return Gauge.builder(name, this, m -> m.read(endpoint, f))
                .description(help)
                .baseUnit(unit)
                .tags(t)
                .register(registry);
    }

    private double read(String endpoint, ToDoubleFunction<EngineStats> f) {
        View v = view.get();
        EngineStats e = v == null ? null : v.engines().get(endpoint);
        return e == null ? Double.NaN : f.applyAsDouble(e);
    }
}
