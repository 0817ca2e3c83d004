package io.kvprefix.cli;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * What the long-running commands' meters of one stats source share ({@link DynamoMeters},
 * {@link ReplicaMeters}, {@link RelayMeters}; docs/METRICS.md sections 1 and 2): the stats the last
 * scrape took, gauges and counters that read them, and the readiness of a stream reader, which is
 * ready once it has applied the stream up to the sequence that was the stream's last when it
 * started (and stays ready from then on).
 *
 * <p>Thread-safety: {@link #refresh} and {@link #notReady} may be called from any thread; the meters
 * read the stats the last refresh took.
 *
 * @param <S> the source's stats
 */
abstract class StatsMeters<S> {
    private final Supplier<S> source;
    private final long target;
    private volatile S last;
    private volatile boolean caughtUp;

    /** Meters of {@code source}, first read as {@code atStart}; readiness waits for sequence {@code target}. */
    StatsMeters(Supplier<S> source, S atStart, long target) {
        this.source = source;
        this.last = atStart;
        this.target = target;
    }

    /** Registers the meters in {@code r}. */
    abstract void bindTo(MeterRegistry r);

    /** The stream sequence {@code s} says was applied last (readiness compares it with the target). */
    long appliedSequence(S s) {
        return 0;
    }

    /** Why {@code s} is not ready whatever the sequence (checked first), or null. */
    String stale(S s) {
        return null;
    }

    /** The stats the last refresh took. */
    final S last() {
        return last;
    }

    /** Takes the source's stats once for a scrape. */
    final void refresh() {
        last = source.get();
    }

    /** Null when ready, else why (docs/METRICS.md section 2). */
    final String notReady() {
        S s = source.get();
        last = s;
        String why = stale(s);
        if (why != null) {
            return why;
        }
        long applied = appliedSequence(s);
        if (!caughtUp && applied < target) {
            return "applied stream sequence " + applied + " of " + target + " (the stream's last when it started)";
        }
        caughtUp = true;
        return null;
    }

    /** A gauge {@code name} of the last stats, {@code f} of them. */
    final void gauge(MeterRegistry r, String name, String help, Tags tags, ToDoubleFunction<S> f) {
        Gauge.builder(name, this, m -> f.applyAsDouble(m.last))
                .description(help)
                .tags(tags)
                .register(r);
    }

    /** A counter {@code name} of the last stats, {@code f} of them. */
    final void counter(MeterRegistry r, String name, String help, Tags tags, ToDoubleFunction<S> f) {
        FunctionCounter.builder(name, this, m -> f.applyAsDouble(m.last))
                .description(help)
                .tags(tags)
                .register(r);
    }
}
