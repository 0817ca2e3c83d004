package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code kvprefix epp-bench} at a tiny size: one line per cell with its counts and percentiles, no
 * request refused, and the one-byte-chunk check run with no pick changed. The figures themselves are
 * the lead's to measure on a quiet machine (docs/EPP.md section 9).
 */
class EppBenchCommandTest {
    @Test
    void aTinyRunReportsEveryCellAndStablePicks() {
        var r = CliRunner.run(
                "epp-bench",
                "--tokens",
                "64,256",
                "--concurrency",
                "1,4",
                "--requests",
                "20",
                "--warmup",
                "4",
                "--engines",
                "2",
                "--prefixes",
                "4",
                "--chunk-checks",
                "3");
        assertEquals(0, r.exit(), r.err());
        List<String> lines = r.out().lines().toList();
        assertEquals("tokens\tconcurrency\trequests\treq_per_s\tp50_ms\tp99_ms\trefused", lines.get(0));
        List<String> cells = lines.subList(1, 5);
        int k = 0;
        for (String t : List.of("64", "256")) {
            for (String c : List.of("1", "4")) {
                String[] f = cells.get(k++).split("\t");
                assertEquals(t, f[0], r.out());
                assertEquals(c, f[1], r.out());
                assertEquals("20", f[2]);
                assertTrue(Double.parseDouble(f[3]) > 0, r.out());
                assertTrue(Double.parseDouble(f[4]) <= Double.parseDouble(f[5]), r.out());
                assertEquals("0", f[6], "no request refused: " + r.out());
            }
        }
        assertEquals("one-byte chunks, 64 tokens: 0 of 3 picks changed (0.000)", lines.get(5));
        assertEquals("one-byte chunks, 256 tokens: 0 of 3 picks changed (0.000)", lines.get(6));
    }
}
