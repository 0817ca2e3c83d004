package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.KvEvent;
import io.kvprefix.Worker;
import io.kvprefix.opstream.Implementations;
import io.kvprefix.opstream.Op;
import io.kvprefix.opstream.OpStreamWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code kvprefix replay}: options, limits, error handling and the split between stdout and stderr. */
class ReplayCommandTest {
    private static final String OK = "{\"status\":\"ok\"}\n";
    private static final String INVALID = "{\"status\":\"invalid_input\"}\n";
    private static final String CAPACITY = "{\"status\":\"capacity_exceeded\"}\n";

    private static CliRunner.Result replay(String stdin, String... options) {
        String[] args = new String[options.length + 2];
        args[0] = "replay";
        System.arraycopy(options, 0, args, 1, options.length);
        args[args.length - 1] = "-";
        return CliRunner.runWithInput(stdin.getBytes(StandardCharsets.UTF_8), args);
    }

    /** A hash-form stored line for {@code worker} without a parent: pairs of engine hash and local hash. */
    private static String stored(long worker, long... engineAndLocal) {
        long[] engine = new long[engineAndLocal.length / 2];
        long[] local = new long[engine.length];
        for (int i = 0; i < engine.length; i++) {
            engine[i] = engineAndLocal[2 * i];
            local[i] = engineAndLocal[2 * i + 1];
        }
        return OpStreamWriter.line(new Op.Event(KvEvent.Stored.root(Worker.of(worker), engine, local))) + "\n";
    }

    private static void assertOneLineError(CliRunner.Result r, int exit, String... fragments) {
        assertEquals(exit, r.exit(), r.err());
        assertEquals("", r.out());
        for (String f : fragments) {
            assertTrue(r.err().contains(f), "stderr should mention '" + f + "': " + r.err());
        }
        assertFalse(r.err().contains("\tat "), "no stack trace: " + r.err());
    }

    // ------------------------------------------------------------------ input that cannot be read

    @Test
    void missingFileIsExitTwoWithAClearMessage(@TempDir Path dir) {
        Path missing = dir.resolve("nope.jsonl");
        var r = CliRunner.run("replay", missing.toString());
        assertOneLineError(r, 2, "cannot read", missing.toString(), "no such file");
        assertEquals(1, r.err().lines().count(), r.err());
    }

    @Test
    void directoryIsExitTwoWithAClearMessage(@TempDir Path dir) {
        var r = CliRunner.run("replay", dir.toString());
        assertOneLineError(r, 2, "cannot read", dir.toString(), "directory");
        assertEquals(1, r.err().lines().count(), r.err());
    }

    // ------------------------------------------------------------------ usage errors

    @Test
    void unknownImplementationListsTheKnownOnes() {
        var r = replay(OK, "--impl", "fast");
        assertOneLineError(r, 2, "unknown implementation 'fast'", "known implementations are heap");
        assertEquals(List.of("heap"), Implementations.names().subList(0, 1));
        var heap = replay("{\"op\":\"cleared\",\"worker\":1}\n", "--impl", "heap", "--quiet");
        assertEquals(OK, heap.out(), heap.err());
    }

    @Test
    void badOptionValuesAreUsageErrorsNamingTheOption() {
        assertOneLineError(replay("", "--memory-budget", "lots"), 2, "--memory-budget");
        assertOneLineError(replay("", "--memory-budget", "1k"), 2, "--memory-budget", "64 KiB");
        assertOneLineError(replay("", "--max-workers", "0"), 2, "--max-workers");
        assertOneLineError(replay("", "--jump-size", "0"), 2, "--jump-size");
        assertOneLineError(replay("", "--block-size", "0"), 2, "--block-size");
        assertOneLineError(replay("", "--max-line-bytes", "0"), 2, "--max-line-bytes");
        var noInput = CliRunner.run("replay");
        assertEquals(2, noInput.exit(), noInput.err());
        assertTrue(noInput.err().contains("IN.jsonl"), noInput.err());
    }

    @Test
    void optionsAreAccepted() {
        var r = replay(
                stored(1, 101, 11, 102, 22) + "{\"op\":\"match\",\"local_hashes\":[11,22]}\n",
                "--quiet",
                "--max-workers",
                "4",
                "--memory-budget",
                "16m",
                "--jump-size",
                "1",
                "--block-size",
                "4");
        assertEquals(0, r.exit(), r.err());
        assertEquals(OK + "{\"scores\":[[1,0,2]]}\n", r.out());
        assertEquals("", r.err());
    }

    // ------------------------------------------------------------------ limits

    @Test
    void runningOutOfWorkerSlotsIsCapacityExceeded() {
        var r = replay(
                stored(1, 101, 11) + stored(2, 201, 11) + stored(3, 301, 11)
                        + "{\"op\":\"remove_worker\",\"worker\":1}\n" + stored(3, 301, 11)
                        + "{\"op\":\"match\",\"local_hashes\":[11]}\n",
                "--max-workers",
                "2",
                "--quiet");
        assertEquals(0, r.exit(), r.err());
        assertEquals(OK + OK + CAPACITY + OK + OK + "{\"scores\":[[2,0,1],[3,0,1]]}\n", r.out());
    }

    @Test
    void memoryBudgetIsCapacityExceededAndAppliesNothing() {
        long[] many = new long[2 * 2000];
        for (int i = 0; i < 2000; i++) {
            many[2 * i] = 1000 + i;
            many[2 * i + 1] = 5000 + i;
        }
        var r = replay(
                stored(1, many) + "{\"op\":\"match\",\"local_hashes\":[5000]}\n" + stored(1, 7, 70, 8, 80)
                        + "{\"op\":\"match\",\"local_hashes\":[70,80]}\n",
                "--memory-budget",
                "64k",
                "--quiet");
        assertEquals(0, r.exit(), r.err());
        assertEquals(CAPACITY + "{\"scores\":[]}\n" + OK + "{\"scores\":[[1,0,2]]}\n", r.out());

        // without --quiet, standard error says how full the budget was when the first store was refused
        var loud = replay(stored(1, many), "--memory-budget", "64k");
        assertEquals(CAPACITY, loud.out());
        assertTrue(
                loud.err().contains("of 0.1 MiB in use, 0 blocks held; first capacity_exceeded at line 1"), loud.err());
        var none = replay(stored(1, 7, 70), "--memory-budget", "1m");
        assertTrue(none.err().contains("nothing refused for memory"), none.err());
    }

    @Test
    void overlongLinesAreInvalidAndSkippedUnread() {
        String base = "{\"op\":\"match\",\"local_hashes\":[11]}";
        String atLimit = base + " ".repeat(200 - base.length()); // 200 bytes: fine
        String overLimit = base + " ".repeat(201 - base.length()); // 201 bytes: too long
        String huge = "{\"op\":\"match\",\"local_hashes\":[" + "1,".repeat(500_000) + "1]}";
        String in = stored(1, 101, 11) + atLimit + "\n" + overLimit + "\n" + huge + "\n" + base + "\n" + huge;
        var r = replay(in, "--max-line-bytes", "200");
        assertEquals(0, r.exit(), r.err());
        String hit = "{\"scores\":[[1,0,1]]}\n";
        assertEquals(OK + hit + INVALID + INVALID + hit + INVALID, r.out());
        assertTrue(r.err().contains("line 3: invalid_input: the line is longer than 200 bytes"), r.err());
        assertTrue(r.err().contains("line 6: invalid_input"), r.err());
    }

    @Test
    void longLinesWithinTheLimitGrowTheBuffer() {
        String tokens = IntStream.range(0, 100_000)
                .mapToObj(i -> Integer.toString(1_000_000 + i))
                .collect(Collectors.joining(","));
        String hashes = IntStream.range(0, 100_000 / 16)
                .mapToObj(i -> Integer.toString(7_000_000 + i))
                .collect(Collectors.joining(","));
        String in =
                "{\"op\":\"stored\",\"worker\":1,\"token_ids\":[" + tokens + "],\"block_size\":16,\"block_hashes\":["
                        + hashes + "]}\n{\"op\":\"match\",\"token_ids\":[" + tokens + "],\"block_size\":16}\n";
        assertTrue(in.length() > 1_000_000, "the lines must be longer than the initial read buffer");
        var r = replay(in, "--quiet");
        assertEquals(0, r.exit(), r.err());
        assertEquals(OK + "{\"scores\":[[1,0,6250]]}\n", r.out());
    }

    // ------------------------------------------------------------------ streams

    @Test
    void emptyInputGivesNoOutput() {
        var r = replay("");
        assertEquals(0, r.exit(), r.err());
        assertEquals("", r.out());
    }

    @Test
    void standardOutputCarriesOnlyResultLines() {
        String in = stored(1, 101, 11) + "{\"op\":\"match\",\"local_hashes\":[11]} trailing\n"
                + "{\"op\":\"match\",\"local_hashes\":[11]}\n";
        var r = replay(in);
        assertEquals(0, r.exit(), r.err());
        assertEquals(OK + INVALID + "{\"scores\":[[1,0,1]]}\n", r.out());
        assertTrue(r.err().contains("line 2: invalid_input: column 36: expected nothing but whitespace"), r.err());
        assertTrue(r.err().contains("3 lines: 1 matches, ok 1, invalid_input 1"), r.err());
        var quiet = replay(in, "-q");
        assertEquals(r.out(), quiet.out());
        assertEquals("", quiet.err());
    }

    @Test
    void invalidLineNotesAreCapped() {
        String in = "x\n".repeat(15);
        var r = replay(in);
        assertEquals(0, r.exit(), r.err());
        assertEquals(INVALID.repeat(15), r.out());
        assertEquals(
                10, r.err().lines().filter(l -> l.contains(": invalid_input: ")).count(), r.err());
        assertTrue(r.err().contains("5 more invalid lines not described"), r.err());
    }

    @Test
    void readsAFileGivenByPath(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("in.jsonl");
        Files.writeString(f, stored(1, 101, 11) + "{\"op\":\"match\",\"local_hashes\":[11]}", StandardCharsets.UTF_8);
        var r = CliRunner.run("replay", "--quiet", f.toString());
        assertEquals(0, r.exit(), r.err());
        assertEquals(OK + "{\"scores\":[[1,0,1]]}\n", r.out());
    }
}
