package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.PrefixIndex;
import io.kvprefix.bench.OpStream;
import io.kvprefix.bench.ReplayBench;
import io.kvprefix.opstream.Implementations;
import io.kvprefix.workload.SyntheticTrace;
import io.kvprefix.workload.Workload;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code bench} and {@code sweep} on tiny streams: every implementation ends in the same state; the output has its keys. */
class BenchCommandTest {

    @Test
    void everyImplementationEndsInTheSameStateWithEveryThreadSplit() throws Exception {
        Workload w = Workload.load(SyntheticTrace.generate(300, 5), new Workload.Options(6, 400, 5));
        OpStream s = OpStream.of(w, "tiny");
        IndexConfig config = IndexConfig.builder().expectedBlocks(2400).build();
        ReplayBench.Pass first = null;
        for (int writers : new int[] {1, 2, 3}) {
            for (boolean traceOrder : new boolean[] {false, true}) {
                ReplayBench bench = new ReplayBench(s, writers, 2, traceOrder, config);
                for (String impl : Implementations.names()) {
                    ReplayBench.Pass p = bench.run(impl);
                    if (first == null) {
                        first = p;
                        assertTrue(p.finalPairs() > 0);
                        assertTrue(p.statuses().get(EventStatus.OK) > 0);
                    }
                    assertEquals(first.statuses(), p.statuses(), impl + " with " + writers + " writers");
                    assertEquals(first.finalPairs(), p.finalPairs(), impl);
                    assertEquals(first.finalWorkers(), p.finalWorkers(), impl);
                    assertEquals(s.matchCount(), p.latencies().length, impl);
                    assertTrue(p.writersNanos() > 0 && p.readersNanos() > 0, impl);
                    assertEquals(p.wallNanos(), Math.max(p.writersNanos(), p.readersNanos()), impl);
                }
            }
        }
        // In trace order a match waits for the events before it (the writer may run further ahead). With
        // caches large enough that nothing is evicted, depths only grow, so every implementation must
        // match at least as many blocks as a sequential replay in stream order.
        Workload roomy = Workload.load(SyntheticTrace.generate(300, 6), new Workload.Options(6, 1_000_000, 6));
        assertEquals(0, roomy.totals().removedBlocks());
        OpStream rs = OpStream.of(roomy, "roomy");
        long sequential = 0;
        try (PrefixIndex seq = PrefixIndex.heap(config)) {
            for (var step : roomy.steps()) {
                sequential += seq.match(step.matchHashes()).maxDepth();
                step.events().forEach(seq::apply);
            }
        }
        assertTrue(sequential > 0);
        ReplayBench ordered = new ReplayBench(rs, 1, 2, true, config);
        for (String impl : Implementations.names()) {
            long matched = ordered.run(impl).matchedBlocks();
            assertTrue(
                    matched >= sequential,
                    impl + ": " + matched + " matched blocks in trace order, sequential " + sequential);
        }
    }

    /**
     * The benchmark splits events among its writers exactly as an {@link io.kvprefix.EventSink} routes
     * them, and every pass reports each lane's blocks, which add up to the stream's.
     */
    @Test
    void theSplitIsTheSinksAndItsLanesAddUp() throws Exception {
        Workload w = Workload.load(SyntheticTrace.generate(300, 5), new Workload.Options(7, 400, 5));
        OpStream s = OpStream.of(w, "tiny");
        IndexConfig config = IndexConfig.builder().expectedBlocks(2800).build();
        io.kvprefix.KvEvent[] events =
                w.steps().stream().flatMap(st -> st.events().stream()).toArray(io.kvprefix.KvEvent[]::new);
        for (int writers : new int[] {2, 3}) {
            int[] split = ReplayBench.lanesOf(events, writers);
            try (PrefixIndex ix = PrefixIndex.heap(config);
                    io.kvprefix.EventSink sink = io.kvprefix.EventSink.create(ix, writers, null)) {
                for (int i = 0; i < events.length; i++) {
                    assertEquals(split[i], sink.laneOf(events[i].workerId()), "event " + i);
                }
            }
            ReplayBench bench = new ReplayBench(s, writers, 0, false, config);
            ReplayBench apart = new ReplayBench(s, writers, 0, false, config).withPrivateIndexes();
            ReplayBench.Pass shared = bench.run("offheap-java");
            ReplayBench.Pass separate = apart.run("offheap-java"); // one index per lane: the same statuses and pairs
            assertEquals(shared.statuses(), separate.statuses());
            assertEquals(shared.finalPairs(), separate.finalPairs());
            assertEquals(shared.finalWorkers(), separate.finalWorkers());
            for (ReplayBench.Pass p : List.of(shared, separate, bench.runSink("offheap-java"))) {
                assertEquals(writers, p.lanes().blocks().length);
                assertEquals(
                        s.storedBlocks() + s.removedBlocks(),
                        java.util.Arrays.stream(p.lanes().blocks()).sum());
                assertTrue(java.util.Arrays.stream(p.lanes().doneNanos()).allMatch(t -> t > 0));
                assertTrue(p.wallNanos()
                        >= java.util.Arrays.stream(p.lanes().doneNanos()).max().orElseThrow());
            }
        }
    }

    /**
     * Only {@code \n} ends an op-stream line (docs/SPEC.md section 5): a {@code \r} inside a line is
     * JSON whitespace. A reader that split at a lone {@code \r} (BufferedReader.readLine) would see six
     * invalid halves here and no op at all.
     */
    @Test
    void loadOpsSplitsLinesAtNewlineOnly(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path f = dir.resolve("cr.jsonl");
        java.nio.file.Files.writeString(
                f,
                "{\"op\":\"stored\",\r\"worker\":1,\"blocks\":[{\"block_hash\":5,\"tokens_hash\":6}]}\n"
                        + "{\"op\":\"match\",\r\"local_hashes\":[6]}\r\n"
                        + "{\"op\":\"removed\",\r\"worker\":1,\"block_hashes\":[5]}");
        int[] invalid = new int[1];
        OpStream s = ReplayBench.loadOps(f, IndexConfig.defaults(), invalid);
        assertEquals(0, invalid[0], "invalid lines");
        assertEquals(2, s.eventCount());
        assertEquals(1, s.matchCount());
        assertEquals(1, s.storedBlocks());
        assertEquals(1, s.removedBlocks());
    }

    @Test
    void benchPrintsOneJsonObjectPerImplementationLast() {
        var r = CliRunner.run(
                "bench",
                "--requests",
                "200",
                "--workers",
                "4",
                "--cache-blocks",
                "300",
                "--repeat",
                "2",
                "--warmup",
                "1",
                "--impl",
                "heap,offheap-java",
                "--latency-at",
                "0.5");
        assertEquals(0, r.exit(), r.err());
        List<String> lines = r.out().lines().toList();
        String heap = lines.get(lines.size() - 2);
        String off = lines.get(lines.size() - 1);
        for (String key : List.of(
                "impl",
                "block_ops_per_s",
                "ops_per_s",
                "events_per_s",
                "matches_per_s",
                "wall_s",
                "p50_ns",
                "p99_ns",
                "p999_ns",
                "passes",
                "median_block_ops_per_s",
                "p99_ns_at_50_pct",
                "writers_done_s",
                "readers_done_s",
                "block_ops_per_s_dynamo2",
                "median_block_ops_per_s_dynamo2",
                "removed_blocks",
                "bytes_per_pair")) {
            assertTrue(heap.contains("\"" + key + "\":"), key + " in " + heap);
            assertTrue(off.contains("\"" + key + "\":"), key + " in " + off);
        }
        assertTrue(heap.startsWith("{\"impl\":\"heap\""), heap);
        assertTrue(off.startsWith("{\"impl\":\"offheap-java\""), off);
        // Dynamo's corrected accounting counts the removed blocks on top of the blog's
        long blockOps = number(off, "block_ops");
        long removed = number(off, "removed_blocks");
        assertTrue(removed > 0, "the stream evicts: " + off);
        assertEquals(blockOps + removed, number(off, "block_ops_dynamo2"), off);
        assertTrue(number(off, "bytes_per_pair") > 0, off);
    }

    @Test
    void writeOnlyPassesThroughAnEventSinkApplyEveryEvent() throws Exception {
        Workload w = Workload.load(SyntheticTrace.generate(300, 5), new Workload.Options(6, 400, 5));
        OpStream s = OpStream.of(w, "tiny");
        IndexConfig config = IndexConfig.defaults();
        ReplayBench direct = new ReplayBench(s, 1, 1, false, config);
        ReplayBench.Pass ref = direct.run("heap");
        for (int lanes : new int[] {1, 2}) {
            ReplayBench sink = new ReplayBench(s, lanes, 0, false, config);
            assertTrue(sink.writeOnly());
            for (String impl : Implementations.names()) {
                ReplayBench.Pass p = sink.runSink(impl);
                assertEquals(ref.statuses(), p.statuses(), impl + ", " + lanes + " lanes");
                assertEquals(ref.finalPairs(), p.finalPairs(), impl + ", " + lanes + " lanes");
                ReplayBench.Pass q = sink.run(impl);
                assertEquals(ref.finalPairs(), q.finalPairs(), impl + " without readers");
                assertEquals(0, q.latencies().length, impl + ": no reader, no match");
            }
        }
        var r = CliRunner.run(
                "bench",
                "--requests",
                "200",
                "--workers",
                "4",
                "--cache-blocks",
                "300",
                "--repeat",
                "1",
                "--warmup",
                "0",
                "--impl",
                "offheap-java",
                "--readers",
                "0",
                "--writers",
                "2",
                "--sink");
        assertEquals(0, r.exit(), r.err());
        String json = r.out().lines().reduce((a, b) -> b).orElseThrow();
        assertTrue(json.contains("\"write_only\":true") && json.contains("\"sink\":true"), json);
        assertEquals(0, number(json, "matches"), json);
        var bad = CliRunner.run("bench", "--requests", "20", "--sink");
        assertEquals(2, bad.exit(), bad.err());
        assertTrue(bad.err().contains("--readers 0"), bad.err());
    }

    private static long number(String json, String key) {
        var m = java.util.regex.Pattern.compile("\"" + key + "\":([0-9.]+)").matcher(json);
        assertTrue(m.find(), key + " in " + json);
        return (long) Double.parseDouble(m.group(1));
    }

    @Test
    void badOptionsAreClearErrors() {
        for (String[] args : List.of(
                new String[] {"bench", "--impl", "nope"},
                new String[] {"bench", "--order", "random"},
                new String[] {"bench", "--repeat", "0"},
                new String[] {"sweep", "--from", "0"})) {
            var r = CliRunner.run(args);
            assertEquals(2, r.exit(), String.join(" ", args) + ": " + r.err());
            assertTrue(!r.err().contains("\tat "), r.err());
        }
    }

    @Test
    void sweepWritesJsonAndSvg() throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("kvprefix-sweep-test");
        var r = CliRunner.run(
                "sweep",
                "--requests",
                "150",
                "--workers",
                "4",
                "--cache-blocks",
                "300",
                "--impl",
                "offheap-java",
                "--from",
                "200000",
                "--to",
                "2000000",
                "--steps-per-decade",
                "1",
                "--out",
                dir.toString());
        assertEquals(0, r.exit(), r.err());
        String json = java.nio.file.Files.readString(dir.resolve("sweep.json"));
        assertTrue(json.contains("\"offheap-java\":[{\"offered\":200000"), json);
        String svg = java.nio.file.Files.readString(dir.resolve("sweep.svg"));
        assertTrue(svg.startsWith("<svg") && svg.contains("achieved = offered") && svg.contains("polyline"), svg);
    }
}
