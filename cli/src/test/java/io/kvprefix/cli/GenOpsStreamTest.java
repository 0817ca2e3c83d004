package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.BlockHasher;
import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.opstream.Op;
import io.kvprefix.opstream.OpStreamParser;
import io.kvprefix.testing.RepoPaths;
import io.kvprefix.testing.SharedData;
import io.kvprefix.workload.AdmitResult;
import io.kvprefix.workload.LocalHashTable;
import io.kvprefix.workload.MockEngine;
import io.kvprefix.workload.MooncakeTraceReader;
import io.kvprefix.workload.Rng;
import io.kvprefix.workload.SyntheticTrace;
import io.kvprefix.workload.Trace;
import io.kvprefix.workload.TraceRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * End to end: the text gen-ops writes, read back by the op-stream parser and applied to the heap
 * {@link PrefixIndex}, gives at every request the depths the mock engines hold, for every worker; and
 * the token form gives the same answers as the hash form.
 */
class GenOpsStreamTest {
    private static final Path SMALL = RepoPaths.root().resolve("workloads/src/test/resources/traces/small.jsonl");

    @TempDir
    Path tmp;

    private String genOps(String... args) throws Exception {
        Path out = tmp.resolve("ops-" + System.nanoTime() + ".jsonl");
        List<String> a = new ArrayList<>(List.of("gen-ops", "--out", out.toString()));
        a.addAll(List.of(args));
        var r = CliRunner.run(a.toArray(String[]::new));
        assertEquals(0, r.exit(), r.err());
        assertEquals("", r.out());
        return Files.readString(out, StandardCharsets.UTF_8);
    }

    /**
     * Replays {@code stream} into a heap index next to this test's own engines (same trace, spread and
     * capacity). Before each request: for every worker, index depth = that engine's cached prefix. The
     * events after the match equal the engine's, apply with status ok, and leave the request's worker at
     * its engine's depth, which covers every full block that fit.
     */
    private static void checkAgainstEngines(String stream, Trace trace, int workers, int cacheBlocks, long seed) {
        List<Op> ops = parse(stream);
        LocalHashTable hashes = LocalHashTable.forTrace(trace);
        MockEngine[] engines = new MockEngine[workers];
        for (int w = 0; w < workers; w++) {
            engines[w] = new MockEngine(Worker.of(w), cacheBlocks, hashes);
        }
        Rng spread = new Rng(seed);
        MatchResult res = new MatchResult();
        int at = 0;
        long evictions = 0;
        try (PrefixIndex index = PrefixIndex.heap(IndexConfig.defaults())) {
            for (TraceRequest r : trace.requests()) {
                String where = "request " + r.index();
                Op.HashMatch match =
                        assertInstanceOf(Op.HashMatch.class, ops.get(at++), where + ": the match comes first");
                long[] ids = r.hashIds();
                assertEquals(
                        java.util.Arrays.toString(hashes.localHashes(ids)),
                        java.util.Arrays.toString(match.localHashes()),
                        where);
                index.match(match.localHashes(), 0, match.localHashes().length, res);
                for (MockEngine m : engines) {
                    assertEquals(
                            m.cachedPrefix(ids, ids.length),
                            res.depthOf(m.worker()),
                            where + ", before, " + m.worker());
                }
                MockEngine engine = engines[spread.nextInt(workers)];
                AdmitResult a = engine.admit(r);
                List<KvEvent> events = new ArrayList<>();
                while (at < ops.size() && ops.get(at) instanceof Op.Event e) {
                    events.add(e.event());
                    at++;
                }
                assertEquals(a.events(), events, where + ": the stream's events are the engine's");
                for (KvEvent e : events) {
                    assertEquals(EventStatus.OK, index.apply(e), where + ": " + e);
                    if (e instanceof KvEvent.Removed rm) {
                        evictions += rm.blockHashes().length;
                    }
                }
                index.match(match.localHashes(), 0, match.localHashes().length, res);
                int depth = res.depthOf(engine.worker());
                assertEquals(engine.cachedPrefix(ids, ids.length), depth, where + ", after, " + engine.worker());
                assertTrue(depth >= a.heldBlocks(), where);
                engine.release(r);
            }
            assertEquals(ops.size(), at, "no ops after the last request");
            long held = 0;
            for (MockEngine m : engines) {
                assertEquals(
                        m.blockCount(),
                        index.blockCount(m.worker()),
                        m.worker() + " holds as many blocks in the index");
                held += m.blockCount();
            }
            assertTrue(held > 0);
        }
        System.out.println("GenOpsStreamTest: " + trace.size() + " requests checked, " + evictions + " evictions");
    }

    @Test
    void smallTraceOnTinyCaches() throws Exception {
        String s = genOps("--trace", SMALL.toString(), "--workers", "2", "--cache-blocks", "3", "--seed", "5");
        checkAgainstEngines(s, MooncakeTraceReader.read(SMALL), 2, 3, 5);
    }

    @Test
    void builtInWorkloadSplitWithEvictions() throws Exception {
        String s =
                genOps("--requests", "600", "--seed", "11", "--split", "4", "--workers", "3", "--cache-blocks", "700");
        Trace t = SyntheticTrace.generate(600, 11).split(4);
        checkAgainstEngines(s, t, 3, 700, 11);
        assertTrue(s.contains("\"op\":\"removed\""), "small caches evict");
    }

    @Test
    void conversationTraceWithEvictions() throws Exception {
        Path conv = SharedData.trace("conversation_trace.jsonl");
        String s = genOps(
                "--trace",
                conv.toString(),
                "--truncate",
                "1500",
                "--duplicate",
                "2",
                "--workers",
                "4",
                "--cache-blocks",
                "800");
        Trace t = MooncakeTraceReader.read(conv).duplicate(2).truncate(1500);
        checkAgainstEngines(s, t, 4, 800, 42);
        assertTrue(s.contains("\"op\":\"removed\""), "small caches evict");
    }

    /** The token form leaves an index in the same state as the hash form: same answers at every match. */
    @Test
    void tokenFormEqualsHashForm() throws Exception {
        String[] common = {
            "--trace", SMALL.toString(), "--split", "64", "--workers", "2", "--cache-blocks", "40", "--duplicate", "2"
        };
        List<Op> hashOps = parse(genOps(common));
        List<String> tokenArgs = new ArrayList<>(List.of(common));
        tokenArgs.add("--token-form");
        List<Op> tokenOps = parse(genOps(tokenArgs.toArray(String[]::new)));
        assertEquals(hashOps.size(), tokenOps.size());
        BlockHasher h8 = BlockHasher.of(8);
        int matches = 0;
        try (PrefixIndex a = PrefixIndex.heap(IndexConfig.defaults());
                PrefixIndex b = PrefixIndex.heap(IndexConfig.defaults())) {
            for (int i = 0; i < hashOps.size(); i++) {
                Op ho = hashOps.get(i), to = tokenOps.get(i);
                if (ho instanceof Op.HashMatch hm) {
                    Op.TokenMatch tm = assertInstanceOf(Op.TokenMatch.class, to, "line " + (i + 1));
                    assertEquals(8, tm.blockSize(), "line " + (i + 1));
                    assertEquals(hm.localHashes().length * 8, tm.tokenIds().length, "every block is queried in full");
                    MatchResult ra = a.match(hm.localHashes());
                    MatchResult rb = new MatchResult();
                    b.match(tm.tokenIds(), 0, tm.tokenIds().length, h8, rb);
                    assertEquals(ra.scores(), rb.scores(), "line " + (i + 1));
                    matches++;
                } else {
                    KvEvent he = assertInstanceOf(Op.Event.class, ho, "line " + (i + 1))
                            .event();
                    KvEvent te = assertInstanceOf(Op.Event.class, to, "line " + (i + 1))
                            .event();
                    if (he instanceof KvEvent.Stored hs) {
                        KvEvent.StoredTokens ts = (KvEvent.StoredTokens) te;
                        assertEquals(hs.worker(), ts.worker());
                        assertEquals(hs.parentHash(), ts.parentHash());
                        assertEquals(
                                java.util.Arrays.toString(hs.blockHashes()),
                                java.util.Arrays.toString(ts.blockHashes()));
                        assertEquals(8, ts.blockSize());
                        assertEquals(hs.size() * 8, ts.tokenIds().length);
                    } else {
                        assertEquals(he, te);
                    }
                    assertEquals(EventStatus.OK, a.apply(he), "line " + (i + 1));
                    assertEquals(EventStatus.OK, b.apply(te), "line " + (i + 1));
                }
            }
            Supplier<String> why = () -> "both indexes hold the same blocks";
            for (Worker w : a.workers()) {
                assertEquals(a.blockCount(w), b.blockCount(w), why);
            }
        }
        assertEquals(10, matches);
    }

    /** Every line of a stream gen-ops wrote (each ends in a newline), read by the format's parser. */
    private static List<Op> parse(String stream) {
        assertTrue(stream.isEmpty() || stream.endsWith("\n"), "the stream ends with a newline");
        OpStreamParser parser = new OpStreamParser();
        List<Op> out = new ArrayList<>();
        for (String line : stream.isEmpty() ? new String[0] : stream.split("\n")) {
            Op op = parser.parse(line);
            if (op instanceof Op.Invalid i) {
                throw new AssertionError("gen-ops wrote an invalid line (" + i.reason() + "): " + line);
            }
            out.add(op);
        }
        return out;
    }
}
