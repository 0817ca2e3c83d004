package io.kvprefix.service.internal;

import io.kvprefix.IndexConfig;
import io.kvprefix.PrefixIndex;
import io.kvprefix.SnapshotException;
import io.kvprefix.metrics.SubscriberMetrics;
import io.kvprefix.nats.DynamoSource;
import io.kvprefix.nats.FleetConnection;
import io.kvprefix.nats.FleetStream;
import io.kvprefix.nats.StreamReplica;
import io.kvprefix.service.EngineSpec;
import io.kvprefix.zmq.KvEventSubscriber;
import io.kvprefix.zmq.SubscriberStats;
import io.micrometer.core.instrument.MeterRegistry;
import io.nats.client.Connection;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The index and what feeds it (docs/SERVE.md section 5): the engines' ZMQ publishers through one
 * {@link KvEventSubscriber} (the {@code listen} machinery: replay on gaps, restarts found), or a
 * fleet's stream through a {@link StreamReplica}, or a Dynamo deployment's events through a
 * {@link DynamoSource} (docs/ENGINES.md section 4), or nothing (an index that only an embedder feeds).
 * With a snapshot file (ZMQ only) the index is restored from it at start and each engine resumes after
 * its last applied batch; the file is saved every interval and at close. A file that cannot be
 * restored is moved aside to {@code FILE.refused} (never overwritten) and the index starts empty.
 *
 * <p>Thread-safety: built and closed by one thread; {@link #notReady(boolean)} may be called from any.
 */
public final class EventFeed implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("io.kvprefix.service");

    private final PrefixIndex index;
    private final boolean ownsIndex;
    private final KvEventSubscriber subscriber;
    private final StreamReplica replica;
    private DynamoSource dynamo;
    private final Connection nats;
    private final long streamLastAtStart;
    private final Path snapshot;

    private EventFeed(
            PrefixIndex index,
            boolean ownsIndex,
            KvEventSubscriber subscriber,
            StreamReplica replica,
            Connection nats,
            long streamLastAtStart,
            Path snapshot) {
        this.index = index;
        this.ownsIndex = ownsIndex;
        this.subscriber = subscriber;
        this.replica = replica;
        this.nats = nats;
        this.streamLastAtStart = streamLastAtStart;
        this.snapshot = snapshot;
    }

    /** The engines' ZMQ publishers feed {@code index} (a new one from {@code config} if null, or the snapshot's). */
    public static EventFeed zmq(
            PrefixIndex given, IndexConfig config, List<EngineSpec> engines, Path snapshot, Duration replayTimeout) {
        boolean owns = given == null;
        PrefixIndex index = owns ? open(config, snapshot) : given;
        KvEventSubscriber sub = null;
        if (engines.stream().anyMatch(e -> e.events().isPresent())) {
            sub = KvEventSubscriber.builder(index)
                    .replayTimeout(replayTimeout)
                    .resumeFrom(index.snapshotMetadata())
                    .build();
            for (EngineSpec e : engines) {
                if (e.events().isPresent()) {
                    sub.addEngine(e.events().get());
                }
            }
        }
        return new EventFeed(index, owns, sub, null, null, -1, sub == null ? null : snapshot);
    }

    /** A fleet's stream at {@code url} feeds a new index. */
    public static EventFeed nats(String url, String stream, IndexConfig config) {
        FleetStream fleet = FleetStream.named(stream);
        Connection c;
        try {
            c = FleetConnection.open(url, "kvprefix-serve");
        } catch (IOException e) {
            throw new IllegalArgumentException("--nats " + url + ": " + e.getMessage(), e);
        }
        PrefixIndex index = PrefixIndex.create(config);
        try {
            StreamReplica r = StreamReplica.builder(index, c, fleet).build();
            long last = r.stats().streamLastSeq();
            return new EventFeed(r.index(), true, null, r, c, last, null);
        } catch (IOException | RuntimeException e) {
            index.close();
            closeQuietly(c);
            throw new IllegalArgumentException("--nats " + url + ": stream " + stream + ": " + e.getMessage(), e);
        }
    }

    /** A Dynamo deployment's NATS server at {@code url} feeds a new index (docs/ENGINES.md section 4). */
    public static EventFeed dynamo(
            String url, String namespace, String component, boolean durable, String stream, IndexConfig config) {
        Connection c;
        try {
            c = FleetConnection.open(url, "kvprefix-serve-dynamo");
        } catch (IOException e) {
            throw new IllegalArgumentException("--dynamo " + url + ": " + e.getMessage(), e);
        }
        PrefixIndex index = PrefixIndex.create(config);
        try {
            DynamoSource.Builder b = DynamoSource.builder(index, c, namespace, component)
                    .mode(durable ? DynamoSource.Mode.DURABLE : DynamoSource.Mode.EVENT_PLANE);
            if (stream != null) {
                b.stream(stream);
            }
            EventFeed feed = new EventFeed(index, true, null, null, c, -1, null);
            feed.dynamo = b.build();
            return feed;
        } catch (IOException | RuntimeException e) {
            index.close();
            closeQuietly(c);
            throw new IllegalArgumentException("--dynamo " + url + ": " + e.getMessage(), e);
        }
    }

    private static PrefixIndex open(IndexConfig config, Path snapshot) {
        if (snapshot == null || !Files.exists(snapshot)) {
            return PrefixIndex.create(config);
        }
        try {
            return PrefixIndex.restore(snapshot, config);
        } catch (SnapshotException e) {
            Path aside = snapshot.resolveSibling(snapshot.getFileName() + ".refused");
            try {
                Files.move(snapshot, aside, StandardCopyOption.REPLACE_EXISTING);
            } catch (IOException m) {
                throw new IllegalArgumentException(
                        "--snapshot " + snapshot + ": " + e.getMessage() + ", and it cannot be moved aside: " + m, e);
            }
            LOG.log(
                    System.Logger.Level.WARNING,
                    "kvprefix serve: " + e.getMessage() + "; kept as " + aside + ", starting with an empty index");
            return PrefixIndex.create(config);
        }
    }

    /** Saves the snapshot every {@code interval} on {@code timer} (nothing without a snapshot file). */
    public void saveEvery(ScheduledExecutorService timer, Duration interval) {
        if (snapshot == null) {
            return;
        }
        long ms = Math.max(1, interval.toMillis());
        timer.scheduleWithFixedDelay(this::save, ms, ms, TimeUnit.MILLISECONDS);
    }

    /** Saves the snapshot now; false (logged) if it cannot be written. */
    public boolean save() {
        if (snapshot == null) {
            return true;
        }
        try {
            subscriber.snapshot(snapshot);
            return true;
        } catch (SnapshotException | IllegalStateException e) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "kvprefix serve: " + e.getMessage() + " (the previous snapshot is kept)");
            return false;
        }
    }

    /** The index. */
    public PrefixIndex index() {
        return index;
    }

    /** The ZMQ subscriber, or null. */
    public KvEventSubscriber subscriber() {
        return subscriber;
    }

    /** The Dynamo source, or null. */
    public DynamoSource dynamo() {
        return dynamo;
    }

    /** The fleet replica, or null. */
    public StreamReplica replica() {
        return replica;
    }

    /** Binds the feed's meters (the subscriber's, docs/METRICS.md section 1). */
    public void bindTo(MeterRegistry registry, List<Runnable> refresh) {
        if (subscriber != null) {
            SubscriberMetrics m = new SubscriberMetrics(subscriber);
            m.bindTo(registry);
            refresh.add(m::refresh);
        }
    }

    /**
     * Null when the feed has caught up, else why not: by {@code listen}'s one rule
     * ({@link SubscriberStats#notReady(boolean)}, docs/METRICS.md section 2), each engine not synced
     * (its start-up replay not answered, a replay outstanding, a snapshot awaited or refused) or declared
     * absent (unless {@code absentIsReady}); or a replica behind its start (docs/METRICS.md section 4).
     */
    public String notReady(boolean absentIsReady) {
        if (subscriber != null) {
            String why = subscriber.stats().notReady(absentIsReady);
            if (why != null) {
                return why;
            }
        }
        if (replica != null && replica.appliedSequence() < streamLastAtStart) {
            return "the replica has applied " + replica.appliedSequence() + " of the stream's " + streamLastAtStart
                    + " messages";
        }
        return null;
    }

    /** Metadata of the snapshot the index was restored from (empty if none). */
    public Map<String, String> restoredFrom() {
        return index.snapshotMetadata();
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops the feed (saving the snapshot first) and closes the index if the feed made it. */
    @Override
    public void close() {
        if (subscriber != null) {
            save();
            subscriber.close();
        }
        if (replica != null) {
            replica.close();
        }
        if (dynamo != null) {
            dynamo.close();
        }
        if (nats != null) {
            closeQuietly(nats);
        }
        if (ownsIndex) {
            index.close();
        }
    }
}
