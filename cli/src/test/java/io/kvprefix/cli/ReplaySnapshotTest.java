package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.KvEvent;
import io.kvprefix.opstream.Implementations;
import io.kvprefix.opstream.Op;
import io.kvprefix.opstream.OpStreamWriter;
import io.kvprefix.testing.SnapshotStates;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kvprefix replay --restore FILE --save FILE} (docs/SPEC.md section 11): a stream answered in
 * pieces, each piece restoring what the one before saved, prints exactly what the whole stream
 * prints, on every {@code --impl} and across them; a bad {@code --restore} file is one line on
 * standard error, exit status 2 and nothing on standard output.
 */
class ReplaySnapshotTest {
    @TempDir
    Path dir;

    /** 4,000 op-stream lines: events of a few workers over shared documents, and matches. */
    private static List<String> stream(long seed) {
        SnapshotStates s = new SnapshotStates(seed, 10, 40, 80);
        List<String> lines = new ArrayList<>();
        for (KvEvent e : s.events(2500)) {
            lines.add(OpStreamWriter.line(new Op.Event(e)));
            if (lines.size() % 5 == 0) {
                lines.add(OpStreamWriter.line(new Op.HashMatch(s.query())));
            }
        }
        return lines;
    }

    private Path file(String name, List<String> lines) throws IOException {
        Path p = dir.resolve(name);
        Files.write(p, lines, StandardCharsets.UTF_8);
        return p;
    }

    private static CliRunner.Result replay(String... args) {
        String[] all = new String[args.length + 1];
        all[0] = "replay";
        System.arraycopy(args, 0, all, 1, args.length);
        return CliRunner.run(all);
    }

    @Test
    void piecesRestoringWhatTheLastSavedAnswerLikeTheWholeStream() throws IOException {
        List<String> lines = stream(3);
        Path whole = file("whole.jsonl", lines);
        int a = lines.size() / 3;
        int b = 2 * lines.size() / 3;
        Path p1 = file("p1.jsonl", lines.subList(0, a));
        Path p2 = file("p2.jsonl", lines.subList(a, b));
        Path p3 = file("p3.jsonl", lines.subList(b, lines.size()));
        List<String> impls = Implementations.names();
        for (int i = 0; i < impls.size(); i++) {
            String first = impls.get(i);
            String second = impls.get((i + 1) % impls.size()); // and across implementations
            var expected = replay("--impl", first, "-q", whole.toString());
            assertEquals(0, expected.exit(), expected.err());
            Path s1 = dir.resolve(first + "-1.snap");
            Path s2 = dir.resolve(first + "-2.snap");
            var r1 = replay("--impl", first, "--save", s1.toString(), p1.toString());
            var r2 = replay("--impl", second, "--restore", s1.toString(), "--save", s2.toString(), p2.toString());
            var r3 = replay("--impl", first, "--restore", s2.toString(), p3.toString());
            for (var r : List.of(r1, r2, r3)) {
                assertEquals(0, r.exit(), r.err());
            }
            assertEquals(expected.out(), r1.out() + r2.out() + r3.out(), first + " then " + second);
            assertTrue(r2.err().contains("kvprefix replay: restored " + s1), r2.err());
            assertTrue(r2.err().contains("kvprefix replay: saved " + s2), r2.err());
        }
    }

    @Test
    void anEmptyStreamSavesAndRestoresTheSameState() throws IOException {
        List<String> lines = stream(4);
        Path all = file("all.jsonl", lines);
        Path empty = file("empty.jsonl", List.of());
        Path s1 = dir.resolve("s1.snap");
        Path s2 = dir.resolve("s2.snap");
        assertEquals(0, replay("-q", "--save", s1.toString(), all.toString()).exit());
        var r = replay("-q", "--restore", s1.toString(), "--save", s2.toString(), empty.toString());
        assertEquals(0, r.exit(), r.err());
        assertEquals("", r.out());
        assertEquals(List.of(), List.of(r.err().lines().toArray()));
        assertTrue(java.util.Arrays.equals(Files.readAllBytes(s1), Files.readAllBytes(s2)));
    }

    private void badRestore(Path snapshot, String reason, String... options) throws IOException {
        Path ops = file("ops.jsonl", stream(5).subList(0, 20));
        List<String> args = new ArrayList<>(List.of(options));
        args.addAll(List.of("--restore", snapshot.toString(), ops.toString()));
        var r = replay(args.toArray(String[]::new));
        assertEquals(2, r.exit(), r.err());
        assertEquals("", r.out());
        assertEquals(1, r.err().lines().count(), r.err());
        assertTrue(r.err().startsWith("kvprefix replay: snapshot " + snapshot + ": "), r.err());
        assertTrue(r.err().contains(reason), r.err() + " (expected '" + reason + "')");
        assertFalse(r.err().contains("\tat "), r.err());
    }

    @Test
    void aBadRestoreFileIsExitTwoAndOneLine() throws IOException {
        Path good = dir.resolve("good.snap");
        assertEquals(
                0,
                replay(
                                "-q",
                                "--save",
                                good.toString(),
                                file("a.jsonl", stream(6)).toString())
                        .exit());
        byte[] bytes = Files.readAllBytes(good);
        badRestore(dir.resolve("missing.snap"), "no such file");
        badRestore(dir, "is a directory");
        badRestore(file("garbage.snap", List.of("{\"op\":\"match\"}")), "not a kvprefix snapshot");
        Path cut = dir.resolve("cut.snap");
        Files.write(cut, java.util.Arrays.copyOf(bytes, bytes.length / 2));
        badRestore(cut, "truncated");
        byte[] flipped = bytes.clone();
        flipped[bytes.length / 2] ^= 4;
        Path bad = dir.resolve("flipped.snap");
        Files.write(bad, flipped);
        badRestore(bad, "CRC32C mismatch");
        badRestore(good, "written with block size 16, but the index is configured with 32", "--block-size", "32");
        badRestore(good, "written with max workers 1024, but the index is configured with 64", "--max-workers", "64");
        for (String impl : Implementations.names()) {
            badRestore(cut, "truncated", "--impl", impl);
        }
    }

    @Test
    void anUnreadableRestoreFileIsExitTwo() throws Exception {
        Path open = Files.createDirectory(dir.resolve("open"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path snap = open.resolve("locked.snap");
        assertEquals(
                0,
                replay(
                                "-q",
                                "--save",
                                snap.toString(),
                                file("b.jsonl", stream(7)).toString())
                        .exit());
        Files.setPosixFilePermissions(snap, PosixFilePermissions.fromString("---------"));
        Path ops = file("ops2.jsonl", List.of());
        Files.setPosixFilePermissions(ops, PosixFilePermissions.fromString("rw-r--r--"));
        if (!"root".equals(System.getProperty("user.name"))) {
            badRestore(snap, "cannot read: permission denied");
            return;
        }
        // root reads anything: drop to nobody (uid 65534) in a child JVM, with setpriv from util-linux;
        // the jars come along in a directory anyone can read (the Maven repository is root's own)
        String java = ProcessHandle.current().info().command().orElse("java");
        Process p = new ProcessBuilder(
                        "setpriv",
                        "--reuid=65534",
                        "--regid=65534",
                        "--clear-groups",
                        java,
                        "--enable-native-access=ALL-UNNAMED",
                        "--sun-misc-unsafe-memory-access=allow",
                        "-cp",
                        readableClassPath(open),
                        Main.class.getName(),
                        "replay",
                        "--restore",
                        snap.toString(),
                        ops.toString())
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(2, p.exitValue(), err);
        assertEquals("", out);
        assertEquals(
                "kvprefix replay: snapshot " + snap + ": cannot read: permission denied",
                err.lines().filter(l -> l.startsWith("kvprefix")).findFirst().orElse(err));
    }

    /**
     * This JVM's class path, with every jar and every class folder copied under {@code dir} (readable
     * by anyone): the clone's own {@code target/classes} may sit under a folder other users cannot
     * enter (a clone under {@code /root}, or made by {@code mktemp -d}).
     */
    private static String readableClassPath(Path dir) throws IOException {
        Path jars = Files.createDirectory(dir.resolve("jars"));
        List<String> out = new ArrayList<>();
        int n = 0;
        for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            Path e = Path.of(entry);
            if (Files.isRegularFile(e)) {
                Path copy = jars.resolve((n++) + "-" + e.getFileName());
                Files.copy(e, copy);
                Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("rw-r--r--"));
                out.add(copy.toString());
            } else if (Files.isDirectory(e)) {
                Path copy = jars.resolve((n++) + "-classes");
                copyReadable(e, copy);
                out.add(copy.toString());
            }
        }
        Files.setPosixFilePermissions(jars, PosixFilePermissions.fromString("rwxr-xr-x"));
        return String.join(java.io.File.pathSeparator, out);
    }

    /** Copies the tree {@code from} to {@code to}, folders rwxr-xr-x and files rw-r--r--. */
    private static void copyReadable(Path from, Path to) throws IOException {
        try (var walk = Files.walk(from)) {
            for (Path src : walk.toList()) {
                Path dst = to.resolve(from.relativize(src).toString());
                if (Files.isDirectory(src)) {
                    Files.createDirectories(dst);
                    Files.setPosixFilePermissions(dst, PosixFilePermissions.fromString("rwxr-xr-x"));
                } else if (Files.isRegularFile(src)) {
                    Files.copy(src, dst);
                    Files.setPosixFilePermissions(dst, PosixFilePermissions.fromString("rw-r--r--"));
                }
            }
        }
    }

    @Test
    void aSaveThatFailsIsExitOneAfterEveryAnswer() throws IOException {
        List<String> lines = stream(8).subList(0, 200);
        Path ops = file("c.jsonl", lines);
        Path nowhere = dir.resolve("no/such/dir/x.snap");
        var r = replay("-q", "--save", nowhere.toString(), ops.toString());
        assertEquals(1, r.exit(), r.err());
        assertEquals(lines.size(), r.out().lines().count());
        assertTrue(r.err().startsWith("kvprefix replay: snapshot " + nowhere + ": cannot write "), r.err());
    }
}
