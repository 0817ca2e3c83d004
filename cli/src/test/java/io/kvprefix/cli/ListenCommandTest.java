package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.kvprefix.BlockHasher;
import io.kvprefix.IndexConfig;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.opstream.Op;
import io.kvprefix.opstream.OpStreamWriter;
import io.kvprefix.testing.RepoPaths;
import io.kvprefix.zmq.EngineEventDecoder;
import io.kvprefix.zmq.testing.PythonPublisher;
import io.kvprefix.zmq.testing.Truth;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code kvprefix listen}: usage errors, a run against a real publisher in another process, and a stop by signal. */
class ListenCommandTest {

    @TempDir
    Path dir;

    @Test
    void badInputIsAClearUsageError() {
        record Case(int exit, String message, String... args) {}
        String ok = "tcp://127.0.0.1:5557=1";
        for (Case c : List.of(
                new Case(2, "at least one --engine or --trtllm-events", "listen"),
                new Case(2, "is not FILE|-=WORKER", "listen", "--trtllm-events", "x"),
                new Case(2, "unknown option 'bs=2'", "listen", "--trtllm-events", "x=1,bs=2"),
                new Case(2, "also an --engine's worker", "listen", "--engine", ok, "--trtllm-events", "-=1"),
                new Case(2, "expected ENDPOINT=WORKER", "listen", "--engine", "nonsense"),
                new Case(
                        2,
                        "worker id 'abc' is not an unsigned 64-bit integer",
                        "listen",
                        "--engine",
                        "tcp://127.0.0.1:5557=abc"),
                new Case(2, "dp rank '-1'", "listen", "--engine", "tcp://127.0.0.1:5557=1/-1"),
                new Case(2, "is not a ZMQ endpoint", "listen", "--engine", "http://127.0.0.1:5557=1"),
                new Case(2, "port 70000 is outside 1..65535", "listen", "--engine", "tcp://127.0.0.1:70000=1"),
                new Case(2, "replay= needs an endpoint", "listen", "--engine", ok + ",replay="),
                new Case(2, "unknown option 'replai'", "listen", "--engine", ok + ",replai=tcp://127.0.0.1:5558"),
                new Case(
                        2,
                        "unknown format 'dynamo' (known formats: vllm, sglang, trtllm, vllm-copies)",
                        "listen",
                        "--engine",
                        ok + ",format=dynamo"),
                new Case(2, "is given twice", "listen", "--engine", ok, "--engine", "tcp://127.0.0.1:5557=2"),
                new Case(2, "--duration must be a positive number", "listen", "--engine", ok, "--duration", "0"),
                new Case(
                        2,
                        "--stats-interval must be a positive number",
                        "listen",
                        "--engine",
                        ok,
                        "--stats-interval",
                        "-1"),
                new Case(2, "--impl: unknown implementation", "listen", "--engine", ok, "--impl", "fast"),
                new Case(2, "--memory-budget", "listen", "--engine", ok, "--memory-budget", "lots"),
                new Case(2, "64 KiB", "listen", "--engine", ok, "--memory-budget", "1k"),
                new Case(
                        2,
                        "--queries '" + dir.resolve("none.jsonl") + "': no such file",
                        "listen",
                        "--engine",
                        ok,
                        "--queries",
                        dir.resolve("none.jsonl").toString()),
                new Case(2, "is a directory", "listen", "--engine", ok, "--queries", dir.toString()))) {
            var r = CliRunner.run(c.args());
            String what = String.join(" ", c.args()) + ": " + r.err();
            assertEquals(c.exit(), r.exit(), what);
            assertEquals("", r.out(), what);
            assertTrue(r.err().contains(c.message()), what);
            assertFalse(r.err().contains("\tat "), "no stack trace: " + what);
        }
    }

    @Test
    void theHelpGivesTheEngineSyntaxWithEveryFormat() {
        var r = CliRunner.run("listen", "--help");
        assertEquals(0, r.exit(), r.err());
        String help = r.out().replaceAll("\\s+", " ");
        assertTrue(help.contains("--engine=ENDPOINT=WORKER[/RANK][,replay=ENDPOINT][,topic=T][,format=F]"), help);
        for (String part : List.of("/RANK fixes the dp rank", "replay=ENDPOINT", "topic=T", "format=F")) {
            assertTrue(help.contains(part), part + ": " + help);
        }
        for (String format : EngineEventDecoder.FORMATS) {
            assertTrue(help.contains(format), "format " + format + " in the help: " + help);
        }
    }

    /**
     * TensorRT-LLM events fed as JSON lines (the {@code KVCacheEventSerializer} layout of
     * {@code tensorrt_llm/_utils.py} @ {@code ed53795b33fc139493f762a1c6c53f691cf52d38}), from a file and
     * from standard input: applied, counted, and the queries answered from them.
     */
    @Test
    void feedsTensorRtLlmEventsFromAFileOrStandardInput() throws Exception {
        String tok = "{\"type\":\"unique_token\",\"token_id\":%d,\"token_extra_id\":0}";
        String lines = "[{\"event_id\":0,\"data\":{\"type\":\"created\",\"num_blocks_per_cache_level\":[64,0]},"
                + "\"window_size\":4096}]\n"
                + "[{\"event_id\":1,\"data\":{\"type\":\"stored\",\"parent_hash\":null,\"blocks\":["
                + "{\"type\":\"stored_block\",\"block_hash\":-7,\"tokens\":[" + tok.formatted(1) + ","
                + tok.formatted(2)
                + "],\"cache_level\":0,\"priority\":35},"
                + "{\"type\":\"stored_block\",\"block_hash\":8,\"tokens\":[" + tok.formatted(3) + "," + tok.formatted(4)
                + "],\"cache_level\":0,\"priority\":35}]},\"window_size\":4096,\"attention_dp_rank\":1}]\n"
                + "\n"
                + "{\"event_id\":2,\"data\":{\"type\":\"removed\",\"block_hashes\":[8]},\"window_size\":4096,"
                + "\"attention_dp_rank\":1}\n"
                + "not json\n";
        Path events = dir.resolve("trtllm.jsonl");
        Files.writeString(events, lines);
        Path q = dir.resolve("q.jsonl");
        Files.writeString(q, "{\"op\":\"match\",\"token_ids\":[1,2,3,4],\"block_size\":2}\n");
        for (boolean stdin : new boolean[] {false, true}) {
            String src = stdin ? "-" : events.toString();
            var r = stdin
                    ? CliRunner.runWithInput(
                            lines.getBytes(java.nio.charset.StandardCharsets.UTF_8),
                            "listen",
                            "--trtllm-events",
                            src + "=3,block_size=2",
                            "--queries",
                            q.toString(),
                            "-q")
                    : CliRunner.run(
                            "listen", "--trtllm-events", src + "=3,block_size=2", "--queries", q.toString(), "-q");
            assertEquals(0, r.exit(), r.err());
            List<String> out = r.out().lines().toList();
            assertEquals("{\"scores\":[[3,1,1]]}", out.get(0), "rank 1 holds block 0; block 1 was removed");
            assertTrue(out.get(1).contains("\"lines\":4,\"events\":{\"removed.ok\":1,\"stored.ok\":1}"), out.get(1));
            assertTrue(out.get(1).contains("\"bad_json\":1"), out.get(1));
            assertTrue(out.get(2).startsWith("{\"total\":"), out.get(2));
        }
    }

    /**
     * Two engines in another process: E1 (array encoding, replay, batches 10..14 dropped: replayed)
     * and E2 (map encoding, no replay, 20..24 dropped: resync). The match lines of --queries must
     * answer what an oracle index fed from the published stream answers, and the last line must be
     * the JSON stats.
     */
    @Test
    void listensToARealPublisherAndAnswersTheQueries() throws Exception {
        String spec = """
                {"seed": 11, "engines": [
                 {"name": "E1", "encoding": "array", "replay": "plain", "batches": 40, "drop": [[10, 14]]},
                 {"name": "E2", "encoding": "map", "replay": "none", "ranks": [0], "batches": 40, "drop": [[20, 24]]}]}""";
        Path queries = dir.resolve("queries.jsonl");
        Files.writeString(queries, "");
        try (PythonPublisher pub = new PythonPublisher(dir, spec)) {
            String e1 = pub.ports("E1").pubEndpoint() + "=1,replay="
                    + pub.ports("E1").replayEndpoint();
            String e2 = pub.ports("E2").pubEndpoint() + "=2/0,format=vllm";
            CompletableFuture<CliRunner.Result> run = CompletableFuture.supplyAsync(() -> CliRunner.run(
                    "listen",
                    "--engine",
                    e1,
                    "--engine",
                    e2,
                    "--duration",
                    "4",
                    "--stats-interval",
                    "0.5",
                    "--replay-timeout",
                    "5",
                    "--queries",
                    queries.toString()));
            pub.awaitDone(20);
            Truth truth = Truth.read(pub.truth());

            // the queries: every Q line of the truth in token form, one hash-form match, an event line, an invalid line
            ByteArrayOutputStream q = new ByteArrayOutputStream();
            OpStreamWriter w = new OpStreamWriter(q);
            List<Truth.Query> tokenQueries = truth.queries();
            for (Truth.Query t : tokenQueries) {
                w.op(new Op.TokenMatch(t.tokens(), t.blockSize(), t.lora(), null, t.mm()));
            }
            Truth.Query first = tokenQueries.get(0);
            long[] local = BlockHasher.builder()
                    .blockSize(first.blockSize())
                    .loraName(first.lora())
                    .build()
                    .localHashes(first.tokens());
            w.matchHashes(local, 0, local.length);
            w.raw("{\"op\":\"cleared\",\"worker\":1}");
            w.raw("{\"op\":\"match\",\"local_hashes\":[1,]}");
            w.flush();
            Files.write(queries, q.toByteArray());

            CliRunner.Result r = run.get(30, TimeUnit.SECONDS);
            assertEquals(0, r.exit(), r.err());
            List<String> lines = r.out().lines().toList();
            assertEquals(tokenQueries.size() + 3, lines.size(), r.out());

            try (PrefixIndex oracle = PrefixIndex.heap(IndexConfig.defaults())) {
                truth.feed(oracle, "E1", rank -> Worker.of(1, rank.orElse(0)), -1, -1);
                truth.feed(oracle, "E2", rank -> Worker.of(2, rank.orElse(0)), 20, 25);
                ByteArrayOutputStream expected = new ByteArrayOutputStream();
                OpStreamWriter ew = new OpStreamWriter(expected);
                MatchResult m = new MatchResult();
                for (Truth.Query t : tokenQueries) {
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
                oracle.match(local, 0, local.length, m);
                ew.scores(m);
                ew.raw("{\"status\":\"invalid_input\"}");
                ew.flush();
                List<String> want =
                        expected.toString(StandardCharsets.UTF_8).lines().toList();
                assertEquals(want, lines.subList(0, lines.size() - 1), r.err());
                assertTrue(
                        want.stream().filter(s -> !s.equals("{\"scores\":[]}")).count() > 10,
                        "queries too easy: " + want);
            }
            assertTrue(r.err().contains("skipped 1 event line"), r.err());
            assertTrue(r.err().contains("--queries line " + (tokenQueries.size() + 3) + ": invalid_input"), r.err());
            assertTrue(r.err().contains("kvprefix listen: 2 engines"), "periodic stats lines: " + r.err());

            Map<String, Long> total = totals(lines.get(lines.size() - 1));
            assertEquals(2, total.get("gaps"), lines.get(lines.size() - 1));
            assertEquals(1, total.get("resyncs"), lines.get(lines.size() - 1));
            assertTrue(total.get("replays") >= 1, lines.get(lines.size() - 1));
            assertEquals(0, total.get("bad_msgpack"), lines.get(lines.size() - 1));
        }
    }

    /** A stop by signal (Ctrl-C sends SIGINT, a service manager SIGTERM) still prints the stats line. */
    @Test
    void aSignalStopsItAndTheStatsAreStillPrinted() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // nothing listens there once closed: the subscriber keeps reconnecting
        }
        String javaHome = Path.of(ProcessHandle.current().info().command().orElseThrow())
                .getParent()
                .getParent()
                .toString();
        ProcessBuilder pb = new ProcessBuilder(
                RepoPaths.root().resolve("kvprefix").toString(),
                "listen",
                "--engine",
                "tcp://127.0.0.1:" + port + "=9/1",
                "--stats-interval",
                "0.2");
        pb.environment().put("JAVA_HOME", javaHome);
        pb.environment().put("KVPREFIX_CLASSPATH", System.getProperty("java.class.path"));
        Process p = pb.start();
        try (BufferedReader err =
                new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8))) {
            List<String> seen = new ArrayList<>();
            for (String l; (l = err.readLine()) != null; ) {
                seen.add(l);
                if (l.contains("kvprefix listen: 1 engines")) {
                    break; // subscribed and running
                }
            }
            assertTrue(seen.stream().anyMatch(l -> l.contains("kvprefix listen: 1 engines")), "stderr: " + seen);
            p.toHandle().destroy(); // SIGTERM (Process.destroy() would also close our end of its output)
            assertTrue(p.waitFor(20, TimeUnit.SECONDS), "listen did not stop on SIGTERM");
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            List<String> lines = out.lines().toList();
            assertEquals(1, lines.size(), out);
            assertTrue(lines.get(0).startsWith("{\"total\":{"), out);
            assertTrue(
                    lines.get(0)
                            .contains(
                                    "\"worker\":9,\"dp_rank\":1,\"replay\":null,\"format\":\"vllm\",\"state\":\"waiting\""),
                    out);
            totals(lines.get(0)); // valid JSON
        } finally {
            p.destroyForcibly();
        }
    }

    /**
     * {@code --memory-budget} bounds the index listen feeds: an engine in another process whose cache
     * only grows (no clears) replays 3,000 batches through its ROUTER at once; every batch is applied,
     * stores past the budget answer capacity_exceeded (counted), and the index stays within it.
     */
    @Test
    void aMemoryBudgetBoundsTheIndexAndItsRefusalsAreCounted() throws Exception {
        String spec = """
                {"seed": 17, "engines": [
                 {"name": "E1", "encoding": "array", "replay": "plain", "ranks": [0], "batches": 3000,
                  "early": 3000, "clears": false}]}""";
        try (PythonPublisher pub = new PythonPublisher(dir, spec)) {
            String e1 = pub.ports("E1").pubEndpoint() + "=1,replay="
                    + pub.ports("E1").replayEndpoint();
            CliRunner.Result r = CliRunner.run(
                    "listen", "--engine", e1, "--duration", "8", "--stats-interval", "60", "--memory-budget", "256k");
            assertEquals(0, r.exit(), r.err());
            List<String> lines = r.out().lines().toList();
            String json = lines.get(lines.size() - 1);
            Map<String, Long> total = totals(json);
            assertEquals(3000, total.get("replayed_batches"), json);
            assertEquals(0, total.get("resyncs"), json);
            java.util.regex.Matcher refused = java.util.regex.Pattern.compile(
                            "\"stored\":\\{[^}]*\"capacity_exceeded\":(\\d+)")
                    .matcher(json);
            assertTrue(refused.find(), json);
            assertTrue(Long.parseLong(refused.group(1)) > 100, "stores past 256 KiB are refused: " + json);
            java.util.regex.Matcher held = java.util.regex.Pattern.compile(
                            "the index holds (\\d+) blocks of 1 workers in ([0-9.]+) MiB \\(budget: 0.3 MiB\\)")
                    .matcher(r.err());
            assertTrue(held.find(), r.err());
            assertTrue(Long.parseLong(held.group(1)) > 500, r.err());
            assertTrue(Double.parseDouble(held.group(2)) <= 0.25, "within the budget: " + r.err());
        }
    }

    /** Parses the stats JSON strictly and returns the numbers directly under "total" (and its decode_errors). */
    private static Map<String, Long> totals(String json) throws IOException {
        Map<String, Long> out = new HashMap<>();
        try (JsonParser p = new JsonFactory().createParser(json)) {
            assertEquals(JsonToken.START_OBJECT, p.nextToken());
            List<String> path = new ArrayList<>();
            String field = null;
            for (JsonToken t; (t = p.nextToken()) != null; ) {
                switch (t) {
                    case FIELD_NAME -> field = p.currentName();
                    case START_OBJECT, START_ARRAY -> path.add(field);
                    case END_OBJECT, END_ARRAY -> {
                        if (!path.isEmpty()) {
                            path.remove(path.size() - 1);
                        }
                    }
                    case VALUE_NUMBER_INT -> {
                        if (!path.isEmpty()
                                && path.get(0) != null
                                && path.get(0).equals("total")
                                && (path.size() == 1
                                        || path.get(path.size() - 1).equals("decode_errors"))) {
                            out.put(field, p.getLongValue());
                        }
                    }
                    default -> {}
                }
            }
        }
        return out;
    }
}
