package io.kvprefix.metrics;

import io.kvprefix.EventStatus;
import io.kvprefix.IndexStats;
import io.kvprefix.PrefixIndex;
import io.kvprefix.metrics.internal.Snapshots;
import io.kvprefix.metrics.internal.TimedPrefixIndex;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.util.Objects;
import java.util.function.ToDoubleFunction;

/**
 * The meters of a {@link PrefixIndex} (docs/METRICS.md section 1): its size and memory as gauges,
 * its rebuilds and events per status as counters, all read from {@link PrefixIndex#stats()} at
 * scrape time (one snapshot per scrape, at most one a second otherwise). Match latency needs the
 * index to be wrapped: {@link #timed}.
 *
 * <pre>{@code
 * PrefixIndex index = PrefixIndexMetrics.timed(PrefixIndex.create(config), registry); // match latency
 * new PrefixIndexMetrics(index).bindTo(registry);                                     // the rest
 * }</pre>
 *
 * <p>Thread-safety: thread-safe; the meters read the index from the scraping thread. A closed index
 * reports NaN.
 */
public final class PrefixIndexMetrics implements MeterBinder {
    /** Name of the match-latency timer ({@code kvprefix_index_match_seconds} in Prometheus). */
    public static final String MATCH_TIMER = "kvprefix.index.match";

    private final PrefixIndex index;
    private final Snapshots<IndexStats> stats;
    private final Tags tags;

    /** Meters for {@code index}, without extra tags. */
    public PrefixIndexMetrics(PrefixIndex index) {
        this(index, Tags.empty());
    }

    /** Meters for {@code index}, each with {@code tags} (for example the index's name, if there are several). */
    public PrefixIndexMetrics(PrefixIndex index, Iterable<io.micrometer.core.instrument.Tag> tags) {
        this.index = Objects.requireNonNull(index, "index");
        this.stats = new Snapshots<>(index::stats, Duration.ofSeconds(1).toNanos());
        this.tags = Tags.of(tags);
    }

    /**
     * Wraps {@code index} in a decorator that times every match call into the histogram
     * {@code kvprefix_index_match_seconds} (buckets from 1 us to 100 ms); everything else is forwarded,
     * and closing the wrapper closes the index. The index itself is not changed.
     */
    public static PrefixIndex timed(PrefixIndex index, MeterRegistry registry) {
        Timer t = Timer.builder(MATCH_TIMER)
                .description("Time of one match call (hash and match for token requests)")
                .serviceLevelObjectives(
                        micros(1),
                        micros(2),
                        micros(5),
                        micros(10),
                        micros(20),
                        micros(50),
                        micros(100),
                        micros(200),
                        micros(500),
                        micros(1000),
                        micros(2000),
                        micros(5000),
                        micros(10_000),
                        micros(100_000))
                .register(registry);
        return new TimedPrefixIndex(index, t);
    }

    private static Duration micros(long us) {
        return Duration.ofNanos(us * 1000);
    }

    /** Takes a fresh snapshot of the index's statistics now (a scrape calls it first). */
    public void refresh() {
        stats.refresh();
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        gauge(registry, "kvprefix.index.workers", "Workers the index knows", null, s -> s.workers());
        gauge(registry, "kvprefix.index.blocks", "(worker, block) pairs held", null, s -> s.blocks());
        gauge(registry, "kvprefix.index.entries", "Distinct blocks stored", null, s -> s.entries());
        gauge(registry, "kvprefix.index.capacity", "Records of the index's child table", null, s -> s.capacity());
        Gauge.builder("kvprefix.index.memory", this, m -> value(m, s -> s.nativeBytes()))
                .description("Memory the index holds")
                .baseUnit("bytes")
                .tags(tags.and("area", "native"))
                .register(registry);
        Gauge.builder("kvprefix.index.memory", this, m -> value(m, s -> s.heapBytes()))
                .description("Memory the index holds")
                .baseUnit("bytes")
                .tags(tags.and("area", "heap"))
                .register(registry);
        FunctionCounter.builder("kvprefix.index.rebuilds", this, m -> value(m, s -> s.rebuilds()))
                .description("Child-table rebuilds (growth, dropping tombstones)")
                .tags(tags)
                .register(registry);
        for (EventStatus st : EventStatus.values()) {
            FunctionCounter.builder("kvprefix.index.events", this, m -> m.index.eventCount(st))
                    .description("Events applied to the index, by status")
                    .tags(tags.and("status", st.wireName()))
                    .register(registry);
        }
    }

    private void gauge(MeterRegistry registry, String name, String help, String unit, ToDoubleFunction<IndexStats> f) {
        Gauge.builder(name, this, m -> value(m, f))
                .description(help)
                .baseUnit(unit)
                .tags(tags)
                .register(registry);
    }

    private static double value(PrefixIndexMetrics m, ToDoubleFunction<IndexStats> f) {
        IndexStats s = m.stats.get();
        return s == null ? Double.NaN : f.applyAsDouble(s);
    }
}
