package io.kvprefix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.testing.ForgedSnapshotMain;
import io.kvprefix.testing.TestScale;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/SNAPSHOT.md section 4's promise, that a restore never places memory by a number it has not
 * checked, tested where it broke: worker records and name maps damaged behind recomputed CRCs, restored
 * and then used (a match, a {@code cleared} per worker, stores). The rounds run in a child JVM
 * ({@link ForgedSnapshotMain}), since a broken promise is a SIGSEGV that would take the test runner
 * with it; the child must exit 0. 300 rounds, 5,000 with {@code -Dkvprefix.test.scale=long}.
 */
class ForgedSnapshotFuzzTest {
    @TempDir
    Path dir;

    @Test
    void forgedNameMapsNeverCrashTheProcess() throws Exception {
        long seed = TestScale.seed();
        int rounds = TestScale.iterations(300, 5000);
        String java = ProcessHandle.current().info().command().orElse("java");
        Path out = dir.resolve("child.out");
        Process p = new ProcessBuilder(List.of(
                        java,
                        "--enable-native-access=ALL-UNNAMED",
                        "--sun-misc-unsafe-memory-access=allow",
                        "-XX:-CreateCoredumpOnCrash",
                        "-XX:ErrorFile=" + dir.resolve("hs_err.log"),
                        "-cp",
                        System.getProperty("java.class.path"),
                        ForgedSnapshotMain.class.getName(),
                        Long.toString(seed),
                        Integer.toString(rounds),
                        dir.toString()))
                .redirectErrorStream(true)
                .redirectOutput(out.toFile())
                .start();
        assertTrue(p.waitFor(30, TimeUnit.MINUTES), "the fuzz child did not finish");
        String text = Files.readString(out, StandardCharsets.UTF_8);
        List<String> lines = text.lines().toList();
        String last = lines.stream()
                .filter(l -> l.startsWith("round "))
                .reduce((a, b) -> b)
                .orElse("no round");
        assertEquals(
                0,
                p.exitValue(),
                "the child died in " + last + " (" + TestScale.replay(seed) + "):\n"
                        + text.lines()
                                .filter(l -> !l.startsWith("round "))
                                .limit(40)
                                .reduce("", (a, b) -> a + b + "\n"));
        String summary = lines.get(lines.size() - 1);
        assertTrue(summary.startsWith("accepted "), text);
        System.out.println("ForgedSnapshotFuzzTest: " + summary + ", " + TestScale.replay(seed));
    }
}
