package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.BlockHasher;
import io.kvprefix.IndexConfig;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.opstream.Op;
import io.kvprefix.opstream.OpStreamWriter;
import io.kvprefix.testing.RepoPaths;
import io.kvprefix.zmq.testing.PythonPublisher;
import io.kvprefix.zmq.testing.Truth;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kvprefix listen --snapshot FILE} (docs/SNAPSHOT.md) against a real publisher in another
 * process: a first run, stopped by SIGTERM, saves the index with the engine's position; the engine
 * publishes more to nobody; a second run restores FILE, asks the replay socket for what follows
 * the saved batch only, answers like an oracle fed the whole stream, and saves FILE again at the
 * end of its --duration. A FILE that cannot be restored is one line, and the run starts empty.
 */
class ListenSnapshotTest {
    @TempDir
    Path dir;

    private static final String SPEC = """
            {"seed": 21, "engines": [
             {"name": "E1", "encoding": "array", "replay": "plain", "ranks": [0], "batches": 120,
              "restart_at": 40, "down_batches": 30}]}""";

    @Test
    void aRestartResumesFromTheSnapshotAndSavesItAgain() throws Exception {
        Path snap = dir.resolve("index.snap");
        Path queries = dir.resolve("queries.jsonl");
        Files.writeString(queries, "");
        try (PythonPublisher pub = new PythonPublisher(dir, SPEC)) {
            String engine = pub.ports("E1").pubEndpoint() + "=1,replay="
                    + pub.ports("E1").replayEndpoint();
            String first = runUntilSignalled(engine, snap, "40 batches");
            assertTrue(first.contains("\"last_seq\":39"), first);
            assertTrue(Files.exists(snap));

            CompletableFuture<CliRunner.Result> second = CompletableFuture.supplyAsync(() -> CliRunner.run(
                    "listen",
                    "--engine",
                    engine,
                    "--snapshot",
                    snap.toString(),
                    "--duration",
                    "5",
                    "--stats-interval",
                    "0.5",
                    "--queries",
                    queries.toString()));
            pub.awaitDone(30);
            Truth truth = Truth.read(pub.truth());
            ByteArrayOutputStream q = new ByteArrayOutputStream();
            OpStreamWriter w = new OpStreamWriter(q);
            for (Truth.Query t : truth.queries()) {
                w.op(new Op.TokenMatch(t.tokens(), t.blockSize(), t.lora(), null, t.mm()));
            }
            w.flush();
            Files.write(queries, q.toByteArray());
            CliRunner.Result r = second.get(60, TimeUnit.SECONDS);
            assertEquals(0, r.exit(), r.err());
            assertTrue(r.err().contains("kvprefix listen: restored " + snap + ": 1 workers"), r.err());
            assertTrue(r.err().contains("kvprefix listen: saved " + snap), r.err());
            // the first run asked from 0 at its start (docs/LISTENER.md section 3, rule 2); the second never does
            List<String> replays =
                    pub.stderr().lines().filter(l -> l.startsWith("REPLAY")).toList();
            assertTrue(!replays.isEmpty() && replays.get(0).startsWith("REPLAY E1 0 "), pub.stderr());
            assertEquals(
                    List.of("REPLAY E1 39 39"), // batch 39 first: its bytes must match the hash the snapshot holds
                    replays.stream().filter(l -> !l.startsWith("REPLAY E1 0 ")).toList(),
                    "the second run asks from batch 39, the saved one, only: " + pub.stderr());
            List<String> lines = r.out().lines().toList();
            String stats = lines.get(lines.size() - 1);
            assertTrue(stats.contains("\"last_seq\":119"), stats);
            assertTrue(stats.contains("\"resyncs\":0"), stats);
            try (PrefixIndex oracle = PrefixIndex.heap(IndexConfig.defaults())) {
                truth.feed(oracle, "E1", rank -> Worker.of(1, rank.orElse(0)), -1, -1);
                List<String> want = new ArrayList<>();
                MatchResult m = new MatchResult();
                for (Truth.Query t : truth.queries()) {
                    BlockHasher h = BlockHasher.builder()
                            .blockSize(t.blockSize())
                            .loraName(t.lora())
                            .build();
                    oracle.match(t.tokens(), 0, t.tokens().length, h, t.mm(), m);
                    want.add(OpStreamWriter.scoresLine(m));
                }
                assertEquals(want, lines.subList(0, lines.size() - 1));
                assertTrue(
                        want.stream().filter(s -> !s.equals("{\"scores\":[]}")).count() > 10, "too easy");
            }
            try (PrefixIndex saved = PrefixIndex.restore(snap, IndexConfig.defaults())) {
                String position = saved.snapshotMetadata()
                        .get("kvprefix.zmq.engine:" + pub.ports("E1").pubEndpoint());
                assertTrue(position.matches("1 119 0 [0-9a-f]+"), position); // with the last batch's hash
            }
        }
    }

    /** Runs listen in its own process until its stderr shows {@code mark} and a save after it, then SIGTERM; its stdout. */
    private String runUntilSignalled(String engine, Path snap, String mark) throws Exception {
        String javaHome = Path.of(ProcessHandle.current().info().command().orElseThrow())
                .getParent()
                .getParent()
                .toString();
        ProcessBuilder pb = new ProcessBuilder(
                RepoPaths.root().resolve("kvprefix").toString(),
                "listen",
                "--engine",
                engine,
                "--snapshot",
                snap.toString(),
                "--snapshot-interval",
                "0.3",
                "--stats-interval",
                "0.1");
        pb.environment().put("JAVA_HOME", javaHome);
        pb.environment().put("KVPREFIX_CLASSPATH", System.getProperty("java.class.path"));
        Process p = pb.start();
        try (BufferedReader err =
                new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8))) {
            List<String> seen = new ArrayList<>();
            boolean marked = false;
            for (String l; (l = err.readLine()) != null; ) {
                seen.add(l);
                marked |= l.contains(mark);
                if (marked && l.startsWith("kvprefix listen: saved ")) {
                    break;
                }
            }
            assertTrue(marked, "stderr: " + seen);
            p.toHandle().destroy(); // SIGTERM: a clean end, which saves once more
            List<String> after = err.lines().toList();
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), "listen did not stop on SIGTERM");
            assertEquals(143, p.exitValue(), "the JVM ends with 128 + SIGTERM: " + after);
            assertTrue(
                    after.stream().anyMatch(l -> l.startsWith("kvprefix listen: saved " + snap)),
                    "saved at the end: " + after);
            return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        } finally {
            p.destroyForcibly();
        }
    }

    @Test
    void aSnapshotThatCannotBeRestoredIsReportedAndTheRunStartsEmpty() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // nobody publishes there
        }
        Path snap = dir.resolve("bad.snap");
        Files.writeString(snap, "not a snapshot\n");
        var r = CliRunner.run(
                "listen",
                "--engine",
                "tcp://127.0.0.1:" + port + "=3",
                "--snapshot",
                snap.toString(),
                "--duration",
                "0.5",
                "-q");
        assertEquals(0, r.exit(), r.err());
        List<Path> aside;
        try (var files = Files.list(dir)) {
            aside = files.filter(f -> f.getFileName().toString().startsWith("bad.snap.refused-"))
                    .toList();
        }
        assertEquals(1, aside.size(), "the refused file is kept aside: " + aside);
        assertEquals(
                List.of("kvprefix listen: snapshot " + snap
                        + ": not a kvprefix snapshot (bad magic); kept it as " + aside.get(0)
                        + "; starting with an empty index"),
                r.err().lines().toList());
        // before the fix the only copy was overwritten by the next save: it is intact, aside
        assertEquals("not a snapshot\n", Files.readString(aside.get(0)));
        try (PrefixIndex saved = PrefixIndex.restore(snap, IndexConfig.defaults())) { // a new one in its place
            assertEquals(List.of(), saved.workers());
        }
    }

    /** A folder, or a place that cannot be written, is said at start (exit 2), not after the run. */
    @Test
    void anUnwritableSnapshotPathIsRefusedAtStart() {
        var r = CliRunner.run(
                "listen", "--engine", "tcp://127.0.0.1:5557=1", "--snapshot", dir.toString(), "--duration", "30");
        assertEquals(2, r.exit(), r.err());
        assertTrue(r.err().contains("--snapshot '" + dir + "': is a directory"), r.err());
        Path nowhere = dir.resolve("no-such-folder").resolve("x.snap");
        r = CliRunner.run(
                "listen", "--engine", "tcp://127.0.0.1:5557=1", "--snapshot", nowhere.toString(), "--duration", "30");
        assertEquals(2, r.exit(), r.err());
        assertTrue(r.err().contains("no such directory"), r.err());
    }

    @Test
    void theIntervalNeedsTheFile() {
        var r = CliRunner.run("listen", "--engine", "tcp://127.0.0.1:5557=1", "--snapshot-interval", "5");
        assertEquals(2, r.exit(), r.err());
        assertTrue(r.err().contains("--snapshot-interval needs --snapshot"), r.err());
        r = CliRunner.run(
                "listen",
                "--engine",
                "tcp://127.0.0.1:5557=1",
                "--snapshot",
                dir.resolve("x").toString(),
                "--snapshot-interval",
                "0");
        assertEquals(2, r.exit(), r.err());
        assertTrue(r.err().contains("--snapshot-interval must be a positive number"), r.err());
    }
}
