package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.testing.RepoPaths;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code kvprefix hash}: the test vectors of docs/SPEC.md section 2.3 through the command line, and its error handling. */
class HashCommandTest {

    /**
     * Multimodal items (docs/SPEC.md section 2.1): vectors derived from Dynamo's algorithm and computed
     * with Debian's python3-xxhash (no Dynamo test asserts a concrete multimodal value; see MultimodalTest).
     */
    @ParameterizedTest
    @ValueSource(strings = {"native", "portable"})
    void multimodalItems(String impl) {
        var r = CliRunner.run("hash", "--block-size", "2", "--tokens", "0,1", "--mm", "0:2:42", "--impl", impl);
        assertEquals(0, r.exit(), r.err());
        assertEquals("0 6100948656312251355 6100948656312251355\n", r.out());
        // [1,2,3,4] at block size 2 with mm_hash 42 on block 0 (the shape of Dynamo's own relational test)
        r = CliRunner.run("hash", "--block-size", "2", "--tokens", "1,2,3,4", "--mm", "1:2:42", "--impl", impl);
        assertEquals(0, r.exit(), r.err());
        assertEquals("""
                0 8042846820486697486 8042846820486697486
                1 2662118915037317746 4259092461302758115
                """, r.out());
        // two items on one block, one given as a negative (two's complement) value
        r = CliRunner.run("hash", "--block-size", "2", "--tokens", "0,1", "--mm", "0:1:-1,1:2:7", "--impl", impl);
        assertEquals("0 15584638562251492848 15584638562251492848\n", r.out(), r.err());
    }

    @ParameterizedTest
    @ValueSource(strings = {"native", "portable"})
    void tokensOneToThirteen(String impl) {
        var r = CliRunner.run("hash", "--block-size", "4", "--tokens", "1,2,3,4,5,6,7,8,9,10,11,12,13", "--impl", impl);
        assertEquals(0, r.exit(), r.err());
        assertEquals("""
                0 14643705804678351452 14643705804678351452
                1 16777012769546811212 4945711292740353085
                2 483935686894639516 12583592247330656132
                """, r.out());
    }

    @ParameterizedTest
    @ValueSource(strings = {"native", "portable"})
    void mooncakeHashIds(String impl) {
        String block0 = String.join(",", Collections.nCopies(512, "0"));
        String block1 = String.join(",", Collections.nCopies(512, "1"));
        String block2 = String.join(",", Collections.nCopies(512, "2"));
        var r = CliRunner.run(
                "hash", "--block-size", "512", "--tokens", block0 + "," + block1 + "," + block2, "--impl", impl);
        assertEquals(0, r.exit(), r.err());
        assertEquals("""
                0 16456450638077811066 16456450638077811066
                1 10716031498429279048 10107136320548696770
                2 17161484913955091167 13351200824785277189
                """, r.out());
        var r42 = CliRunner.run(
                "hash",
                "--block-size",
                "512",
                "--tokens",
                String.join(",", Collections.nCopies(512, "42")),
                "--impl",
                impl);
        assertEquals("0 11733219580547862099 11733219580547862099\n", r42.out());
    }

    @ParameterizedTest
    @ValueSource(strings = {"native", "portable"})
    void saltsSeedAndLargestToken(String impl) {
        assertEquals(
                "0 6665157333201000639 6665157333201000639\n",
                CliRunner.run("hash", "--block-size", "4", "--tokens", "0,1,2,3", "--lora", "adapter-a", "--impl", impl)
                        .out());
        assertEquals(
                "0 17009624042690211646 17009624042690211646\n",
                CliRunner.run(
                                "hash",
                                "--block-size",
                                "4",
                                "--tokens",
                                "0,1,2,3",
                                "--namespace",
                                "tenant-a",
                                "--impl",
                                impl)
                        .out());
        assertEquals(
                "0 8269515957840517240 8269515957840517240\n",
                CliRunner.run(
                                "hash",
                                "--block-size",
                                "4",
                                "--tokens",
                                "0,1,2,3",
                                "--lora",
                                "adapter-a",
                                "--namespace",
                                "tenant-a",
                                "--impl",
                                impl)
                        .out());
        // --seed replaces 1337 before the salt: seed 1337 given explicitly changes nothing.
        assertEquals(
                "0 6665157333201000639 6665157333201000639\n",
                CliRunner.run(
                                "hash",
                                "--block-size",
                                "4",
                                "--tokens",
                                "0,1,2,3",
                                "--lora",
                                "adapter-a",
                                "--seed",
                                "1337",
                                "--impl",
                                impl)
                        .out());
        var max = CliRunner.run("hash", "--block-size", "1", "--tokens", "4294967295", "--impl", impl);
        assertEquals(0, max.exit(), max.err());
        assertEquals(1, max.out().lines().count());
    }

    @Test
    void emptyOrShortInputPrintsNothing() {
        for (String tokens : List.of("", " ", "1,2,3")) {
            var r = CliRunner.run("hash", "--block-size", "4", "--tokens", tokens);
            assertEquals(0, r.exit(), r.err());
            assertEquals("", r.out());
        }
    }

    @Test
    void badInputIsAClearErrorOnStandardError() {
        record Case(String[] args, String message) {}
        for (Case c : List.of(
                new Case(new String[] {"hash", "--block-size", "0", "--tokens", "1"}, "--block-size must be >= 1"),
                new Case(new String[] {"hash", "--block-size", "4", "--tokens", "4294967296"}, "outside 0..4294967295"),
                new Case(new String[] {"hash", "--block-size", "4", "--tokens", "-1"}, "outside 0..4294967295"),
                new Case(new String[] {"hash", "--block-size", "4", "--tokens", "1,,2"}, "is not an integer"),
                new Case(new String[] {"hash", "--block-size", "4", "--tokens", "1", "--seed", "x"}, "--seed"),
                new Case(
                        new String[] {"hash", "--block-size", "4", "--tokens", "1", "--impl", "fast"},
                        "auto, native or portable"),
                new Case(new String[] {"hash", "--block-size", "4", "--tokens", "1", "--mm", "3:2:1"}, "below END"),
                new Case(
                        new String[] {"hash", "--block-size", "4", "--tokens", "1", "--mm", "0:2"},
                        "START:END:MM_HASH"),
                new Case(new String[] {"hash", "--block-size", "4", "--tokens", "1", "--mm", "0:x:1"}, "--mm END"),
                new Case(new String[] {"hash", "--tokens", "1"}, "--block-size"))) {
            var r = CliRunner.run(c.args());
            assertEquals(2, r.exit(), String.join(" ", c.args()) + ": " + r.err());
            assertEquals("", r.out());
            assertTrue(r.err().contains(c.message()), r.err());
            assertTrue(!r.err().contains("\tat "), "no stack trace: " + r.err());
        }
    }

    /** The launcher exports a UTF-8 locale: a non-ASCII LoRA name hashes right even under env -i. */
    @Test
    void launcherUnderEmptyEnvironmentHashesUtf8Names() throws Exception {
        Path root = RepoPaths.root();
        String javaHome = Path.of(ProcessHandle.current().info().command().orElseThrow())
                .getParent()
                .getParent()
                .toString();
        ProcessBuilder pb = new ProcessBuilder(
                "env",
                "-i",
                "PATH=/usr/bin:/bin",
                "JAVA_HOME=" + javaHome,
                "KVPREFIX_CLASSPATH=" + System.getProperty("java.class.path"),
                root.resolve("kvprefix").toString(),
                "hash",
                "--block-size",
                "2",
                "--tokens",
                "0,1",
                "--lora",
                "\u00fcn\u00ef",
                "--impl",
                "portable");
        Map<String, String> env = pb.environment();
        env.clear();
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), err);
        // Expected value from python3-xxhash: seed 1337 + xxh3("ünï", 0), block [0, 1].
        assertEquals("0 7721552733305758552 7721552733305758552\n", out);
    }
}
