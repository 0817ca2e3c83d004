package io.kvprefix.cli;

import io.kvprefix.nats.ReplicaStats;
import io.kvprefix.nats.StreamReplica;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.ToDoubleFunction;

/**
 * A fleet replica's meters and readiness for {@code listen --nats --metrics-port} (docs/METRICS.md
 * sections 1 and 2): stream sequence applied and the stream's last, lag in messages and seconds,
 * messages, resyncs, stream resets, whether the stream is gone, snapshots published and the
 * bootstrap source. Ready once the replica has applied up to the stream's last sequence at the time
 * it started, and while its stream is there.
 *
 * <p>Thread-safety: {@link #refresh} and {@link #notReady} may be called from any thread; the meters
 * read the stats the last refresh took.
 */
final class ReplicaMeters {
    private final StreamReplica replica;
    private final long target;
    private volatile ReplicaStats last;
    private volatile boolean caughtUp;

    /** Meters of {@code replica}; {@code target} is the stream's last sequence when it started. */
    ReplicaMeters(StreamReplica replica, ReplicaStats atStart) {
        this.replica = replica;
        this.last = atStart;
        this.target = Math.max(0, atStart.streamLastSeq());
    }

    void bindTo(MeterRegistry r) {
        gauge(
                r,
                "kvprefix.replica.stream.sequence",
                "stream sequence of the last message applied",
                s -> s.appliedSeq());
        gauge(
                r,
                "kvprefix.replica.stream.last.sequence",
                "the stream's last sequence (-1: unknown)",
                s -> s.streamLastSeq());
        gauge(r, "kvprefix.replica.lag.messages", "messages in the stream not applied yet", ReplicaMeters::lagMessages);
        gauge(
                r,
                "kvprefix.replica.lag.seconds",
                "engine publish to replica apply, last batch (NaN: none)",
                s -> s.lastLagMicros() < 0 ? Double.NaN : s.lastLagMicros() / 1e6);
        gauge(
                r,
                "kvprefix.replica.stream.gone",
                "1 while the stream is missing: the index is stale",
                s -> s.streamGone() ? 1 : 0);
        gauge(
                r,
                "kvprefix.replica.snapshot.bootstrap.sequence",
                "stream sequence of the snapshot it started from, -1: from the stream",
                s -> s.bootstrapSeq());
        counter(r, "kvprefix.replica.messages", "messages applied", s -> s.messages());
        counter(r, "kvprefix.replica.bad.messages", "messages skipped as unreadable", s -> s.badMessages());
        counter(r, "kvprefix.replica.resyncs", "retention dropped messages before they were read", s -> s.resyncs());
        counter(
                r,
                "kvprefix.replica.stream.resets",
                "the stream was made anew and read from its start",
                s -> s.streamResets());
        counter(
                r,
                "kvprefix.replica.snapshots.published",
                "snapshots published to the object store",
                s -> s.snapshotsPublished());
    }

    private static double lagMessages(ReplicaStats s) {
        return s.streamLastSeq() < 0 ? Double.NaN : Math.max(0, s.streamLastSeq() - s.appliedSeq());
    }

    private void gauge(MeterRegistry r, String name, String help, ToDoubleFunction<ReplicaStats> f) {
        Gauge.builder(name, this, m -> f.applyAsDouble(m.last))
                .description(help)
                .tag("stream", last.stream())
                .register(r);
    }

    private void counter(MeterRegistry r, String name, String help, ToDoubleFunction<ReplicaStats> f) {
        FunctionCounter.builder(name, this, m -> f.applyAsDouble(m.last))
                .description(help)
                .tag("stream", last.stream())
                .register(r);
    }

    /** Takes the replica's stats once for a scrape. */
    void refresh() {
        last = replica.stats();
    }

    /** Null when ready, else why (docs/METRICS.md section 2). */
    String notReady() {
        ReplicaStats s = replica.stats();
        last = s;
        if (s.streamGone()) {
            return "stream " + s.stream() + " is gone: the index is stale";
        }
        if (!caughtUp && s.appliedSeq() < target) {
            return "applied stream sequence " + s.appliedSeq() + " of " + target
                    + " (the stream's last when it started)";
        }
        caughtUp = true;
        return null;
    }
}
