package io.kvprefix.cli;

import static io.kvprefix.cli.MetricsProcess.counters;
import static io.kvprefix.cli.MetricsProcess.value;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.nats.testing.NatsServer;
import io.kvprefix.standin.Standin;
import io.kvprefix.standin.StandinSettings;
import io.kvprefix.zmq.testing.PythonPublisher;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kvprefix relay --metrics-port} (docs/METRICS.md section 2) in its own JVM against a real
 * nats-server and the vLLM-shaped publisher process, scraped with the JDK's HTTP client:
 * {@code /health/ready} goes through each state (an engine replaying, an engine absent) by the rule
 * {@code listen}'s has, turns ready with an absent engine only under {@code --ready-with-absent-engines},
 * and the per-engine relay counters end equal to the relay's final JSON stats.
 */
class RelayMetricsTest {
    @TempDir
    Path dir;

    @Test
    void readinessNamesEachEngineAndTheCountersEndAsTheStats() throws Exception {
        // the replay socket answers 3 s after it is asked: the start-up replay is outstanding meanwhile
        String spec = """
                {"seed": 23, "interval": 0.03, "engines": [
                 {"name": "E1", "replay": "plain", "batches": 60, "drop": [[10, 14]], "replay_delay": 3}]}""";
        String absent = "tcp://127.0.0.1:" + freePort();
        try (NatsServer server = new NatsServer(Files.createDirectories(dir.resolve("nats")));
                PythonPublisher pub = new PythonPublisher(Files.createDirectories(dir.resolve("engines")), spec);
                MetricsProcess relay = relay(
                        "--nats",
                        server.url(),
                        "--engine",
                        pub.ports("E1").pubEndpoint() + "=1,replay="
                                + pub.ports("E1").replayEndpoint(),
                        "--engine",
                        absent + "=2,replay=tcp://127.0.0.1:" + freePort(),
                        "--replay-timeout",
                        "6")) {
            String e1 = pub.ports("E1").pubEndpoint();
            assertEquals(200, relay.get("/health/live").statusCode());
            Set<String> bodies = new LinkedHashSet<>();
            String wantEnd = "not ready: engine " + absent + " absent\n";
            String lastCounters = null;
            String metrics = "";
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            while (System.nanoTime() < deadline) {
                HttpResponse<String> r = relay.get("/health/ready");
                assertEquals(503, r.statusCode(), "ready with an absent engine: " + r.body());
                bodies.add(r.body());
                metrics = relay.get("/metrics").body();
                String counters = counters(metrics, "kvprefix_relay_");
                if (pub.isDone() && r.body().equals(wantEnd) && counters.equals(lastCounters)) {
                    break;
                }
                lastCounters = counters;
                Thread.sleep(150);
            }
            assertTrue(
                    bodies.stream().anyMatch(b -> b.contains("engine " + e1 + " replaying")),
                    "E1's start-up replay was never named: " + bodies);
            assertTrue(
                    bodies.stream()
                            .anyMatch(b -> b.contains("engine " + absent + " waiting")
                                    || b.contains("engine " + absent + " replaying")),
                    "the absent engine was never named before it was declared absent: " + bodies);
            assertTrue(bodies.contains(wantEnd), "the end state: " + bodies);
            assertTrue(pub.isDone(), "the publisher did not finish: " + pub.stderr());

            String json = relay.stop();
            Matcher m = Pattern.compile("\"endpoint\":\"" + Pattern.quote(e1)
                            + "\",\"subject\":\"[^\"]*\",\"frames\":(\\d+),\"batches\":(\\d+)")
                    .matcher(json);
            assertTrue(m.find(), json);
            long frames = Long.parseLong(m.group(1));
            long batches = Long.parseLong(m.group(2));
            assertTrue(batches >= 60, "every batch, the withheld ones through the replay: " + json);
            assertEquals(batches, value(metrics, "kvprefix_relay_batches_total", e1), 0.0, metrics);
            assertEquals(frames, value(metrics, "kvprefix_relay_acks_total", e1), 0.0, metrics);
            assertEquals(0, value(metrics, "kvprefix_relay_publish_failing", e1), 0.0, metrics);
            assertEquals(0, value(metrics, "kvprefix_relay_queued", e1), 0.0, metrics);
            assertEquals(0, value(metrics, "kvprefix_relay_batches_total", absent), 0.0, metrics);
            assertTrue(value(metrics, "kvprefix_subscriber_replays_total", e1) >= 1, metrics);
            assertTrue(value(metrics, "kvprefix_subscriber_replay_failures_total", absent) >= 1, metrics);
            assertEquals(0, value(metrics, "kvprefix_relay_stream_resets_total", "KVPREFIX_EVENTS"), 0.0, metrics);
            DashboardNames.assertExported(metrics, "kvprefix_relay_");
            // a relay saves no snapshot: before, it exported kvprefix_snapshot_* that never moved
            assertFalse(metrics.contains("kvprefix_snapshot_"), metrics);
        }
    }

    @Test
    void anAbsentEngineIsReadyOnlyWhenAllowed() throws Exception {
        String engine = "tcp://127.0.0.1:" + freePort() + "=1,replay=tcp://127.0.0.1:" + freePort();
        try (NatsServer server = new NatsServer(Files.createDirectories(dir.resolve("nats")));
                MetricsProcess relay = relay(
                        "--nats",
                        server.url(),
                        "--engine",
                        engine,
                        "--replay-timeout",
                        "0.2",
                        "--ready-with-absent-engines")) {
            HttpResponse<String> r = relay.get("/health/ready");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (r.statusCode() != 200 && System.nanoTime() < deadline) {
                assertEquals(503, r.statusCode(), r.body());
                Thread.sleep(100);
                r = relay.get("/health/ready");
            }
            assertEquals(200, r.statusCode(), r.body());
            assertEquals("ready\n", r.body());
            relay.stop();
        }
    }

    /**
     * A stand-in engine that has served nothing (idle: it publishes no batch) but answers its replay
     * socket: the relay is ready once that start-up replay answered. Before, the engine stayed
     * {@code waiting} and the relay answered 503 for good.
     */
    @Test
    void anIdleStandinEngineIsReadyOnceItsReplayAnswered() throws Exception {
        try (NatsServer server = new NatsServer(Files.createDirectories(dir.resolve("nats")));
                Standin engines = Standin.start(StandinSettings.builder().build())) {
            Standin.BoundEngine e = engines.engines().get(0);
            String endpoint = "tcp://127.0.0.1:" + e.events();
            try (MetricsProcess relay = relay(
                    "--nats",
                    server.url(),
                    "--engine",
                    endpoint + "=" + e.worker() + ",replay=tcp://127.0.0.1:" + e.replay())) {
                HttpResponse<String> r = relay.get("/health/ready");
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (r.statusCode() != 200 && System.nanoTime() < deadline) {
                    assertEquals(503, r.statusCode(), r.body());
                    Thread.sleep(100);
                    r = relay.get("/health/ready");
                }
                assertEquals(200, r.statusCode(), "an idle engine whose replay answered: " + r.body());
                assertEquals("ready\n", r.body());
                String metrics = relay.get("/metrics").body();
                assertTrue(value(metrics, "kvprefix_subscriber_replays_total", endpoint) >= 1, metrics);
                assertEquals(0, value(metrics, "kvprefix_subscriber_batches_total", endpoint), 0.0, metrics);
                relay.stop();
            }
        }
    }

    /** {@code ./kvprefix relay --metrics-port 0 ARGS} in its own JVM, on this JVM's class path. */
    private static MetricsProcess relay(String... args) throws IOException, InterruptedException {
        return new MetricsProcess("relay", List.of(args));
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort(); // nobody publishes or answers there
        }
    }
}
