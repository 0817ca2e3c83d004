package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.testing.RepoPaths;
import io.kvprefix.testing.SharedData;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code kvprefix gen-ops}: determinism, the summary line, the stream's shape, and every error message. */
class GenOpsCommandTest {
    @TempDir
    Path tmp;

    private static String small() {
        return RepoPaths.root()
                .resolve("workloads/src/test/resources/traces/small.jsonl")
                .toString();
    }

    private byte[] run(String... args) throws Exception {
        Path out = tmp.resolve("out-" + System.nanoTime());
        List<String> a = new ArrayList<>(List.of("gen-ops", "--out", out.toString()));
        a.addAll(List.of(args));
        var r = CliRunner.run(a.toArray(String[]::new));
        assertEquals(0, r.exit(), r.err());
        return Files.readAllBytes(out);
    }

    /** The worker of every event line, in order. */
    private static List<String> eventWorkers(String stream) {
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile("\"worker\":(\\d+)").matcher(stream);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    private static List<String> matchLines(String stream) {
        return stream.lines().filter(l -> l.startsWith("{\"op\":\"match\"")).toList();
    }

    @Test
    void dynamoEngineHashesAreChainHashesAndChangeNoAnswer() throws Exception {
        String[] opts = {"--trace", small(), "--workers", "2", "--cache-blocks", "4"};
        byte[] mock = run(opts);
        List<String> a = new ArrayList<>(List.of(opts));
        a.addAll(List.of("--engine-hashes", "dynamo"));
        byte[] dynamo = run(a.toArray(String[]::new));
        assertNotEquals(new String(mock, StandardCharsets.UTF_8), new String(dynamo, StandardCharsets.UTF_8));
        // every stored block is named by its chain hash: C[0] = L[0] at a root, C[i] = chain(C[i-1], L[i])
        io.kvprefix.opstream.OpStreamParser parser = new io.kvprefix.opstream.OpStreamParser();
        io.kvprefix.BlockHasher h = io.kvprefix.BlockHasher.of(1);
        int stored = 0;
        int removed = 0;
        java.util.Set<Long> names = new java.util.HashSet<>();
        for (String line : new String(dynamo, StandardCharsets.UTF_8).split("\n")) {
            var op = parser.parse(line.getBytes(StandardCharsets.UTF_8));
            if (op instanceof io.kvprefix.opstream.Op.Event(io.kvprefix.KvEvent.Stored st)) {
                long[] want = new long[st.size()];
                h.chainHashes(
                        st.localHashes(),
                        0,
                        st.size(),
                        st.parentHash().isPresent(),
                        st.parentHash().orElse(0L),
                        want,
                        0);
                assertTrue(java.util.Arrays.equals(want, st.blockHashes()), line);
                for (long e : st.blockHashes()) {
                    names.add(e);
                }
                stored++;
            } else if (op instanceof io.kvprefix.opstream.Op.Event(io.kvprefix.KvEvent.Removed r)) {
                for (long e : r.blockHashes()) {
                    assertTrue(names.contains(e), "a removed name was stored before: " + line);
                }
                removed++;
            }
        }
        assertTrue(stored > 0 && removed > 0, "the stream has stores and evictions: " + stored + ", " + removed);
        // kvprefix takes engine hashes as opaque names: both streams get the same answers
        Path m = tmp.resolve("mock.jsonl");
        Path d = tmp.resolve("dynamo.jsonl");
        Files.write(m, mock);
        Files.write(d, dynamo);
        var rm = CliRunner.run("replay", m.toString());
        var rd = CliRunner.run("replay", d.toString());
        assertEquals(0, rm.exit(), rm.err());
        assertEquals(rm.out(), rd.out());
    }

    @Test
    void sameSeedSameBytesOtherSeedOtherSpread() throws Exception {
        String[] trace = {"--trace", small(), "--duplicate", "8", "--split", "2", "--cache-blocks", "20"};
        byte[] a = run(append(trace, "--seed", "1"));
        byte[] b = run(append(trace, "--seed", "1"));
        assertTrue(a.length > 1000);
        assertEquals(-1, java.util.Arrays.mismatch(a, b), "same seed, same bytes");
        byte[] c = run(append(trace, "--seed", "2"));
        String sa = new String(a, StandardCharsets.UTF_8), sc = new String(c, StandardCharsets.UTF_8);
        assertEquals(matchLines(sa), matchLines(sc), "the requests do not depend on the seed");
        assertNotEquals(eventWorkers(sa), eventWorkers(sc), "the spread does");

        byte[] g1 = run("--requests", "300", "--seed", "9");
        byte[] g2 = run("--requests", "300", "--seed", "9");
        assertEquals(-1, java.util.Arrays.mismatch(g1, g2), "the built-in workload is deterministic too");
        assertNotEquals(-1, java.util.Arrays.mismatch(g1, run("--requests", "300", "--seed", "10")));
    }

    @Test
    void writesToStandardOutputByDefaultWithASummaryOnStandardError() throws Exception {
        var r = CliRunner.run("gen-ops", "--trace", small(), "--workers", "1", "--cache-blocks", "3");
        assertEquals(0, r.exit(), r.err());
        byte[] file = run("--trace", small(), "--workers", "1", "--cache-blocks", "3");
        assertEquals(new String(file, StandardCharsets.UTF_8), r.out());
        // line 1: the match of request 0, every block (the third is partial); line 2: its stored event
        List<String> lines = r.out().lines().toList();
        assertEquals(
                "{\"op\":\"match\",\"local_hashes\":[16456450638077811066,10716031498429279048,17161484913955091167]}",
                lines.get(0));
        assertTrue(
                lines.get(1)
                        .matches("\\{\"op\":\"stored\",\"worker\":0,\"dp_rank\":0,\"parent_hash\":null,\"blocks\":\\["
                                + "\\{\"block_hash\":\\d+,\"tokens_hash\":16456450638077811066},"
                                + "\\{\"block_hash\":\\d+,\"tokens_hash\":10716031498429279048}]}"),
                lines.get(1));
        assertEquals(5 + 6, lines.size()); // 5 matches, 6 events (worked out in WorkloadTest)
        // one summary line, figures worked out by hand in WorkloadTest
        List<String> err = r.err().lines().toList();
        assertEquals(1, err.size(), r.err());
        String s = err.get(0);
        for (String part : List.of(
                "5 requests",
                "6 events (4 stored, 2 removed)",
                "5 stored blocks",
                "2 removed blocks",
                "16 match blocks",
                "ops 11",
                "block ops 21",
                "infinite-cache prefix-hit bound 43.75%",
                "1 workers x 3 blocks")) {
            assertTrue(s.contains(part), "'" + part + "' in " + s);
        }
        assertTrue(s.startsWith("gen-ops: " + small()), s);
    }

    @Test
    void conversationTraceWithDefaults() throws Exception {
        Path conv = SharedData.trace("conversation_trace.jsonl");
        Path out = tmp.resolve("conv.jsonl");
        var r = CliRunner.run("gen-ops", "--trace", conv.toString(), "--out", out.toString());
        assertEquals(0, r.exit(), r.err());
        String s = r.err().strip();
        // README figures: 12,031 requests, 288,500 block references, bound 0.3664
        for (String part :
                List.of("12031 requests", "288500 match blocks", "bound 36.64%", "16 workers x 16384 blocks")) {
            assertTrue(s.contains(part), "'" + part + "' in " + s);
        }
        try (var lines = Files.lines(out)) {
            assertEquals(
                    12_031, lines.filter(l -> l.startsWith("{\"op\":\"match\"")).count());
        }
    }

    @Test
    void malformedTracesAreReportedWithFileLineAndReason() throws Exception {
        String good = "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 1, \"hash_ids\": [0, 1]}\n";
        record Case(String line3, String message) {}
        List<Case> cases = List.of(
                new Case(
                        "{\"timestamp\": 5, \"input_length\": 600, \"output_length\": 1, \"hash_ids\": [1, \"x\"]}",
                        ":3: hash_ids must be an array of non-negative integers up to 4294967295 (element 1 is \"x\")"),
                new Case(
                        "{\"timestamp\": 5, \"input_length\": 600, \"output_length\": 1, \"hash_ids\": [1, -2]}",
                        ":3: hash_ids must be an array of non-negative integers up to 4294967295 (element 1 is -2)"),
                new Case(
                        "{\"timestamp\": 5, \"input_length\": 600, \"output_length\": 1, \"hash_ids\": [4294967296]}",
                        ":3: hash_ids must be an array of non-negative integers up to 4294967295 (element 0 is 4294967296)"),
                new Case(
                        "{\"timestamp\": 5, \"input_length\": 600, \"output_length\": 1, \"hash_ids\": [1.5]}",
                        ":3: hash_ids must be an array of non-negative integers up to 4294967295 (element 0 is 1.5)"),
                new Case(
                        "{\"timestamp\": 5, \"input_length\": 600, \"output_length\": 1, \"hash_ids\": 7}",
                        ":3: hash_ids must be an array of non-negative integers up to 4294967295, got 7"),
                new Case(
                        "{\"timestamp\": 5, \"output_length\": 1, \"hash_ids\": []}",
                        ":3: missing field \"input_length\""),
                new Case(
                        "{\"timestamp\": 5, \"input_length\": 600, \"output_length\": 1}",
                        ":3: missing field \"hash_ids\""),
                new Case(
                        "{\"timestamp\": -1, \"input_length\": 600, \"output_length\": 1, \"hash_ids\": []}",
                        ":3: timestamp must be a non-negative integer, got -1"),
                new Case(
                        "{\"timestamp\": \"0\", \"input_length\": 600, \"output_length\": 1, \"hash_ids\": []}",
                        ":3: timestamp must be a non-negative integer, got \"0\""),
                new Case(
                        "{\"timestamp\": 0, \"input_length\": null, \"output_length\": 1, \"hash_ids\": []}",
                        ":3: input_length must be a non-negative integer up to 2147483647, got null"),
                new Case(
                        "{\"timestamp\": 0, \"input_length\": 3000000000, \"output_length\": 1, \"hash_ids\": []}",
                        ":3: input_length must be a non-negative integer up to 2147483647, got 3000000000"),
                new Case(
                        "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1e2, \"hash_ids\": []}",
                        ":3: output_length must be a non-negative integer up to 2147483647, got 1e2"),
                new Case("{\"timestamp\": 0,", ":3: not valid JSON"),
                new Case("[1, 2]", ":3: expected a JSON object {...}, found an array"),
                new Case(good.strip() + " {}", ":3: found an object after the JSON object"),
                new Case(good.strip() + " x", ":3: not valid JSON"),
                new Case(
                        "{\"timestamp\": 0, \"timestamp\": 1, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": []}",
                        ":3: not valid JSON: Duplicate field 'timestamp'"),
                new Case("{'timestamp': 0}", ":3: not valid JSON"));
        for (Case c : cases) {
            Path f = tmp.resolve("conversation_trace.jsonl");
            Files.writeString(f, good + "\n" + c.line3() + "\n" + good);
            assertTraceError(f, f + c.message(), c.line3());
        }
        // invalid UTF-8 inside a string on line 2
        Path bin = tmp.resolve("binary.jsonl");
        byte[] bad =
                "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [], \"x\": \"\u00ff\u00ff\"}\n"
                        .getBytes(StandardCharsets.ISO_8859_1);
        Files.write(bin, concat(good.getBytes(StandardCharsets.UTF_8), bad));
        assertTraceError(bin, bin + ":2: not valid JSON", "invalid UTF-8");
        Path empty = tmp.resolve("empty.jsonl");
        Files.writeString(empty, "");
        assertTraceError(empty, empty + ": the file is empty, no requests", "empty");
        Files.writeString(empty, "\n  \n");
        assertTraceError(empty, empty + ": no requests (only blank lines)", "blank");
        Path missing = tmp.resolve("nope.jsonl");
        assertTraceError(missing, "'" + missing + "': no such file", "missing");
        assertTraceError(tmp, "'" + tmp + "': is a directory, not a file", "directory");
    }

    /** A bad trace is a bad input: exit status 2, one line naming --trace, the file, the line and the fault. */
    private static void assertTraceError(Path trace, String message, String what) {
        var r = CliRunner.run("gen-ops", "--trace", trace.toString());
        assertEquals(2, r.exit(), what + ": " + r.err());
        assertEquals("", r.out(), what);
        assertTrue(r.err().startsWith("kvprefix gen-ops: --trace " + message), what + ": " + r.err());
        assertEquals(1, r.err().lines().count(), what + ": one line, no stack trace: " + r.err());
    }

    @Test
    void badOptionsAreClearErrors() throws Exception {
        record Case(int exit, String message, String... args) {}
        Path dirless = tmp.resolve("no/such/dir/out.jsonl");
        for (Case c : List.of(
                new Case(2, "--split must be a divisor of 512 (the tokens per hash id), got 3", "--split", "3"),
                new Case(2, "--split must be a divisor of 512", "--split", "0"),
                new Case(2, "--duplicate must be >= 1, got 0", "--duplicate", "0"),
                new Case(2, "--truncate must be >= 1, got 0", "--truncate", "0"),
                new Case(2, "--workers must be in 1..65536, got 0", "--workers", "0"),
                new Case(2, "--cache-blocks must be >= 1, got -5", "--cache-blocks", "-5"),
                new Case(2, "--requests must be >= 1, got 0", "--requests", "0"),
                new Case(
                        2,
                        "--requests is for the built-in workload; with --trace use --truncate",
                        "--trace",
                        small(),
                        "--requests",
                        "5"),
                new Case(2, "--duplicate 2147483647 needs about", "--trace", small(), "--duplicate", "2147483647"),
                new Case(2, "Invalid value for option '--workers'", "--workers", "many"),
                new Case(2, "Unknown option: '--bogus'", "--bogus"),
                new Case(
                        2,
                        "--out '" + dirless + "': no such directory",
                        "--trace",
                        small(),
                        "--out",
                        dirless.toString()))) {
            List<String> a = new ArrayList<>(List.of("gen-ops"));
            a.addAll(List.of(c.args()));
            var r = CliRunner.run(a.toArray(String[]::new));
            String label = String.join(" ", c.args());
            assertEquals(c.exit(), r.exit(), label + ": " + r.err());
            assertEquals("", r.out(), label);
            assertTrue(r.err().contains(c.message()), label + ": " + r.err());
            assertFalse(r.err().contains("\tat "), label + ": no stack trace: " + r.err());
        }
        assertFalse(Files.exists(dirless));
    }

    private static String[] append(String[] a, String... more) {
        String[] out = java.util.Arrays.copyOf(a, a.length + more.length);
        System.arraycopy(more, 0, out, a.length, more.length);
        return out;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
