package io.kvprefix.nats;

import io.kvprefix.PrefixIndex;
import io.kvprefix.nats.internal.EngineFeed;
import io.kvprefix.nats.internal.ReplicaCore;
import io.kvprefix.nats.internal.ReplicaSnapshots;
import io.kvprefix.nats.internal.SnapshotBucket;
import io.nats.client.Connection;
import io.nats.client.ConsumeOptions;
import io.nats.client.JetStreamApiException;
import io.nats.client.MessageConsumer;
import io.nats.client.OrderedConsumerContext;
import io.nats.client.StreamContext;
import io.nats.client.api.DeliverPolicy;
import io.nats.client.api.OrderedConsumerConfiguration;
import io.nats.client.api.StreamInfo;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A router replica fed by a {@link FleetStream}: applies the stream's messages, in stream order, to
 * its {@link PrefixIndex}, decoding each engine's batches as {@code kvprefix listen} does. Replicas
 * fed by one stream hold the same index once they have applied the same prefix of it. The rules
 * (ordered consumer, duplicates, resyncs after the retention dropped messages, lag) are
 * docs/FLEET.md section 4; snapshots in the stream's object store ({@link Builder#snapshots}, and
 * {@link #index()} is then the restored index) section 5; the threads this package's description.
 *
 * <pre>{@code
 * try (StreamReplica replica = StreamReplica.builder(index, natsConnection, FleetStream.defaults()).build()) {
 *     ...                                  // route with index.match(...) meanwhile
 * }
 * }</pre>
 *
 * <p>Thread-safety: every public method may be called from any thread.
 */
public final class StreamReplica implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("io.kvprefix.nats");

    private final Connection connection;
    private final FleetStream stream;
    private final PrefixIndex index;
    private final ReplicaCore core;
    private volatile MessageConsumer consumer;
    private volatile ZonedDateTime created;
    private volatile boolean streamGone;
    private final AtomicLong streamResets = new AtomicLong();
    private final ScheduledExecutorService watch;
    private final long startedAt;
    private final ReplicaSnapshots snapshots;
    private final ScheduledExecutorService timer;
    private final Path snapshotDir;
    private final long bootstrapSeq;
    private final long bootstrapMillis;
    private final AtomicLong published = new AtomicLong();
    private boolean closed;

    private StreamReplica(Builder b) throws IOException {
        this.connection = b.connection;
        this.stream = b.stream;
        StreamInfo info = stream.ensure(connection);
        ReplicaSnapshots.Restored restored = null;
        if (b.images != null) {
            this.snapshotDir = Files.createTempDirectory("kvprefix-replica-");
            this.snapshots = new ReplicaSnapshots(
                    SnapshotBucket.open(connection, stream.name(), 2), b.images, stream.name(), snapshotDir);
            restored = snapshots.bootstrap().orElse(null);
        } else {
            this.snapshotDir = null;
            this.snapshots = null;
        }
        this.index = restored == null ? b.index : restored.index();
        this.core = new ReplicaCore(index);
        this.bootstrapSeq = restored == null ? -1 : restored.state().streamSeq();
        this.bootstrapMillis = restored == null ? -1 : restored.millis();
        if (restored != null) {
            core.restoredUpTo(restored.state().streamSeq(), restored.state().feeds());
            LOG.log(
                    System.Logger.Level.INFO,
                    "kvprefix replica: restored the snapshot covering stream sequence " + bootstrapSeq + " ("
                            + restored.bytes() + " bytes, " + bootstrapMillis + " ms)");
        }
        long first = info.getStreamState().getFirstSequence();
        long from = core.applied() + 1;
        // Messages up to the stream's last sequence that are no longer there (all of them, when
        // everything aged out: first is then last + 1) were dropped by the retention.
        if (info.getStreamState().getLastSequence() >= from && first > from) {
            core.resync(from, first); // the oldest messages are gone already
            core.restoredUpTo(first - 1, List.of());
        }
        this.startedAt = System.nanoTime();
        this.created = info.getCreateTime();
        this.consumer = consume(core.applied() + 1, core.generation());
        this.watch = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "kvprefix-nats-replica-watch");
            t.setDaemon(true);
            return t;
        });
        long check = b.streamCheck.toMillis();
        watch.scheduleWithFixedDelay(this::checkStream, check, check, TimeUnit.MILLISECONDS);
        if (snapshots != null) {
            timer = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "kvprefix-nats-snapshots");
                t.setDaemon(true);
                return t;
            });
            long every = b.interval.toMillis();
            timer.scheduleWithFixedDelay(this::publishSnapshot, every, every, TimeUnit.MILLISECONDS);
        } else {
            timer = null;
        }
    }

    private MessageConsumer consume(long from, long generation) throws IOException {
        try {
            StreamContext sc = connection.getStreamContext(stream.name());
            OrderedConsumerContext occ = sc.createOrderedConsumer(new OrderedConsumerConfiguration()
                    .deliverPolicy(DeliverPolicy.ByStartSequence)
                    .startSequence(from));
            // Pull requests that expire every 2 s: heartbeats every second notice a lost server quickly.
            return occ.consume(ConsumeOptions.builder().expiresIn(2000).build(), m -> core.onMessage(m, generation));
        } catch (JetStreamApiException e) {
            throw new IOException("cannot consume stream " + stream.name() + ": " + e.getMessage(), e);
        }
    }

    /**
     * The watch (docs/FLEET.md section 4): a missing stream makes the index stale (counted, not ready);
     * a stream made anew (another creation time) clears the index and is read from its start.
     */
    private void checkStream() {
        StreamInfo info;
        try {
            info = connection.jetStreamManagement().getStreamInfo(stream.name());
        } catch (JetStreamApiException e) {
            if (e.getApiErrorCode() == 10059 && !streamGone) { // stream not found
                streamGone = true;
                LOG.log(
                        System.Logger.Level.WARNING,
                        "kvprefix replica: stream " + stream.name()
                                + " is gone; the index is stale until a relay creates it again");
            }
            return;
        } catch (IOException | RuntimeException e) {
            return; // the server is away: the next check asks again
        }
        if (!info.getCreateTime().equals(created)) {
            restartOnNewStream(info);
        } else {
            streamGone = false;
        }
    }

    private synchronized void restartOnNewStream(StreamInfo info) {
        if (closed) {
            return;
        }
        stopConsumer();
        long generation = core.newStream();
        created = info.getCreateTime();
        streamResets.incrementAndGet();
        LOG.log(
                System.Logger.Level.WARNING,
                "kvprefix replica: stream " + stream.name() + " was made anew (created " + created
                        + "); cleared the index and reading the new stream from its start");
        try {
            consumer = consume(1, generation);
            streamGone = false;
        } catch (IOException | RuntimeException e) {
            streamGone = true;
            created = null; // the next check tries again
            LOG.log(System.Logger.Level.WARNING, "kvprefix replica: " + e.getMessage());
        }
    }

    private void stopConsumer() {
        try {
            consumer.stop();
            consumer.close();
        } catch (Exception e) {
            LOG.log(System.Logger.Level.DEBUG, "kvprefix replica: closing the consumer: " + e);
        }
    }

    /** Saves and uploads a snapshot now (the timer's job; also at {@link #close()}); logs a failure. */
    private void publishSnapshot() {
        try {
            if (snapshots.publish(core, index) >= 0) {
                published.incrementAndGet();
            }
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "kvprefix replica: snapshot not published: " + e.getMessage());
        }
    }

    /** The index this replica feeds: the one given to the builder, or the one restored from a snapshot. */
    public PrefixIndex index() {
        return index;
    }

    /** A builder for a replica that applies {@code stream}, read through {@code connection}, to {@code index}. */
    public static Builder builder(PrefixIndex index, Connection connection, FleetStream stream) {
        return new Builder(index, connection, stream);
    }

    /** The stream sequence of the last message applied (0 if none). */
    public long appliedSequence() {
        return core.applied();
    }

    /**
     * A snapshot of the replica's counters, with the stream's last sequence as the server reports it
     * now (-1 if it cannot be asked).
     */
    public ReplicaStats stats() {
        long last = -1;
        try {
            last = connection
                    .jetStreamManagement()
                    .getStreamInfo(stream.name())
                    .getStreamState()
                    .getLastSequence();
        } catch (IOException | JetStreamApiException | RuntimeException e) {
            // the server is away: reported as -1
        }
        List<ReplicaStats.EngineStats> engines = new ArrayList<>();
        long[] c;
        core.lock().lock();
        try {
            for (EngineFeed f : core.feeds()) {
                engines.add(
                        new ReplicaStats.EngineStats(f.engine(), f.subject(), f.nextRec(), f.lastSeq(), f.counters()));
            }
            c = core.counters();
        } finally {
            core.lock().unlock();
        }
        var lags = core.lags();
        return new ReplicaStats(
                stream.name(),
                core.applied(),
                last,
                core.pending(),
                c[0],
                c[1],
                c[2],
                core.lastLagMicros(),
                lags.quantile(0.5),
                lags.quantile(0.99),
                lags.max(),
                lags.count(),
                (System.nanoTime() - startedAt) / 1_000_000,
                bootstrapSeq,
                bootstrapMillis,
                published.get(),
                streamResets.get(),
                streamGone,
                engines);
    }

    /**
     * Stops consuming (the index keeps what was applied, and is not closed); with snapshots, publishes
     * a last one first. Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        watch.shutdownNow();
        stopConsumer();
        core.lock().lock(); // a message being applied finishes first
        core.lock().unlock();
        if (timer != null) {
            timer.shutdown();
            try {
                timer.awaitTermination(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            publishSnapshot();
            try (var files = Files.list(snapshotDir)) {
                for (Path f : files.toList()) {
                    Files.deleteIfExists(f);
                }
                Files.deleteIfExists(snapshotDir);
            } catch (IOException e) {
                LOG.log(System.Logger.Level.DEBUG, "kvprefix replica: removing " + snapshotDir + ": " + e);
            }
        }
    }

    /**
     * Builds a {@link StreamReplica}; {@link #build()} checks (or creates) the stream and starts consuming.
     *
     * <p>Thread-safety: not thread-safe; use one builder per thread.
     */
    public static final class Builder {
        private final PrefixIndex index;
        private final Connection connection;
        private final FleetStream stream;
        private IndexImages images;
        private Duration interval;
        private Duration streamCheck = Duration.ofSeconds(1);

        private Builder(PrefixIndex index, Connection connection, FleetStream stream) {
            this.index = Objects.requireNonNull(index, "index");
            this.connection = Objects.requireNonNull(connection, "connection");
            this.stream = Objects.requireNonNull(stream, "stream");
        }

        /**
         * Publishes a snapshot of the index every {@code interval} (and at {@link StreamReplica#close()})
         * to the stream's object store bucket, and starts from the newest one there instead of from
         * the stream's start (docs/FLEET.md section 5); {@code images} saves and restores the index.
         */
        public Builder snapshots(IndexImages images, Duration interval) {
            this.images = Objects.requireNonNull(images, "images");
            Objects.requireNonNull(interval, "interval");
            if (interval.isNegative() || interval.isZero()) {
                throw new IllegalArgumentException("snapshot interval must be positive, got " + interval);
            }
            this.interval = interval;
            return this;
        }

        /** How often the stream is checked for being gone or made anew (default 1 s; docs/FLEET.md section 4). */
        public Builder streamCheck(Duration d) {
            Objects.requireNonNull(d, "streamCheck");
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException("streamCheck must be positive, got " + d);
            }
            this.streamCheck = d;
            return this;
        }

        /**
         * Checks (or creates) the stream (and, with snapshots, restores the newest one) and starts consuming.
         *
         * @throws IOException if the server cannot be reached or the stream cannot be consumed
         */
        public StreamReplica build() throws IOException {
            return new StreamReplica(this);
        }
    }
}
