package io.kvprefix.cli;

import io.kvprefix.IndexConfig;
import io.kvprefix.PrefixIndex;
import io.kvprefix.nats.FleetConnection;
import io.kvprefix.nats.FleetStream;
import io.kvprefix.nats.IndexImages;
import io.kvprefix.nats.ReplicaStats;
import io.kvprefix.nats.StreamReplica;
import io.kvprefix.opstream.Implementations;
import io.nats.client.Connection;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * {@code kvprefix listen --nats URL}: a fleet replica. Applies the stream (docs/FLEET.md)
 * to a new index (with {@code --snapshot-interval}: the one restored from the newest snapshot in the
 * stream's object store, docs/FLEET.md section 5, publishing its own every interval), prints a stats
 * line to standard error every few seconds, and after
 * {@code --duration} (or Ctrl-C / SIGTERM) runs the match lines of {@code --queries}, then prints the
 * replica's JSON stats ({@link ReplicaStats#toJson()}) as the last line.
 *
 * <p>Thread-safety: used once by one thread.
 */
final class NatsListen {
    private NatsListen() {}

    static int run(ListenCommand c) throws Exception {
        if (!c.engines.isEmpty() || c.trtllmEvents != null) {
            throw new IllegalArgumentException("--engine and --trtllm-events exclude --nats: a replica applies the "
                    + "stream that kvprefix relay fills from the engines");
        }
        if (c.snapshot != null) {
            throw new IllegalArgumentException("--snapshot is for engines read directly; with --nats, "
                    + "--snapshot-interval S publishes the replica's snapshots to the stream's object store");
        }
        Duration snapshotEvery = Check.secondsOrNull("--snapshot-interval", c.snapshotInterval);
        FleetStream fleet = FleetStream.named(
                c.stream == null ? FleetStream.DEFAULT_NAME : c.stream); // IllegalArgumentException names a bad name
        Duration runFor = c.watch.run.runFor();
        Duration every = Check.seconds("--stats-interval", c.statsInterval);
        IndexConfig config = c.indexConfig(); // --impl, --max-workers and --memory-budget, as without --nats
        Path queryFile = Check.inputFileOrNull("--queries", c.queries);
        // the drain: let the results and stats be printed first
        try (Lifecycle life = Lifecycle.start("listen", Duration.ofSeconds(15), c.watch.run.quiet)) {
            ListenMetrics metrics = life.metrics(c.watch.host.metricsHost, c.watch.run.metricsPort);
            Connection connection = FleetConnection.open(c.nats, "kvprefix-listen");
            try (PrefixIndex fresh = Implementations.create(c.indexOptions.impl, config)) {
                requireStream(connection, fleet, c.nats);
                StreamReplica.Builder builder = StreamReplica.builder(fresh, connection, fleet);
                if (snapshotEvery != null) {
                    builder.snapshots(images(c.indexOptions.impl, config), snapshotEvery);
                }
                StreamReplica replica = builder.build();
                if (metrics != null) {
                    metrics.watch(replica);
                }
                PrefixIndex index = replica.index(); // the restored one, if a snapshot was
                try {
                    ReplicaStats last = apply(c, replica, fleet, runFor, every, life);
                    if (queryFile != null && !ListenCommand.runQueries(queryFile, index, System.err)) {
                        return 1;
                    }
                    life.result(last.summary(), last.toJson());
                    return 0;
                } finally {
                    if (index != fresh) {
                        index.close(); // restored from a snapshot: the replica's own
                    }
                }
            } finally {
                connection.close();
            }
        }
    }

    /** Applies the stream until stopped; the replica's stats once it is closed. */
    private static ReplicaStats apply(
            ListenCommand c, StreamReplica replica, FleetStream fleet, Duration runFor, Duration every, Lifecycle life)
            throws InterruptedException {
        try {
            life.status("applying stream " + fleet.name() + " from " + c.nats + " ("
                    + (runFor == null ? "until Ctrl-C" : "for " + c.watch.run.duration + " s") + ")");
            life.runUntilStopped(
                    runFor,
                    null,
                    List.of(new Lifecycle.Periodic(
                            every, () -> life.status(replica.stats().summary()))));
        } finally {
            replica.close();
        }
        return replica.stats();
    }

    /** The index's own snapshots, restored into {@code --impl}'s implementation. */
    private static IndexImages images(String impl, IndexConfig config) {
        IndexImages own = IndexImages.of(config);
        return new IndexImages() {
            @Override
            public void save(PrefixIndex index, Path file, Map<String, String> metadata) {
                own.save(index, file, metadata);
            }

            @Override
            public PrefixIndex restore(Path file) {
                return Implementations.restore(impl, file, config);
            }

            @Override
            public Map<String, String> metadata(PrefixIndex restored) {
                return own.metadata(restored);
            }
        };
    }

    /**
     * A replica reads a stream a relay made; a mistyped {@code --stream} would otherwise create an
     * empty one and answer from an empty index in silence (docs/OPERATING.md section 3).
     */
    private static void requireStream(Connection connection, FleetStream fleet, String url) throws IOException {
        try {
            connection.jetStreamManagement().getStreamInfo(fleet.name());
        } catch (io.nats.client.JetStreamApiException e) {
            if (e.getApiErrorCode() != 10059) { // anything but "stream not found"
                throw new IOException("stream " + fleet.name() + ": " + e.getMessage(), e);
            }
            List<String> names;
            try {
                names = connection.jetStreamManagement().getStreamNames();
            } catch (io.nats.client.JetStreamApiException e2) {
                names = List.of();
            }
            throw new IllegalArgumentException("--stream '" + fleet.name() + "': no such stream on " + url
                    + " (streams there: " + (names.isEmpty() ? "none" : String.join(", ", names))
                    + "); start a relay with this --stream first, or fix the name");
        }
    }
}
