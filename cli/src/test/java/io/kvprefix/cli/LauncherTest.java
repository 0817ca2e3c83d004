package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.testing.RepoPaths;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The {@code ./kvprefix} launcher, run as a user runs it: its help, its version, its environment. */
class LauncherTest {
    @TempDir
    Path tmp;

    record Run(int exit, String out, String err) {}

    private static String javaHome() {
        return Path.of(ProcessHandle.current().info().command().orElseThrow())
                .getParent()
                .getParent()
                .toString();
    }

    private static Run run(Path launcher, Map<String, String> env, String... args)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(launcher.toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().putAll(env);
        pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        Process p = pb.start();
        var out = p.getInputStream().readAllBytes();
        var err = p.getErrorStream().readAllBytes();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the launcher did not finish");
        return new Run(p.exitValue(), new String(out, StandardCharsets.UTF_8), new String(err, StandardCharsets.UTF_8));
    }

    /** The launcher running this build's classes (KVPREFIX_CLASSPATH: no build of its own). */
    private static Run cli(Map<String, String> extra, String... args) throws IOException, InterruptedException {
        Map<String, String> env = new java.util.HashMap<>(extra);
        env.put("JAVA_HOME", javaHome());
        env.put("KVPREFIX_CLASSPATH", System.getProperty("java.class.path"));
        return run(RepoPaths.root().resolve("kvprefix"), env, args);
    }

    @Test
    void helpIsTheHeaderOfTheScriptAndNothingElse() throws Exception {
        Run r = cli(Map.of(), "--help");
        assertEquals(0, r.exit(), r.err());
        assertTrue(
                r.out().startsWith("kvprefix launcher: sets up what the project needs and runs its commands.\n"),
                r.out());
        assertFalse(r.out().contains("set -euo pipefail"), "no line of the script itself: " + r.out());
        for (String command : List.of("demo", "test", "setup", "install", "<command>", "-V")) {
            assertTrue(r.out().contains("./kvprefix " + command), command + " in " + r.out());
        }
        assertTrue(r.out().contains("Usage: kvprefix [-hV] [--debug] [COMMAND]"), "then the command line's help");
        // The first line that is no comment ends the help; it must be the one that makes errors stop the script.
        String script = Files.readString(RepoPaths.root().resolve("kvprefix"));
        String firstCode = script.lines()
                .skip(1)
                .filter(l -> !l.startsWith("#"))
                .findFirst()
                .orElse("");
        assertEquals("set -euo pipefail", firstCode);
    }

    @Test
    void versionIsThePomsWithTheCommit() throws Exception {
        Run r = cli(Map.of(), "-V");
        assertEquals(0, r.exit(), r.err());
        String first = r.out().lines().findFirst().orElse("");
        assertTrue(first.matches("kvprefix \\d+\\.\\d+\\.\\d+(-SNAPSHOT)? \\(.+\\)"), first);
        assertFalse(first.contains("development build"), first);
    }

    /** The launcher passes KVPREFIX_JAVA_OPTS to the JVM, so the memory check sees the heap it sets. */
    @Test
    void javaOptionsReachTheJvm() throws Exception {
        Run small = cli(Map.of("KVPREFIX_JAVA_OPTS", "-Xmx64m"), "footprint", "--blocks", "1000000", "--impl", "heap");
        assertEquals(2, small.exit(), small.err());
        assertTrue(small.err().contains("this JVM may use 64 MiB: set KVPREFIX_JAVA_OPTS=-Xmx1g"), small.err());
        assertEquals(1, small.err().lines().count(), small.err());
    }

    /**
     * A command other than setup, test, demo and install never installs packages: with the jar to
     * build and Maven missing, it says so in one line with status 2, and the apt-get on its PATH
     * (which records any call) is not run, even as root.
     */
    @Test
    void otherCommandsSayWhatIsMissingAndInstallNothing() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("checkout"));
        Path launcher = Files.copy(RepoPaths.root().resolve("kvprefix"), root.resolve("kvprefix"));
        Path bin = Files.createDirectories(tmp.resolve("bin"));
        for (String tool : List.of(
                "bash",
                "env",
                "sed",
                "awk",
                "find",
                "grep",
                "head",
                "dirname",
                "basename",
                "id",
                "date",
                "cat",
                "paste",
                "git",
                "sort",
                "rm",
                "printf")) {
            Path real = Path.of("/usr/bin", tool);
            if (Files.isExecutable(real)) {
                Files.createSymbolicLink(bin.resolve(tool), real);
            }
        }
        Path called = tmp.resolve("apt-get-was-called");
        Path aptGet = bin.resolve("apt-get");
        Files.writeString(aptGet, "#!/usr/bin/bash\necho \"$@\" >> " + called + "\nexit 0\n");
        Files.setPosixFilePermissions(aptGet, PosixFilePermissions.fromString("rwxr-xr-x"));
        Map<String, String> env = Map.of("PATH", bin.toString(), "JAVA_HOME", javaHome());
        for (String command : List.of("hash", "bench", "listen")) {
            ProcessBuilder pb = new ProcessBuilder(launcher.toString(), command, "--help");
            pb.environment().clear();
            pb.environment().putAll(env);
            Process p = pb.start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(60, TimeUnit.SECONDS));
            assertEquals(2, p.exitValue(), command + ": " + err);
            assertEquals("", out, command);
            assertEquals(1, err.lines().count(), command + ": one line: " + err);
            assertTrue(err.startsWith("kvprefix: building the command line needs maven"), err);
            assertTrue(err.contains("./kvprefix setup") && err.contains("apt-get install -y maven"), err);
        }
        assertFalse(Files.exists(called), "apt-get was run: " + (Files.exists(called) ? Files.readString(called) : ""));
    }
}
