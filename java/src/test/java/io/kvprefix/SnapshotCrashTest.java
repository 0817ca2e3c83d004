package io.kvprefix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.testing.SnapshotWriterMain;
import io.kvprefix.testing.TestScale;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A crash at any moment of writing leaves the previous snapshot whole (docs/SNAPSHOT.md section 2):
 * a child JVM ({@link SnapshotWriterMain}) snapshots a state of 384,000 blocks over and over to one
 * file and is killed with {@code SIGKILL} at a random moment, several times; each time the file must
 * restore and answer exactly like the last round the child reported saved (or the next one, whose
 * rename may have happened before the report got out).
 */
class SnapshotCrashTest {
    @TempDir
    Path dir;

    @Test
    void aKilledWriterLeavesTheLastSnapshotWhole() throws Exception {
        long seed = TestScale.seed();
        SplittableRandom r = new SplittableRandom(seed);
        Path file = dir.resolve("index.snap");
        int midWrite = 0;
        int kills = TestScale.iterations(5, 20);
        for (int run = 0; run < kills; run++) {
            int saved = killAfter(file, 10 + r.nextInt(400));
            if (Files.exists(dir.resolve("index.snap.tmp")) && Files.size(dir.resolve("index.snap.tmp")) > 0) {
                midWrite++; // the kill landed while the next snapshot was being written
            }
            try (PrefixIndex restored = PrefixIndex.restore(file, IndexConfig.defaults())) {
                int round = Integer.parseInt(restored.snapshotMetadata().get("round"));
                assertTrue(round == saved || round == saved + 1, "restored round " + round + ", last saved " + saved);
                try (PrefixIndex reference = PrefixIndex.create(IndexConfig.defaults())) {
                    SnapshotWriterMain.base(reference);
                    for (int k = 0; k <= round; k++) {
                        SnapshotWriterMain.round(reference, k);
                    }
                    assertEquals(
                            SnapshotWriterMain.fingerprint(reference),
                            SnapshotWriterMain.fingerprint(restored),
                            "run " + run + ", round " + round + ", " + TestScale.replay(seed));
                }
            }
            Files.delete(file); // the next child starts from nothing
        }
        System.out.println("SnapshotCrashTest: " + midWrite + " of " + kills + " kills landed mid-write, "
                + TestScale.replay(seed));
        assertTrue(midWrite > 0, "no kill landed in the middle of a write");
    }

    /** Starts the writer, waits for its first snapshot, kills it {@code millis} later; the last round it reported. */
    private static int killAfter(Path file, int millis) throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>(List.of(
                java,
                "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow",
                "-cp",
                System.getProperty("java.class.path"),
                SnapshotWriterMain.class.getName(),
                file.toString()));
        Process p = new ProcessBuilder(cmd)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        AtomicInteger last = new AtomicInteger(-1);
        CountDownLatch first = new CountDownLatch(1);
        Thread reader = new Thread(() -> {
            try (BufferedReader in =
                    new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    if (line.startsWith("saved ")) {
                        last.set(Integer.parseInt(line.substring(6)));
                        first.countDown();
                    }
                }
            } catch (java.io.IOException e) {
                // the pipe closes when the child is killed
            }
        });
        reader.start();
        try {
            assertTrue(first.await(120, TimeUnit.SECONDS), "the writer never saved a snapshot");
            Thread.sleep(millis);
        } finally {
            p.destroyForcibly(); // SIGKILL: no shutdown hook, no finally, no flush
            p.waitFor(30, TimeUnit.SECONDS);
            reader.join(10_000);
        }
        assertEquals(137, p.exitValue(), "killed by SIGKILL");
        return last.get();
    }
}
