package io.kvprefix.cli;

import io.kvprefix.nats.EventRelay;
import io.kvprefix.nats.FleetConnection;
import io.kvprefix.nats.FleetStream;
import io.kvprefix.nats.RelayStats;
import io.kvprefix.zmq.EngineEndpoint;
import io.nats.client.Connection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code kvprefix relay}: subscribes to engines as {@code listen} does and publishes their batches,
 * in sequence order, to a JetStream stream that replicas ({@code listen --nats}) apply
 * (docs/FLEET.md). Runs until Ctrl-C / SIGTERM or {@code --duration}, then waits for what it
 * received to be in the stream and prints one JSON stats line ({@link RelayStats#toJson()}).
 *
 * {@code --metrics-port} serves its meters and health as {@code listen}'s does (docs/METRICS.md
 * section 2, {@link ListenMetrics}).
 *
 * <p>Exit status: 0 after a run; 2 for a usage error (a metrics port that cannot be bound too); 1 if
 * the server cannot be reached.
 *
 * <p>Thread-safety: a command object, used once by one thread.
 */
@Command(
        name = "relay",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Relay engines' KV events to a NATS JetStream stream for a fleet of replicas.",
            "The events (vLLM, ZMQ + msgpack) go to a stream that a fleet of replicas applies",
            "(kvprefix listen --nats). Gaps are filled through the",
            "engines' replay sockets as listen does; each engine's batches go to the stream in",
            "order, once each, de-duplicated by a message id from the engine and its record",
            "number. A restarted relay takes up each engine after the last batch in the stream.",
            "Prints one JSON stats object at the end. --metrics-port serves Prometheus metrics",
            "and health checks meanwhile."
        })
final class RelayCommand implements Callable<Integer> {

    @Option(
            names = "--engine",
            required = true,
            paramLabel = "ENDPOINT=WORKER[/RANK][,replay=ENDPOINT][,topic=T][,format=F]",
            description = "an engine, in the form kvprefix listen takes (repeatable); see listen --help")
    List<String> engines;

    @Option(
            names = "--nats",
            required = true,
            paramLabel = "URL",
            description = "the NATS server, for example nats://127.0.0.1:4222 (several: comma-separated)")
    String nats;

    @Option(
            names = "--stream",
            paramLabel = "NAME",
            defaultValue = "KVPREFIX_EVENTS",
            description = "the stream (created if missing; default: ${DEFAULT-VALUE})")
    String stream;

    @Option(
            names = "--retention",
            paramLabel = "SECONDS",
            defaultValue = "3600",
            description = "how long a stream this relay creates keeps messages (default: ${DEFAULT-VALUE})")
    double retention;

    @Option(
            names = "--stats-interval",
            paramLabel = "SECONDS",
            defaultValue = "5",
            description = "seconds between stats lines on standard error (default: ${DEFAULT-VALUE})")
    double statsInterval;

    @Option(
            names = "--replay-timeout",
            paramLabel = "SECONDS",
            defaultValue = "3",
            description = "give up a replay that has not answered for this long (default: ${DEFAULT-VALUE})")
    double replayTimeout;

    @Mixin
    WatchFlags watch = new WatchFlags();

    @Override
    public Integer call() throws Exception {
        List<EngineEndpoint> specs = Check.engines(engines);
        for (EngineEndpoint e : specs) {
            if (e.snapshotEndpoint().isPresent()) { // a snapshot's batches carry no sequence numbers to hand on
                throw new IllegalArgumentException("--engine '" + e + "': snapshot= is read by listen, not by a relay "
                        + "(docs/LISTENER.md section 8)");
            }
        }
        FleetStream fleet = FleetStream.named(stream).withMaxAge(Check.seconds("--retention", retention));
        Duration runFor = watch.run.runFor();
        Duration every = Check.seconds("--stats-interval", statsInterval);
        Duration replayWait = Check.seconds("--replay-timeout", replayTimeout);
        // the drain: let the relay put what it received in the stream and print its stats
        try (Lifecycle life = Lifecycle.start("relay", Duration.ofSeconds(20), watch.run.quiet)) {
            ListenMetrics metrics = life.metrics(watch.host.metricsHost, watch.run.metricsPort);
            Connection connection = FleetConnection.open(nats, "kvprefix-relay");
            try {
                RelayStats s = relay(connection, fleet, specs, new Run(replayWait, runFor, every), life, metrics);
                life.result(s.summary(), s.toJson());
                return 0;
            } finally {
                connection.close();
            }
        }
    }

    /** How long to wait for a replay, to run, and between stats lines. */
    private record Run(Duration replayWait, Duration runFor, Duration every) {}

    /** Relays the engines' batches to the stream until stopped; the relay's stats once all is in the stream. */
    private RelayStats relay(
            Connection connection,
            FleetStream fleet,
            List<EngineEndpoint> specs,
            Run run,
            Lifecycle life,
            ListenMetrics metrics)
            throws Exception {
        Duration runFor = run.runFor();
        EventRelay relay = EventRelay.builder(connection, fleet)
                .replayTimeout(run.replayWait())
                .build();
        try {
            for (EngineEndpoint e : specs) {
                relay.addEngine(e);
            }
            if (metrics != null) {
                metrics.watch(relay, watch.absent.readyWithAbsentEngines);
            }
            life.status(specs.size() + " engine(s) to stream " + fleet.name() + " at " + nats + " ("
                    + (runFor == null ? "until Ctrl-C" : "for " + watch.run.duration + " s") + ")");
            life.runUntilStopped(
                    runFor,
                    null,
                    List.of(new Lifecycle.Periodic(
                            run.every(), () -> life.status(relay.stats().summary()))));
        } finally {
            life.stopping();
            relay.close(); // waits for what was received to be in the stream
        }
        return relay.stats();
    }
}
