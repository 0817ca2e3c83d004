package io.kvprefix.cli;

import io.kvprefix.nats.ReplicaStats;
import io.kvprefix.nats.StreamReplica;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
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
final class ReplicaMeters extends StatsMeters<ReplicaStats> {
    /** Meters of {@code replica}; readiness waits for the stream's last sequence when it started. */
    ReplicaMeters(StreamReplica replica, ReplicaStats atStart) {
        super(replica::stats, atStart, Math.max(0, atStart.streamLastSeq()));
    }

    @Override
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
        gauge(r, name, help, Tags.of("stream", last().stream()), f);
    }

    private void counter(MeterRegistry r, String name, String help, ToDoubleFunction<ReplicaStats> f) {
        counter(r, name, help, Tags.of("stream", last().stream()), f);
    }

    @Override
    long appliedSequence(ReplicaStats s) {
        return s.appliedSeq();
    }

    @Override
    String stale(ReplicaStats s) {
        return s.streamGone() ? "stream " + s.stream() + " is gone: the index is stale" : null;
    }
}
