package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.opstream.Implementations;
import io.kvprefix.testing.RepoPaths;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Golden files: every {@code NAME.jsonl} of the op-stream module's golden files
 * ({@code opstream/src/test/resources/replay/}) is replayed through the command line, from the file
 * with every implementation and from standard input with the default one, and its standard output
 * must equal {@code NAME.expected} byte for byte. The expected files are hand-written from
 * docs/SPEC.md sections 5 and 7 (see the README.md next to them).
 */
class ReplayGoldenTest {

    static Path goldenDir() {
        return RepoPaths.root().resolve("opstream/src/test/resources/replay");
    }

    private static List<Path> goldenInputs() throws IOException {
        try (Stream<Path> s = Files.list(goldenDir())) {
            return s.filter(p -> p.getFileName().toString().endsWith(".jsonl"))
                    .sorted()
                    .toList();
        }
    }

    @Test
    void everyWorkedExampleOfSectionSevenHasAGoldenFile() throws Exception {
        List<String> names =
                goldenInputs().stream().map(p -> p.getFileName().toString()).toList();
        for (int i = 1; i <= 9; i++) {
            String prefix = "ex" + i + "_";
            assertTrue(
                    names.stream().anyMatch(n -> n.startsWith(prefix)),
                    "no golden file for example " + i + ": " + names);
        }
        for (Path in : goldenInputs()) {
            assertTrue(Files.exists(expectedFor(in)), "missing " + expectedFor(in));
        }
    }

    @TestFactory
    Stream<DynamicTest> goldenFiles() throws Exception {
        List<DynamicTest> tests = new ArrayList<>();
        for (Path in : goldenInputs()) {
            String name = in.getFileName().toString().replace(".jsonl", "");
            String expected = Files.readString(expectedFor(in), StandardCharsets.UTF_8);
            for (String impl : Implementations.names()) {
                tests.add(DynamicTest.dynamicTest(name + " (file, " + impl + ")", () -> {
                    var r = CliRunner.run("replay", "--quiet", "--impl", impl, in.toString());
                    check(name + " with " + impl, expected, r);
                }));
            }
            tests.add(DynamicTest.dynamicTest(name + " (stdin)", () -> {
                var r = CliRunner.runWithInput(Files.readAllBytes(in), "replay", "-");
                check(name, expected, r);
                assertFalse(r.err().contains("\tat "), "no stack trace: " + r.err());
            }));
        }
        return tests.stream();
    }

    private static void check(String name, String expected, CliRunner.Result r) {
        assertEquals(0, r.exit(), name + ": " + r.err());
        if (!expected.equals(r.out())) {
            // name the first differing line: easier to read than two whole files
            List<String> e = expected.lines().toList();
            List<String> a = r.out().lines().toList();
            int line = IntStream.range(0, Math.min(e.size(), a.size()))
                    .filter(i -> !e.get(i).equals(a.get(i)))
                    .findFirst()
                    .orElse(Math.min(e.size(), a.size()));
            assertEquals(
                    expected,
                    r.out(),
                    name + ": first difference at line " + (line + 1) + " (expected "
                            + (line < e.size() ? e.get(line) : "end of output") + ", got "
                            + (line < a.size() ? a.get(line) : "end of output") + ")\n" + r.err());
        }
    }

    private static Path expectedFor(Path in) {
        String n = in.getFileName().toString();
        return in.resolveSibling(n.substring(0, n.length() - ".jsonl".length()) + ".expected");
    }
}
