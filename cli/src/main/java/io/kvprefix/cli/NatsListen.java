package io.kvprefix.cli;

import io.kvprefix.IndexConfig;
import io.kvprefix.PrefixIndex;
import io.kvprefix.bench.Implementations;
import io.kvprefix.nats.FleetConnection;
import io.kvprefix.nats.FleetStream;
import io.kvprefix.nats.IndexImages;
import io.kvprefix.nats.ReplicaStats;
import io.kvprefix.nats.StreamReplica;
import io.nats.client.Connection;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

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
        Duration snapshotEvery =
                c.snapshotInterval == null ? null : ListenCommand.seconds(c.snapshotInterval, "--snapshot-interval");
        if (c.metricsPort != null) {
            throw new IllegalArgumentException("--metrics-port is not served with --nats yet");
        }
        FleetStream fleet = FleetStream.named(c.stream); // IllegalArgumentException names a bad name
        Duration runFor = c.duration == null ? null : ListenCommand.seconds(c.duration, "--duration");
        Duration every = ListenCommand.seconds(c.statsInterval, "--stats-interval");
        IndexConfig config = c.indexConfig(); // --impl, --max-workers and --memory-budget, as without --nats
        PrintStream err = System.err;
        Path queryFile = null;
        if (c.queries != null) {
            queryFile = ListenCommand.readableFile(c.queries);
        }
        CountDownLatch stop = new CountDownLatch(1);
        CountDownLatch finished = new CountDownLatch(1);
        Thread hook = new Thread(
                () -> {
                    stop.countDown();
                    try {
                        finished.await(15, TimeUnit.SECONDS); // let the results and stats be printed first
                    } catch (InterruptedException ignored) {
                        Thread.currentThread().interrupt();
                    }
                },
                "kvprefix-listen-shutdown");
        Connection connection = FleetConnection.open(c.nats, "kvprefix-listen");
        Runtime.getRuntime().addShutdownHook(hook);
        try (PrefixIndex fresh = Implementations.create(c.indexOptions.impl, config)) {
            ReplicaStats last;
            StreamReplica.Builder builder = StreamReplica.builder(fresh, connection, fleet);
            if (snapshotEvery != null) {
                builder.snapshots(images(c.indexOptions.impl, config), snapshotEvery);
            }
            StreamReplica replica = builder.build();
            PrefixIndex index = replica.index(); // the restored one, if a snapshot was
            try {
                try {
                    if (!c.quiet) {
                        err.println("kvprefix listen: applying stream " + fleet.name() + " from " + c.nats + " ("
                                + (runFor == null ? "until Ctrl-C" : "for " + c.duration + " s") + ")");
                    }
                    long deadline = runFor == null ? Long.MAX_VALUE : System.nanoTime() + runFor.toNanos();
                    while (true) {
                        long left = deadline - System.nanoTime();
                        if (left <= 0 || stop.await(Math.min(left, every.toNanos()), TimeUnit.NANOSECONDS)) {
                            break;
                        }
                        if (!c.quiet) {
                            err.println("kvprefix listen: " + replica.stats().summary());
                        }
                    }
                } finally {
                    replica.close();
                }
                last = replica.stats();
                if (queryFile != null && !ListenCommand.runQueries(queryFile, index, err)) {
                    return 1;
                }
                System.out.println(last.toJson());
                System.out.flush();
                if (!c.quiet) {
                    err.println("kvprefix listen: " + last.summary());
                }
                return 0;
            } finally {
                if (index != fresh) {
                    index.close(); // restored from a snapshot: the replica's own
                }
            }
        } finally {
            connection.close();
            finished.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException ignored) {
                // the JVM is shutting down (Ctrl-C): the hook is running and returns now
            }
        }
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
}
