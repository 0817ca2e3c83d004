package io.kvprefix.cli;

import io.kvprefix.IndexConfig;
import io.kvprefix.PrefixIndex;
import io.kvprefix.bench.Implementations;
import io.kvprefix.nats.FleetConnection;
import io.kvprefix.nats.FleetStream;
import io.kvprefix.nats.ReplicaStats;
import io.kvprefix.nats.StreamReplica;
import io.nats.client.Connection;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * {@code kvprefix listen --nats URL}: a fleet replica. Applies the stream (docs/SPEC.md section 9)
 * to a new index, prints a stats line to standard error every few seconds, and after
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
        if (c.metricsPort != null) {
            throw new IllegalArgumentException("--metrics-port is not served with --nats yet");
        }
        FleetStream fleet = FleetStream.named(c.stream); // IllegalArgumentException names a bad name
        Duration runFor = c.duration == null ? null : ListenCommand.seconds(c.duration, "--duration");
        Duration every = ListenCommand.seconds(c.statsInterval, "--stats-interval");
        if (!Implementations.isKnown(c.impl)) {
            throw new IllegalArgumentException("--impl: unknown implementation '" + c.impl
                    + "': known implementations are " + String.join(", ", Implementations.names()));
        }
        IndexConfig config;
        try {
            config = IndexConfig.builder().maxWorkers(c.maxWorkers).build();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--max-workers: " + e.getMessage(), e);
        }
        PrintStream err = System.err;
        Path queryFile = null;
        if (c.queries != null) {
            queryFile = ListenCommand.readableFile(c.queries);
            if (queryFile == null) {
                return 1;
            }
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
        try (PrefixIndex index = Implementations.create(c.impl, config)) {
            ReplicaStats last;
            StreamReplica replica =
                    StreamReplica.builder(index, connection, fleet).build();
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
            connection.close();
            finished.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException ignored) {
                // the JVM is shutting down (Ctrl-C): the hook is running and returns now
            }
        }
    }
}
