package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.testing.RepoPaths;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code kvprefix footprint}: a synthetic state and the final state of an op stream, measured alike by every implementation. */
class FootprintCommandTest {
    @TempDir
    Path tmp;

    /** impl -> pairs, from the tab-separated table. */
    private static List<String[]> rows(String out) {
        return out.lines()
                .filter(l -> !l.startsWith("#") && !l.startsWith("impl"))
                .map(l -> l.split("\t"))
                .toList();
    }

    @Test
    void theFinalStateOfAnOpStreamHasThePairsEveryImplementationHolds() {
        Path ops = tmp.resolve("ops.jsonl");
        String trace = RepoPaths.root()
                .resolve("workloads/src/test/resources/traces/small.jsonl")
                .toString();
        var g = CliRunner.run(
                "gen-ops", "--trace", trace, "--workers", "2", "--cache-blocks", "4", "--out", ops.toString());
        assertEquals(0, g.exit(), g.err());
        var r = CliRunner.run("footprint", "--ops", ops.toString(), "--impl", "heap,offheap-java,offheap-native");
        assertEquals(0, r.exit(), r.err());
        List<String[]> rows = rows(r.out());
        assertEquals(3, rows.size(), r.out());
        long pairs = Long.parseLong(rows.get(0)[1]);
        assertTrue(pairs > 0, r.out());
        for (String[] row : rows) {
            assertEquals(pairs, Long.parseLong(row[1]), "pairs of " + row[0] + " in " + r.out());
            assertTrue(Double.parseDouble(row[4]) > 0, r.out());
        }
        assertTrue(r.out().startsWith("# the final state of " + ops), r.out());
    }

    @Test
    void aSyntheticStateHoldsWhatWasAskedFor() {
        var r = CliRunner.run(
                "footprint", "--blocks", "5000", "--workers", "8", "--sharing", "2", "--impl", "offheap-java");
        assertEquals(0, r.exit(), r.err());
        assertEquals(10_000, Long.parseLong(rows(r.out()).get(0)[1]), r.out());
    }
}
