package io.kvprefix.cli;

import io.kvprefix.nats.EventRelay;
import io.kvprefix.nats.FleetConnection;
import io.kvprefix.nats.FleetStream;
import io.kvprefix.nats.RelayStats;
import io.kvprefix.zmq.EngineEndpoint;
import io.nats.client.Connection;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kvprefix relay}: subscribes to engines as {@code listen} does and publishes their batches,
 * in sequence order, to a JetStream stream that replicas ({@code listen --nats}) apply
 * (docs/FLEET.md). Runs until Ctrl-C / SIGTERM or {@code --duration}, then waits for what it
 * received to be in the stream and prints one JSON stats line ({@link RelayStats#toJson()}).
 *
 * <p>Exit status: 0 after a run; 2 for a usage error; 1 if the server cannot be reached.
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
            "Prints one JSON stats object at the end."
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
            names = "--duration",
            paramLabel = "SECONDS",
            description = "stop after this many seconds (default: run until Ctrl-C)")
    Double duration;

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

    @Option(
            names = {"-q", "--quiet"},
            description = "no periodic stats lines on standard error")
    boolean quiet;

    @Override
    public Integer call() throws Exception {
        List<EngineEndpoint> specs = ListenCommand.parseEngines(engines);
        FleetStream fleet = FleetStream.named(stream).withMaxAge(ListenCommand.seconds(retention, "--retention"));
        Duration runFor = duration == null ? null : ListenCommand.seconds(duration, "--duration");
        Duration every = ListenCommand.seconds(statsInterval, "--stats-interval");
        Duration replayWait = ListenCommand.seconds(replayTimeout, "--replay-timeout");
        PrintStream err = System.err;
        CountDownLatch stop = new CountDownLatch(1);
        CountDownLatch finished = new CountDownLatch(1);
        Thread hook = new Thread(
                () -> {
                    stop.countDown();
                    try {
                        finished.await(20, TimeUnit.SECONDS); // let the relay drain and print its stats
                    } catch (InterruptedException ignored) {
                        Thread.currentThread().interrupt();
                    }
                },
                "kvprefix-relay-shutdown");
        Connection connection = FleetConnection.open(nats, "kvprefix-relay");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            EventRelay relay = EventRelay.builder(connection, fleet)
                    .replayTimeout(replayWait)
                    .build();
            try {
                for (EngineEndpoint e : specs) {
                    relay.addEngine(e);
                }
                if (!quiet) {
                    err.println("kvprefix relay: " + specs.size() + " engine(s) to stream " + fleet.name() + " at "
                            + nats + " (" + (runFor == null ? "until Ctrl-C" : "for " + duration + " s") + ")");
                }
                long deadline = runFor == null ? Long.MAX_VALUE : System.nanoTime() + runFor.toNanos();
                while (true) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0 || stop.await(Math.min(left, every.toNanos()), TimeUnit.NANOSECONDS)) {
                        break;
                    }
                    if (!quiet) {
                        err.println("kvprefix relay: " + relay.stats().summary());
                    }
                }
            } finally {
                relay.close(); // waits for what was received to be in the stream
            }
            RelayStats s = relay.stats();
            System.out.println(s.toJson());
            System.out.flush();
            if (!quiet) {
                err.println("kvprefix relay: " + s.summary());
            }
            return 0;
        } finally {
            connection.close();
            finished.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException ignored) {
                // the JVM is shutting down: the hook is running and returns now
            }
        }
    }
}
