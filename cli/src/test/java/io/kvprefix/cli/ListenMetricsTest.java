package io.kvprefix.cli;

import static io.kvprefix.cli.MetricsProcess.counters;
import static io.kvprefix.cli.MetricsProcess.value;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.kvprefix.EventStatus;
import io.kvprefix.opstream.Op;
import io.kvprefix.opstream.OpStreamWriter;
import io.kvprefix.testing.RepoPaths;
import io.kvprefix.zmq.DecodeIssue;
import io.kvprefix.zmq.SubscriberStats;
import io.kvprefix.zmq.testing.PythonPublisher;
import io.kvprefix.zmq.testing.Truth;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kvprefix listen --metrics-port} (docs/METRICS.md) as an operator meets it: the command
 * runs in its own JVM against the vLLM-shaped publisher in a Python process, is scraped over HTTP
 * with the JDK's client while events flow, and every scrape is parsed by the Prometheus client
 * library's own parser ({@code cli/src/test/python/prometheus_samples.py}, Debian's
 * python3-prometheus-client). Counters must only grow from scrape to scrape and end equal to the
 * final JSON stats; {@code /health/ready} must turn ready only once a withheld range was replayed;
 * an {@code explain} line of {@code --queries} is answered with the depth its match line gets.
 */
class ListenMetricsTest {
    private static final Path SAMPLES = RepoPaths.root().resolve("cli/src/test/python/prometheus_samples.py");

    @TempDir
    Path dir;

    /** One parsed sample: which scrape, the family's type, the sample's name, its labels and value. */
    record Sample(int scrape, String type, String name, String labels, double value) {
        String series() {
            return name + "{" + labels + "}";
        }
    }

    @Test
    void countersGrowWhileEventsFlowAndEndEqualToTheFinalStats() throws Exception {
        requirePrometheusParser();
        String spec = """
                {"seed": 21, "interval": 0.02, "engines": [
                 {"name": "E1", "encoding": "array", "replay": "plain", "batches": 120, "drop": [[30, 34]]},
                 {"name": "E2", "encoding": "map", "replay": "none", "ranks": [0], "batches": 120, "drop": [[50, 54]]}]}""";
        try (PythonPublisher pub = new PythonPublisher(dir, spec);
                MetricsProcess listen = listen(
                        "--engine",
                        pub.ports("E1").pubEndpoint() + "=1,replay="
                                + pub.ports("E1").replayEndpoint(),
                        "--engine",
                        pub.ports("E2").pubEndpoint() + "=2/0",
                        "--replay-timeout",
                        "5")) {
            assertEquals(200, listen.get("/health/live").statusCode());
            List<Path> scrapes = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            String last = null;
            boolean done = false;
            while (System.nanoTime() < deadline) {
                HttpResponse<String> r = listen.get("/metrics");
                assertEquals(200, r.statusCode());
                assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("text/plain; version=0.0.4"));
                Path f = dir.resolve("scrape-" + scrapes.size() + ".txt");
                Files.writeString(f, r.body());
                scrapes.add(f);
                String counters = counters(r.body(), "kvprefix_subscriber_");
                if (done && counters.equals(last)) {
                    break; // everything published has been applied: two scrapes agree
                }
                last = counters;
                done = done || pub.isDone();
                Thread.sleep(150);
            }
            assertTrue(done, "the publisher did not finish: " + pub.stderr());
            String json = listen.stop();
            Map<String, Map<String, Long>> engines = engineStats(json);

            List<Sample> samples = parse(scrapes);
            int n = scrapes.size();
            // events flowed while we scraped: the batch counter took several values
            long distinct = samples.stream()
                    .filter(s -> s.name().equals("kvprefix_subscriber_batches_total"))
                    .map(s -> s.labels() + "=" + s.value())
                    .distinct()
                    .count();
            assertTrue(distinct >= 6, "the scrapes saw the counters move only " + distinct + " times over " + n);
            assertMonotonic(samples);
            Map<String, Double> fin = new TreeMap<>();
            for (Sample s : samples) {
                if (s.scrape() == n - 1) {
                    fin.put(s.series(), s.value());
                }
            }
            for (var e : engines.entrySet()) {
                assertEngineEqualsJson(fin, e.getKey(), e.getValue());
            }
            Map<String, Long> e1 = engines.values().iterator().next();
            assertTrue(e1.get("gaps") >= 1 && e1.get("replays") >= 1, "E1 replayed its gap: " + e1);
            assertEquals(1L, sum(engines, "resyncs"), "E2 resynced once: " + engines);
            // the index saw every event the subscriber applied, with the same statuses (plus the clears of resyncs)
            for (EventStatus st : EventStatus.values()) {
                double index = fin.get("kvprefix_index_events_total{status=" + st.wireName() + "}");
                long subscriber = 0;
                for (Map<String, Long> eng : engines.values()) {
                    for (SubscriberStats.EventKind k : SubscriberStats.EventKind.values()) {
                        subscriber += eng.get("events." + k.wireName() + "." + st.wireName());
                    }
                }
                if (st == EventStatus.OK) {
                    assertTrue(index >= subscriber && index <= subscriber + 4, st + ": " + index + " vs " + subscriber);
                } else {
                    assertEquals(subscriber, index, 0.0, st.wireName());
                }
            }
            assertTrue(fin.get("kvprefix_index_blocks{}") > 0, "" + fin);
            assertTrue(fin.get("kvprefix_index_memory_bytes{area=native}") > 0, "" + fin);
            assertTrue(types(samples).get("kvprefix_subscriber_events").equals("counter"), "" + types(samples));
            assertTrue(types(samples).get("kvprefix_subscriber_lag_seconds").equals("gauge"), "" + types(samples));
            assertTrue(types(samples).get("kvprefix_index_match_seconds").equals("histogram"), "" + types(samples));
        }
    }

    /**
     * An engine whose replay socket never answers and that publishes nothing: before the fix
     * {@code /health/ready} turned 200 with nothing applied once its start-up replay was given up.
     * Now it is declared absent, named in the 503's body, counted as a replay failure, and only
     * {@code --ready-with-absent-engines} makes that ready.
     */
    @Test
    void anAbsentEngineKeepsTheProcessNotReadyUnlessAllowed() throws Exception {
        int pubPort;
        int replayPort;
        try (ServerSocket a = new ServerSocket(0);
                ServerSocket b = new ServerSocket(0)) {
            pubPort = a.getLocalPort(); // nobody publishes or answers there
            replayPort = b.getLocalPort();
        }
        String engine = "tcp://127.0.0.1:" + pubPort + "=1,replay=tcp://127.0.0.1:" + replayPort;
        for (boolean allowed : new boolean[] {false, true}) {
            List<String> args = new ArrayList<>(List.of("--engine", engine, "--replay-timeout", "0.2"));
            if (allowed) {
                args.add("--ready-with-absent-engines");
            }
            try (MetricsProcess listen = listen(args.toArray(String[]::new))) {
                HttpResponse<String> first = listen.get("/health/ready");
                assertEquals(503, first.statusCode(), first.body()); // its start-up replay is outstanding
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                HttpResponse<String> r = first;
                while (System.nanoTime() < deadline) {
                    r = listen.get("/health/ready");
                    String m = listen.get("/metrics").body();
                    boolean failed = m.lines()
                            .anyMatch(l ->
                                    l.startsWith("kvprefix_subscriber_replay_failures_total") && !l.endsWith(" 0.0"));
                    if (failed && (allowed ? r.statusCode() == 200 : r.body().contains("absent"))) {
                        break;
                    }
                    assertTrue(allowed || r.statusCode() == 503, "ready with nothing applied: " + r.body());
                    Thread.sleep(100);
                }
                if (allowed) {
                    assertEquals(200, r.statusCode(), r.body());
                } else {
                    assertEquals(503, r.statusCode(), r.body());
                    assertEquals("not ready: engine tcp://127.0.0.1:" + pubPort + " absent\n", r.body());
                }
                listen.stop();
            }
        }
    }

    /**
     * An engine with a snapshot endpoint (docs/LISTENER.md section 8) through {@code kvprefix listen}:
     * a whole snapshot makes it ready with the engine's cache in the index; a damaged one fails
     * closed, so the process stays not ready, names the engine {@code unsynced} and counts the
     * refusal, and the index holds nothing of it.
     */
    @Test
    void anEngineSnapshotMakesItReadyAndADamagedOneKeepsItNotReady() throws Exception {
        for (String damage : new String[] {null, "truncated"}) {
            String spec = """
                    {"seed": 23, "engines": [{"name": "S", "encoding": "array", "replay": "none", "ranks": [0],
                     "batches": 60, "early": 60, "snapshot": true, "snapshot_damage": %s}]}""".formatted(damage == null ? "null" : "\"" + damage + "\"");
            Path where = Files.createDirectories(dir.resolve(damage == null ? "whole" : damage));
            try (PythonPublisher pub = new PythonPublisher(where, spec);
                    MetricsProcess listen = listen(
                            "--engine",
                            pub.ports("S").pubEndpoint() + "=1,snapshot="
                                    + pub.ports("S").snapshotEndpoint())) {
                String engine = pub.ports("S").pubEndpoint();
                if (damage == null) {
                    awaitReady(listen, 200, "ready");
                    awaitSample(listen, "kvprefix_index_blocks", v -> v > 0);
                    assertEquals(1.0, counter(listen, "snapshots_applied"), 0.0);
                } else {
                    awaitReady(listen, 503, "engine " + engine + " unsynced");
                    assertEquals(1.0, counter(listen, "snapshots_refused"), 0.0);
                    assertEquals(0.0, counter(listen, "snapshots_applied"), 0.0);
                    awaitSample(listen, "kvprefix_index_blocks", v -> v == 0);
                }
                listen.stop();
            }
        }
    }

    /** The one engine's {@code kvprefix_subscriber_NAME_total}, or -1 if it is not served. */
    private static double counter(MetricsProcess listen, String name) throws Exception {
        String prefix = "kvprefix_subscriber_" + name + "_total{";
        return listen.get("/metrics")
                .body()
                .lines()
                .filter(l -> l.startsWith(prefix))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
                .findFirst()
                .orElse(-1);
    }

    /**
     * An idle engine with a replay socket (it publishes nothing; its replay answers, 2 s after it is
     * asked, with the end marker alone): not ready while that start-up replay is outstanding, ready
     * once it answered. Before, the engine stayed {@code waiting} and the process 503 for good.
     */
    @Test
    void anIdleEngineWithAReplaySocketIsReadyOnceItsReplayAnswered() throws Exception {
        String spec = """
                {"seed": 5, "engines": [{"name": "E1", "replay": "plain", "batches": 0, "replay_delay": 2}]}""";
        try (PythonPublisher pub = new PythonPublisher(dir, spec);
                MetricsProcess listen = listen(
                        "--engine",
                        pub.ports("E1").pubEndpoint() + "=1,replay="
                                + pub.ports("E1").replayEndpoint(),
                        "--replay-timeout",
                        "10")) {
            HttpResponse<String> first = listen.get("/health/ready");
            assertEquals(503, first.statusCode(), first.body());
            awaitReady(listen, 503, "engine " + pub.ports("E1").pubEndpoint() + " replaying");
            awaitReady(listen, 200, "ready");
            String metrics = listen.get("/metrics").body();
            assertTrue(value(metrics, "kvprefix_subscriber_replays_total") >= 1, metrics);
            assertEquals(0, value(metrics, "kvprefix_subscriber_replay_failures_total"), 0.0, metrics);
            assertEquals(0, value(metrics, "kvprefix_subscriber_batches_total"), 0.0, metrics);
            String json = listen.stop();
            assertTrue(json.contains("\"state\":\"live\""), "synced by its replay: " + json);
        }
    }

    /**
     * Saves of --snapshot that fail are counted (before the fix they had no metric at all), good ones
     * too; the dashboard's snapshot panels name what this process exports.
     */
    @Test
    void failedSnapshotSavesAreCounted() throws Exception {
        int port;
        try (ServerSocket a = new ServerSocket(0)) {
            port = a.getLocalPort(); // nobody publishes there
        }
        Path snap = dir.resolve("index.snap");
        try (MetricsProcess listen = listen(
                "--engine",
                "tcp://127.0.0.1:" + port + "=1",
                "--snapshot",
                snap.toString(),
                "--snapshot-interval",
                "0.2")) {
            awaitSample(listen, "kvprefix_snapshot_saves_total{result=\"ok\"}", v -> v >= 1);
            awaitSample(listen, "kvprefix_snapshot_age_seconds", v -> v >= 0);
            Files.delete(snap);
            Files.createDirectory(snap); // the next saves cannot replace a folder
            awaitSample(listen, "kvprefix_snapshot_saves_total{result=\"failed\"}", v -> v >= 1);
            DashboardNames.assertExported(listen.get("/metrics").body(), "kvprefix_snapshot_");
            listen.stop();
        }
    }

    /**
     * A fleet replica's /metrics and /health/ready (before: {@code --metrics-port} was refused with
     * {@code --nats}): ready once it applied the stream up to its last sequence at start, not ready
     * while the stream is gone, ready again on the new stream, every step on the meters too.
     */
    @Test
    void aReplicaServesItsMetricsAndTellsItsReadiness() throws Exception {
        try (io.kvprefix.nats.testing.NatsServer server =
                new io.kvprefix.nats.testing.NatsServer(Files.createDirectories(dir.resolve("nats")))) {
            io.nats.client.Connection c = io.kvprefix.nats.FleetConnection.open(server.url(), "test");
            try {
                replicaReadiness(server, c);
            } finally {
                c.close();
            }
        }
    }

    private void replicaReadiness(io.kvprefix.nats.testing.NatsServer server, io.nats.client.Connection c)
            throws Exception {
        {
            io.kvprefix.nats.FleetStream stream = io.kvprefix.nats.FleetStream.defaults();
            stream.ensure(c);
            try (MetricsProcess listen = listen("--nats", server.url())) {
                String tag = "{stream=\"" + stream.name() + "\"}";
                awaitReady(listen, 200, "ready");
                awaitSample(listen, "kvprefix_replica_stream_sequence" + tag, v -> v == 0);
                awaitSample(listen, "kvprefix_replica_stream_gone" + tag, v -> v == 0);
                c.jetStreamManagement().deleteStream(stream.name());
                awaitReady(listen, 503, "is gone");
                awaitSample(listen, "kvprefix_replica_stream_gone" + tag, v -> v == 1);
                stream.ensure(c); // made anew: another creation time
                awaitReady(listen, 200, "ready");
                awaitSample(listen, "kvprefix_replica_stream_resets_total" + tag, v -> v == 1);
                String scrape = listen.get("/metrics").body();
                DashboardNames.assertExported(scrape, "kvprefix_replica_");
                assertFalse(scrape.contains("kvprefix_snapshot_"), "a replica saves no --snapshot:\n" + scrape);
                listen.stop();
            }
        }
    }

    private static void awaitReady(MetricsProcess listen, int status, String body) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        HttpResponse<String> r = null;
        while (System.nanoTime() < deadline) {
            r = listen.get("/health/ready");
            if (r.statusCode() == status && r.body().contains(body)) {
                return;
            }
            Thread.sleep(100);
        }
        throw new AssertionError(
                "never " + status + " " + body + ": " + (r == null ? "" : r.statusCode() + " " + r.body()));
    }

    /** Scrapes until the sample named {@code series} (name and labels as printed) satisfies {@code ok}. */
    private static void awaitSample(MetricsProcess listen, String series, java.util.function.DoublePredicate ok)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String body = "";
        while (System.nanoTime() < deadline) {
            body = listen.get("/metrics").body();
            for (String l : body.lines().toList()) {
                if (l.startsWith(series + " ") && ok.test(Double.parseDouble(l.substring(series.length() + 1)))) {
                    return;
                }
            }
            Thread.sleep(100);
        }
        throw new AssertionError(series + " never as expected:\n" + body);
    }

    @Test
    void readyOnlyOnceTheWithheldRangeWasReplayed() throws Exception {
        requirePrometheusParser();
        // batches 10..14 are withheld from the live stream; the replay socket answers 3 s after it is asked
        String spec = """
                {"seed": 22, "interval": 0.03, "engines": [
                 {"name": "E1", "replay": "plain", "batches": 60, "drop": [[10, 14]], "replay_delay": 3}]}""";
        Path queries = dir.resolve("queries.jsonl");
        Files.writeString(queries, "");
        try (PythonPublisher pub = new PythonPublisher(dir, spec);
                MetricsProcess listen = listen(
                        "--engine",
                        pub.ports("E1").pubEndpoint() + "=1,replay="
                                + pub.ports("E1").replayEndpoint(),
                        "--replay-timeout",
                        "10",
                        "--queries",
                        queries.toString())) {
            List<String> seen = new ArrayList<>() {
                @Override
                public String toString() { // the last observations are the telling ones
                    return size() <= 40
                            ? super.toString()
                            : "[..., " + String.join(", ", subList(size() - 40, size())) + "]";
                }
            };
            long notReadyAt = -1;
            double replayedBefore = 0;
            long readyAgainAt = -1;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
            while (System.nanoTime() < deadline && readyAgainAt < 0) {
                HttpResponse<String> r = listen.get("/health/ready");
                String metrics = listen.get("/metrics").body();
                double replayed = value(metrics, "kvprefix_subscriber_replayed_batches_total");
                double replaying = value(metrics, "kvprefix_subscriber_replaying");
                // the engine is also asked at once when it is added (docs/LISTENER.md section 3): that start-up
                // request holds readiness back too, but only the gap's replay brings the withheld batches
                boolean gapSeen = value(metrics, "kvprefix_subscriber_gaps_total") >= 1;
                seen.add(r.statusCode() + " replayed=" + replayed + " replaying=" + replaying + " gap=" + gapSeen);
                if (r.statusCode() == 503) {
                    assertTrue(r.body().startsWith("not ready: "), r.body());
                    if (notReadyAt < 0 && gapSeen && r.body().contains("replay")) {
                        notReadyAt = System.nanoTime();
                        replayedBefore = replayed; // what the start-up request brought (batches published by then)
                    }
                } else {
                    assertEquals(200, r.statusCode(), r.body());
                    assertEquals("ready\n", r.body());
                    if (notReadyAt >= 0) {
                        readyAgainAt = System.nanoTime();
                        // ready again only with the withheld batches applied from the replay
                        assertTrue(replayed >= replayedBefore + 5, "ready before the replay: " + seen);
                        assertEquals(0.0, replaying, "" + seen);
                    }
                }
                if (notReadyAt >= 0 && replayed > replayedBefore) {
                    // the publisher answers the gap's replay 3 s after it was asked: not within the first poll
                    assertTrue(System.nanoTime() - notReadyAt > TimeUnit.MILLISECONDS.toNanos(1500), "" + seen);
                }
                Thread.sleep(100);
            }
            assertTrue(notReadyAt >= 0, "never saw the replay hold readiness back: " + seen);
            assertTrue(readyAgainAt >= 0, "never ready again: " + seen + "\n" + pub.stderr());
            assertTrue(
                    readyAgainAt - notReadyAt > TimeUnit.MILLISECONDS.toNanos(2000),
                    "not ready for only " + (readyAgainAt - notReadyAt) / 1e6 + " ms: " + seen);
            // --queries answers an explain line with the same depth as the match line after it
            long lastSeq = pub.awaitDone(30).get("E1");
            Truth truth = Truth.read(pub.truth());
            Truth.Query q = truth.queries().stream()
                    .filter(x -> x.depth() > 0)
                    .findFirst()
                    .orElseThrow();
            Op.TokenMatch m = new Op.TokenMatch(q.tokens(), q.blockSize(), q.lora(), null);
            Files.writeString(queries, OpStreamWriter.line(new Op.Explain(m)) + "\n" + OpStreamWriter.line(m) + "\n");
            while (value(listen.get("/metrics").body(), "kvprefix_subscriber_last_sequence") < lastSeq) {
                Thread.sleep(50); // every batch applied
            }
            List<String> out = listen.stopAndReadAll();
            assertEquals(3, out.size(), "" + out);
            String worker = "{\"worker\":1,\"dp_rank\":" + q.rank() + ",\"depth\":" + q.depth() + ",";
            assertTrue(out.get(0).startsWith("{\"explain\":{") && out.get(0).contains(worker), out.get(0) + " " + q);
            assertTrue(out.get(1).contains("[1," + q.rank() + "," + q.depth() + "]"), out.get(1));
            Map<String, Long> e = engineStats(out.get(2)).values().iterator().next();
            assertEquals(1, e.get("gaps"), "" + e);
            assertEquals(0, e.get("resyncs"), "" + e);
        }
    }

    @Test
    void aBadOrBusyPortIsAClearUsageError() throws Exception {
        try (ServerSocket busy = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            String engine = "tcp://127.0.0.1:5557=1";
            record Case(String message, String... args) {}
            for (Case c : List.of(
                    new Case("--metrics-port must be 0..65535", "--metrics-port", "70000"),
                    new Case("--metrics-port must be 0..65535", "--metrics-port", "-1"),
                    new Case(
                            "--metrics-port " + busy.getLocalPort() + ": cannot listen on 127.0.0.1:"
                                    + busy.getLocalPort(),
                            "--metrics-port",
                            "" + busy.getLocalPort(),
                            "--metrics-host",
                            "127.0.0.1"),
                    new Case(
                            "--metrics-host: cannot resolve",
                            "--metrics-port",
                            "0",
                            "--metrics-host",
                            "no.such.host.invalid"))) {
                List<String> args = new ArrayList<>(List.of("listen", "--engine", engine, "--duration", "1"));
                args.addAll(List.of(c.args()));
                var r = CliRunner.run(args.toArray(String[]::new));
                String what = args + ": " + r.err();
                assertEquals(2, r.exit(), what);
                assertEquals("", r.out(), what);
                assertTrue(r.err().contains(c.message()), what);
                assertEquals(1, r.err().strip().lines().count(), "one line: " + what);
            }
        }
    }

    // ------------------------------------------------------------------ helpers

    /** {@code kvprefix listen --stats-interval 1 --metrics-port 0 ARGS} in its own JVM (the launcher). */
    private static MetricsProcess listen(String... args) throws IOException, InterruptedException {
        List<String> all = new ArrayList<>(List.of("--stats-interval", "1"));
        all.addAll(List.of(args));
        return new MetricsProcess("listen", all);
    }

    private static void requirePrometheusParser() throws IOException, InterruptedException {
        Process p = new ProcessBuilder(PythonPublisher.PYTHON, "-c", "import prometheus_client.parser")
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (p.waitFor() != 0) {
            throw new AssertionError("the metrics tests parse /metrics with the Prometheus client library's parser: "
                    + "apt-get install -y python3-prometheus-client (or run ./kvprefix setup as root): " + out);
        }
    }

    private static List<Sample> parse(List<Path> scrapes) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(PythonPublisher.PYTHON, SAMPLES.toString()));
        scrapes.forEach(s -> cmd.add(s.toString()));
        Process p = new ProcessBuilder(cmd).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), "the Prometheus parser failed: " + err);
        List<Sample> samples = new ArrayList<>();
        for (String l : out.split("\n")) {
            if (l.isEmpty()) {
                continue;
            }
            String[] f = l.split("\t", -1);
            double v = switch (f[4]) {
                case "nan" -> Double.NaN;
                case "inf" -> Double.POSITIVE_INFINITY;
                case "-inf" -> Double.NEGATIVE_INFINITY;
                default -> Double.parseDouble(f[4]);
            };
            samples.add(new Sample(Integer.parseInt(f[0]), f[1], f[2], f[3], v));
        }
        assertTrue(samples.size() > 100, "parsed samples: " + samples.size());
        return samples;
    }

    private static Map<String, String> types(List<Sample> samples) {
        Map<String, String> out = new HashMap<>();
        for (Sample s : samples) {
            String family = s.name().replaceAll("_(total|bucket|count|sum)$", "");
            out.putIfAbsent(family, s.type());
        }
        return out;
    }

    /** Every counter series (and every histogram's count and sum) never goes down from one scrape to the next. */
    private static void assertMonotonic(List<Sample> samples) {
        Map<String, Sample> previous = new HashMap<>();
        int checked = 0;
        for (Sample s : samples) {
            boolean counter = s.type().equals("counter")
                    || (s.type().equals("histogram") && !s.name().endsWith("_max"));
            if (!counter) {
                continue;
            }
            Sample p = previous.put(s.series(), s);
            if (p != null) {
                assertTrue(
                        s.value() >= p.value(),
                        s.series() + " went down from " + p.value() + " (scrape " + p.scrape() + ") to " + s.value()
                                + " (scrape " + s.scrape() + ")");
                checked++;
            }
        }
        assertTrue(checked > 100, "counters compared: " + checked);
    }

    /** The final scrape's subscriber series of one engine equal its numbers in the final JSON stats. */
    private static void assertEngineEqualsJson(Map<String, Double> fin, String endpoint, Map<String, Long> json) {
        String worker = Long.toString(json.get("worker"));
        String at = "engine=" + endpoint + ";";
        int compared = 0;
        for (SubscriberStats.Counter c : SubscriberStats.Counter.values()) {
            String series = "kvprefix_subscriber_" + c.wireName() + "_total{" + at + "worker=" + worker + "}";
            assertEquals((double) json.get(c.wireName()), fin.get(series), series);
            compared++;
        }
        for (SubscriberStats.EventKind k : SubscriberStats.EventKind.values()) {
            for (EventStatus st : EventStatus.values()) {
                String series = "kvprefix_subscriber_events_total{" + at + "kind=" + k.wireName() + ";status="
                        + st.wireName() + ";worker=" + worker + "}";
                assertEquals(
                        (double) json.get("events." + k.wireName() + "." + st.wireName()), fin.get(series), series);
                compared++;
            }
        }
        for (DecodeIssue i : DecodeIssue.values()) {
            String family = switch (i.category()) {
                case ERROR -> "decode_errors";
                case IGNORED -> "ignored_events";
                case NOTE -> "notes";
            };
            String key = switch (i.category()) {
                case ERROR -> "decode_errors.";
                case IGNORED -> "ignored.";
                case NOTE -> "notes.";
            };
            String series = "kvprefix_subscriber_" + family + "_total{" + at + "issue=" + i.wireName() + ";worker="
                    + worker + "}";
            assertEquals((double) json.get(key + i.wireName()), fin.get(series), series);
            compared++;
        }
        assertEquals(
                (double) json.get("last_seq"),
                fin.get("kvprefix_subscriber_last_sequence{" + at + "worker=" + worker + "}"));
        assertEquals(
                (double) json.get("pending"),
                fin.get("kvprefix_subscriber_pending_batches{" + at + "worker=" + worker + "}"));
        assertTrue(json.get("events.stored.ok") > 0 && json.get("blocks_stored") > 0, "" + json);
        assertTrue(compared > 30, "compared " + compared);
    }

    private static long sum(Map<String, Map<String, Long>> engines, String key) {
        return engines.values().stream().mapToLong(m -> m.get(key)).sum();
    }

    /** The final JSON stats: per engine endpoint, every number under it by its dotted path. */
    private static Map<String, Map<String, Long>> engineStats(String json) throws IOException {
        Map<String, Map<String, Long>> out = new LinkedHashMap<>();
        try (JsonParser p = new JsonFactory().createParser(json)) {
            assertEquals(JsonToken.START_OBJECT, p.nextToken());
            List<String> path = new ArrayList<>();
            String field = null;
            Map<String, Long> engine = null;
            for (JsonToken t; (t = p.nextToken()) != null; ) {
                switch (t) {
                    case FIELD_NAME -> field = p.currentName();
                    case START_OBJECT -> {
                        path.add(field);
                        if (path.size() == 2 && "engines".equals(path.get(0))) {
                            engine = new TreeMap<>();
                        }
                    }
                    case START_ARRAY -> path.add(field);
                    case END_OBJECT, END_ARRAY -> {
                        if (!path.isEmpty()) {
                            path.remove(path.size() - 1);
                        }
                    }
                    case VALUE_STRING -> {
                        if (engine != null && path.size() == 2 && field.equals("endpoint")) {
                            out.put(p.getText(), engine);
                        }
                    }
                    case VALUE_NUMBER_INT -> {
                        if (engine != null && path.size() >= 2) {
                            List<String> inner = new ArrayList<>(path.subList(2, path.size()));
                            inner.add(field);
                            engine.put(String.join(".", inner), p.getLongValue());
                        }
                    }
                    default -> {}
                }
            }
        }
        assertFalse(out.isEmpty(), "no engines in " + json);
        return out;
    }
}
