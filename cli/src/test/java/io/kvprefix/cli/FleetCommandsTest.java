package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.BlockHasher;
import io.kvprefix.IndexConfig;
import io.kvprefix.MatchResult;
import io.kvprefix.Worker;
import io.kvprefix.nats.testing.NatsServer;
import io.kvprefix.opstream.Op;
import io.kvprefix.opstream.OpStreamWriter;
import io.kvprefix.testing.OracleIndex;
import io.kvprefix.testing.RepoPaths;
import io.kvprefix.zmq.testing.PythonPublisher;
import io.kvprefix.zmq.testing.Truth;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fleet of docs/OPERATING.md section 3, command by command, against a real nats-server and the
 * vLLM-shaped publisher process: {@code kvprefix relay} (a process of its own) fills the stream from two engines, one with a
 * dropped range its replay fills; two {@code kvprefix listen --nats} replicas (one another process,
 * one in this JVM) apply it, and both answer the truth file's queries exactly as the test oracle fed
 * the engines' full history; the first publishes snapshots ({@code --snapshot-interval}), and a third
 * replica started after the others bootstraps from the newest and answers alike.
 */
class FleetCommandsTest {
    @TempDir
    Path dir;

    @Test
    void badInputIsAClearUsageError() {
        record Case(String message, String... args) {}
        for (Case c : List.of(
                new Case("give at least one --engine or --trtllm-events, or --nats", "listen"),
                new Case(
                        "--engine and --trtllm-events exclude --nats",
                        "listen",
                        "--nats",
                        "nats://127.0.0.1:1",
                        "--engine",
                        "tcp://127.0.0.1:5557=1"),
                new Case("stream name 'a.b'", "listen", "--nats", "nats://127.0.0.1:1", "--stream", "a.b"),
                // before: taken as nats://localhost:4222
                new Case("--nats '': give one or more nats://HOST:PORT", "listen", "--nats", ""),
                new Case(
                        "--nats 'nats://a,': give one or more",
                        "relay",
                        "--nats",
                        "nats://a,",
                        "--engine",
                        "tcp://127.0.0.1:5557=1"),
                // before: the message carried java.net.URISyntaxException
                new Case("--nats 'nats://a b:4222': ", "listen", "--nats", "nats://a b:4222"),
                new Case(
                        "--snapshot is for engines read directly; with --nats, --snapshot-interval",
                        "listen",
                        "--nats",
                        "nats://127.0.0.1:1",
                        "--snapshot",
                        "x.snap"),
                new Case(
                        "--snapshot-interval must be a positive number",
                        "listen",
                        "--nats",
                        "nats://127.0.0.1:1",
                        "--snapshot-interval",
                        "0"),
                new Case( // a replica's index takes the budget too, checked before anything connects
                        "--memory-budget: 'lots' is not a byte count",
                        "listen",
                        "--nats",
                        "nats://127.0.0.1:1",
                        "--memory-budget",
                        "lots"),
                new Case("Missing required option: '--nats=URL'", "relay", "--engine", "tcp://127.0.0.1:5557=1"),
                new Case("expected ENDPOINT=WORKER", "relay", "--nats", "nats://127.0.0.1:1", "--engine", "x"),
                new Case(
                        "--retention must be a positive number",
                        "relay",
                        "--nats",
                        "nats://127.0.0.1:1",
                        "--engine",
                        "tcp://127.0.0.1:5557=1",
                        "--retention",
                        "0"))) {
            var r = CliRunner.run(c.args());
            String what = String.join(" ", c.args()) + ": " + r.err();
            assertEquals(2, r.exit(), what);
            assertEquals("", r.out(), what);
            assertTrue(r.err().contains(c.message()), what);
            assertFalse(r.err().contains("\tat "), "no stack trace: " + what);
            assertFalse(r.err().contains("Exception"), "no exception's name: " + what);
        }
        var r = CliRunner.run("relay", "--nats", "nats://127.0.0.1:1", "--engine", "tcp://127.0.0.1:5557=1");
        assertEquals(1, r.exit(), r.err());
        assertTrue(r.err().contains("cannot connect to NATS at nats://127.0.0.1:1"), r.err());
        assertFalse(r.err().contains("\tat "), r.err());
        assertFalse(r.err().contains("connection lost"), "a connection that never existed was not lost: " + r.err());
    }

    /** A mistyped --stream is said (exit 2), not answered from a new, empty stream in silence. */
    @Test
    void aMistypedStreamIsSaid() throws Exception {
        try (NatsServer server = new NatsServer(Files.createDirectories(dir.resolve("nats")))) {
            var r = CliRunner.run("listen", "--nats", server.url(), "--stream", "KVPREFIX_EVENTZ", "--duration", "1");
            assertEquals(2, r.exit(), r.err());
            assertTrue(r.err().contains("--stream 'KVPREFIX_EVENTZ': no such stream on " + server.url()), r.err());
            assertTrue(r.err().contains("(streams there: none)"), r.err());
            assertFalse(r.err().contains("NATS connection lost"), "no loss of a connection: " + r.err());
        }
    }

    @Test
    void aRelayAndTwoReplicasAnswerAsTheOracle() throws Exception {
        String spec = """
                {"seed": 21, "engines": [
                 {"name": "E1", "encoding": "array", "replay": "plain", "batches": 150, "drop": [[30, 44]]},
                 {"name": "E2", "encoding": "map", "replay": "plain", "ranks": [0, 1], "batches": 150}]}""";
        Path queries = dir.resolve("queries.jsonl");
        try (NatsServer server = new NatsServer(Files.createDirectories(dir.resolve("nats")));
                PythonPublisher pub = new PythonPublisher(Files.createDirectories(dir.resolve("engines")), spec)) {
            String e1 = pub.ports("E1").pubEndpoint() + "=1,replay="
                    + pub.ports("E1").replayEndpoint();
            String e2 = pub.ports("E2").pubEndpoint() + "=2,replay="
                    + pub.ports("E2").replayEndpoint();
            Process relay = launcher(
                    dir.resolve("relay.out"),
                    "relay",
                    "--nats",
                    server.url(),
                    "--engine",
                    e1,
                    "--engine",
                    e2,
                    "--duration",
                    "6",
                    "--stats-interval",
                    "1");
            pub.awaitDone(30);
            Truth truth = Truth.read(pub.truth());
            ByteArrayOutputStream q = new ByteArrayOutputStream();
            OpStreamWriter w = new OpStreamWriter(q);
            for (Truth.Query t : truth.queries()) {
                w.op(new Op.TokenMatch(t.tokens(), t.blockSize(), t.lora(), null, t.mm()));
            }
            w.flush();
            Files.write(queries, q.toByteArray());
            Process replica = launcher(
                    dir.resolve("replica-1.out"),
                    "listen",
                    "--nats",
                    server.url(),
                    "--duration",
                    "3",
                    "--snapshot-interval",
                    "0.5",
                    "--queries",
                    queries.toString());
            CliRunner.Result inJvm = CliRunner.run(
                    "listen",
                    "--nats",
                    server.url(),
                    "--duration",
                    "3",
                    "--stats-interval",
                    "0.5",
                    "--queries",
                    queries.toString());
            assertTrue(replica.waitFor(60, TimeUnit.SECONDS) && replica.exitValue() == 0, read("replica-1"));
            assertTrue(relay.waitFor(60, TimeUnit.SECONDS) && relay.exitValue() == 0, read("relay"));

            List<String> want = expected(truth);
            List<String> fromProcess =
                    Files.readString(dir.resolve("replica-1.out")).lines().toList();
            assertEquals(want, fromProcess.subList(0, fromProcess.size() - 1), read("replica-1"));
            List<String> fromJvm = inJvm.out().lines().toList();
            assertEquals(want, fromJvm.subList(0, fromJvm.size() - 1), inJvm.err());
            String stats = fromJvm.get(fromJvm.size() - 1);
            assertTrue(stats.startsWith("{\"stream\":\"KVPREFIX_EVENTS\",\"stream_seq\":"), stats);
            assertTrue(stats.contains("\"resyncs\":0"), stats);
            assertTrue(stats.contains("\"batches\":300,"), stats);
            assertTrue(inJvm.err().contains("kvprefix listen: 2 engines, stream seq"), inJvm.err());
            List<String> relayOut =
                    Files.readString(dir.resolve("relay.out")).lines().toList();
            String relayStats = relayOut.get(relayOut.size() - 1);
            assertTrue(relayStats.startsWith("{\"stream\":\"KVPREFIX_EVENTS\",\"frames\":"), relayStats);
            assertTrue(relayStats.contains("\"batches\":300,"), relayStats);
            assertTrue(relayStats.contains("\"resyncs\":0"), relayStats);

            // a third replica, started after the others: from replica-1's last snapshot, not the stream's start
            CliRunner.Result late = CliRunner.run(
                    "listen",
                    "--nats",
                    server.url(),
                    "--duration",
                    "1",
                    "--snapshot-interval",
                    "60",
                    "--queries",
                    queries.toString());
            List<String> fromLate = late.out().lines().toList();
            assertEquals(want, fromLate.subList(0, fromLate.size() - 1), late.err());
            String lateStats = fromLate.get(fromLate.size() - 1);
            assertTrue(lateStats.contains("\"messages\":0,"), lateStats);
            assertFalse(lateStats.contains("\"bootstrap_seq\":-1"), lateStats);
            assertTrue(lateStats.contains("\"resyncs\":0"), lateStats);
        }
    }

    /** What the oracle fed the engines' full history answers to the truth file's queries. */
    private static List<String> expected(Truth truth) throws java.io.IOException {
        try (OracleIndex oracle = new OracleIndex(IndexConfig.defaults())) {
            truth.feed(oracle, "E1", rank -> Worker.of(1, rank.orElse(0)), -1, -1);
            truth.feed(oracle, "E2", rank -> Worker.of(2, rank.orElse(0)), -1, -1);
            ByteArrayOutputStream expected = new ByteArrayOutputStream();
            OpStreamWriter ew = new OpStreamWriter(expected);
            MatchResult m = new MatchResult();
            for (Truth.Query t : truth.queries()) {
                oracle.match(
                        t.tokens(),
                        0,
                        t.tokens().length,
                        BlockHasher.builder()
                                .blockSize(t.blockSize())
                                .loraName(t.lora())
                                .build(),
                        t.mm(),
                        m);
                ew.scores(m);
            }
            ew.flush();
            List<String> want =
                    expected.toString(StandardCharsets.UTF_8).lines().toList();
            assertTrue(want.stream().filter(s -> !s.equals("{\"scores\":[]}")).count() > 20, "queries too easy");
            return want;
        }
    }

    /** Runs {@code ./kvprefix ARGS} on this JVM's class path, standard output to {@code out}, errors beside it. */
    private static Process launcher(Path out, String... args) throws Exception {
        String javaHome = Path.of(ProcessHandle.current().info().command().orElseThrow())
                .getParent()
                .getParent()
                .toString();
        List<String> cmd = new java.util.ArrayList<>(
                List.of(RepoPaths.root().resolve("kvprefix").toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd)
                .redirectOutput(out.toFile())
                .redirectError(Path.of(out + ".err").toFile());
        pb.environment().put("JAVA_HOME", javaHome);
        pb.environment().put("KVPREFIX_CLASSPATH", System.getProperty("java.class.path"));
        return pb.start();
    }

    private String read(String name) throws java.io.IOException {
        return Files.readString(dir.resolve(name + ".out")) + "\n" + Files.readString(dir.resolve(name + ".out.err"));
    }
}
