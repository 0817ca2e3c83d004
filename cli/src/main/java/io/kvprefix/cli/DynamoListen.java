package io.kvprefix.cli;

import io.kvprefix.IndexConfig;
import io.kvprefix.PrefixIndex;
import io.kvprefix.nats.DynamoSource;
import io.kvprefix.nats.DynamoStats;
import io.kvprefix.nats.FleetConnection;
import io.kvprefix.opstream.Implementations;
import io.nats.client.Connection;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * {@code kvprefix listen --dynamo URL --namespace NS --component C}: feeds a new index from a running
 * NVIDIA Dynamo deployment's KV events on NATS, read-only ({@link DynamoSource}; the subjects,
 * encodings and rules are docs/ENGINES.md section 4, running it docs/OPERATING.md section 10), prints
 * a stats line to standard error every few seconds, and after {@code --duration} (or Ctrl-C /
 * SIGTERM) runs the match lines of {@code --queries}, then prints the source's JSON stats
 * ({@link DynamoStats#toJson()}) as the last line; {@code --metrics-port} serves its meters and
 * readiness ({@link DynamoMeters}).
 *
 * <p>Thread-safety: used once by one thread.
 */
final class DynamoListen {
    private DynamoListen() {}

    /** The options {@code --dynamo} takes, checked before anything connects. */
    private record Plan(DynamoSource.Mode mode, Duration runFor, Duration every, IndexConfig config, Path queries) {}

    static int run(ListenCommand c) throws Exception {
        Plan plan = validate(c);
        try (Lifecycle life = Lifecycle.start("listen", Duration.ofSeconds(15), c.watch.run.quiet)) {
            ListenMetrics metrics = life.metrics(c.watch.host.metricsHost, c.watch.run.metricsPort);
            Connection connection = FleetConnection.open(c.dynamo, "kvprefix-listen-dynamo");
            PrefixIndex created = Implementations.create(c.indexOptions.impl, plan.config());
            try (PrefixIndex index = metrics == null ? created : metrics.instrument(created)) {
                DynamoSource.Builder b = DynamoSource.builder(index, connection, c.namespace, c.component)
                        .mode(plan.mode());
                if (c.stream != null) {
                    b.stream(c.stream);
                }
                DynamoSource source = b.build(); // IOException: no such stream, said in one line
                try {
                    if (metrics != null) {
                        metrics.watch(new DynamoMeters(source, target(connection, source)));
                    }
                    life.status("reading Dynamo " + c.dynamoMode + " " + source.source() + " from " + c.dynamo + " ("
                            + (plan.runFor() == null ? "until Ctrl-C" : "for " + c.watch.run.duration + " s") + ")");
                    life.runUntilStopped(
                            plan.runFor(),
                            null,
                            List.of(new Lifecycle.Periodic(
                                    plan.every(),
                                    () -> life.status(source.stats().summary()))));
                } finally {
                    source.close();
                }
                DynamoStats last = source.stats();
                if (plan.queries() != null && !ListenCommand.runQueries(plan.queries(), index, System.err)) {
                    return 1;
                }
                life.result(last.summary(), last.toJson());
                return 0;
            } finally {
                connection.close();
            }
        }
    }

    /**
     * Durable mode: the stream's last sequence now, which readiness waits for (docs/METRICS.md section
     * 2); 0 on the event plane, which is live from the start.
     */
    private static long target(Connection connection, DynamoSource source) throws IOException {
        if (source.mode() != DynamoSource.Mode.DURABLE) {
            return 0;
        }
        try {
            return connection
                    .jetStreamManagement()
                    .getStreamInfo(source.source())
                    .getStreamState()
                    .getLastSequence();
        } catch (io.nats.client.JetStreamApiException e) {
            throw new IOException("stream " + source.source() + ": " + e.getMessage(), e);
        }
    }

    private static Plan validate(ListenCommand c) {
        if (!c.engines.isEmpty() || c.trtllmEvents != null || c.nats != null) {
            throw new IllegalArgumentException("--engine, --trtllm-events and --nats exclude --dynamo: it reads the "
                    + "events Dynamo's workers publish to NATS");
        }
        if (c.snapshot != null || c.snapshotInterval != null) {
            throw new IllegalArgumentException("--snapshot and --snapshot-interval are not available with --dynamo");
        }
        if (c.namespace == null || c.namespace.isEmpty() || c.component == null || c.component.isEmpty()) {
            throw new IllegalArgumentException("--dynamo needs --namespace NS and --component C (the Dynamo "
                    + "namespace and the workers' component, e.g. --namespace dynamo --component backend)");
        }
        DynamoSource.Mode mode = switch (c.dynamoMode) {
            case "event-plane" -> DynamoSource.Mode.EVENT_PLANE;
            case "durable" -> DynamoSource.Mode.DURABLE;
            default ->
                throw new IllegalArgumentException(
                        "--dynamo-mode must be durable or event-plane, not '" + c.dynamoMode + "'");
        };
        if (c.stream != null && mode != DynamoSource.Mode.DURABLE) {
            throw new IllegalArgumentException("--stream names the JetStream stream of --dynamo-mode durable");
        }
        return new Plan(
                mode,
                c.watch.run.runFor(),
                Check.seconds("--stats-interval", c.statsInterval),
                c.indexConfig(),
                Check.inputFileOrNull("--queries", c.queries));
    }
}
