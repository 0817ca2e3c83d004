package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code kvprefix snapshot-bench} (docs/BENCHMARKS.md section 6): its rows, its check, its usage errors. */
class SnapshotBenchCommandTest {
    @TempDir
    Path dir;

    @Test
    void aRowPerImplementationAndTheFileIsRemoved() {
        var r = CliRunner.run(
                "snapshot-bench",
                "--blocks",
                "20000",
                "--impl",
                "offheap-java,heap",
                "--repeat",
                "2",
                "--dir",
                dir.toString(),
                "--during");
        assertEquals(0, r.exit(), r.err());
        List<String> lines = r.out().lines().toList();
        assertTrue(lines.get(0).startsWith("# 20,000 blocks over 16 workers"), r.out());
        assertTrue(lines.get(1).startsWith("impl\tpairs\trebuild_ms"), r.out());
        for (String impl : List.of("offheap-java", "heap")) {
            String row = lines.stream()
                    .filter(l -> l.startsWith(impl + "\t"))
                    .findFirst()
                    .orElseThrow();
            String[] f = row.split("\t");
            assertEquals("20000", f[1], row);
            assertTrue(Long.parseLong(f[4]) > 20000L * 8, row); // at least the local hashes
            assertTrue(r.out().contains("# " + impl + " while snapshots are taken"), r.out());
        }
        assertTrue(r.out().contains("matches\tduring\t"), r.out());
        assertTrue(r.out().contains("writes\toutside\t"), r.out());
        assertFalse(Files.exists(dir.resolve("kvprefix-snapshot-bench.snap")));
    }

    @Test
    void theFinalStateOfAnOpStream() throws Exception {
        Path ops = dir.resolve("ops.jsonl");
        Files.writeString(
                ops,
                "{\"op\":\"stored\",\"worker\":1,\"dp_rank\":0,\"parent_hash\":null,\"blocks\":[{\"block_hash\":101,\"tokens_hash\":11},{\"block_hash\":102,\"tokens_hash\":22}]}\n"
                        + "{\"op\":\"match\",\"local_hashes\":[11,22]}\n"
                        + "{\"op\":\"removed\",\"worker\":1,\"dp_rank\":0,\"block_hashes\":[101]}\n");
        var r = CliRunner.run(
                "snapshot-bench",
                "--ops",
                ops.toString(),
                "--impl",
                "offheap",
                "--repeat",
                "1",
                "--dir",
                dir.toString(),
                "--write-ops",
                dir.resolve("written.jsonl").toString());
        assertEquals(0, r.exit(), r.err());
        List<String> in = Files.readAllLines(ops);
        assertEquals(List.of(in.get(0), in.get(2)), Files.readAllLines(dir.resolve("written.jsonl")));
        assertTrue(r.out().startsWith("# the final state of " + ops + ": 2 events, 1 queries"), r.out());
        assertTrue(r.out().contains("\noffheap\t1\t"), r.out());
    }

    @Test
    void tokenFormEventsGiveTheSameShapeOfState() {
        var r = CliRunner.run(
                "snapshot-bench",
                "--blocks",
                "3000",
                "--tokens",
                "--impl",
                "offheap,heap",
                "--repeat",
                "1",
                "--dir",
                dir.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out()
                        .startsWith(
                                "# 3,000 blocks over 16 workers in sequences of 64 (footprint's state, token-form events)"),
                r.out());
        assertTrue(r.out().contains("\noffheap\t3000\t"), r.out());
        assertTrue(r.out().contains("\nheap\t3000\t"), r.out());
    }

    /** A run whose predicted memory is more than the machine has is refused at start, before it writes anything. */
    @Test
    void aRunTooLargeForMemoryIsRefusedAtStartAndWritesNothing() {
        Path out = dir.resolve("not-made");
        Path written = dir.resolve("written.jsonl");
        var r = CliRunner.run(
                "snapshot-bench",
                "--blocks",
                "2000000000",
                "--impl",
                "heap",
                "--dir",
                out.toString(),
                "--write-ops",
                written.toString());
        assertEquals(2, r.exit(), r.err());
        assertEquals(1, r.err().lines().count(), r.err());
        assertTrue(r.err().contains("--blocks 2000000000 (--impl heap) needs about"), r.err());
        assertEquals("", r.out());
        assertFalse(Files.exists(out), "nothing made");
        assertFalse(Files.exists(written), "nothing written");
    }

    @Test
    void usageErrors() {
        assertEquals(2, CliRunner.run("snapshot-bench", "--impl", "nope").exit());
        assertEquals(2, CliRunner.run("snapshot-bench", "--repeat", "0").exit());
    }
}
