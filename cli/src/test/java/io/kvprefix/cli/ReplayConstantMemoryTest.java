package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.KvEvent;
import io.kvprefix.Worker;
import io.kvprefix.opstream.Op;
import io.kvprefix.opstream.OpStreamWriter;
import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kvprefix replay -} streams: a child JVM with a 48 MB heap replays about 100 MB piped into
 * its standard input, generated on the fly, and answers every line correctly. Loading the input
 * (or keeping per-line state) would not fit.
 */
class ReplayConstantMemoryTest {
    private static final long STREAM_BYTES = 100L << 20;
    private static final int BLOCKS = 32;
    private static final long LOCAL_BASE = 1_000_000_000_000_000_000L; // 19-digit local hashes

    /** Worker of iteration k: 0, 1, 2 and 2^64-1 in turn. */
    private static Worker worker(long k) {
        return Worker.of(k % 4 == 3 ? -1L : k % 4);
    }

    /** Iteration k: store a 32-block chain for one worker, match a prefix of it, remove it again. */
    private static void iteration(long k, StringBuilder sb) {
        Worker w = worker(k);
        long[] engine = new long[BLOCKS];
        long[] local = new long[BLOCKS];
        for (int j = 0; j < BLOCKS; j++) {
            engine[j] = k * BLOCKS + j + 1;
            local[j] = LOCAL_BASE + j;
        }
        line(sb, new Op.Event(KvEvent.Stored.root(w, engine, local)));
        line(sb, new Op.HashMatch(Arrays.copyOf(local, 1 + (int) (k % BLOCKS))));
        line(sb, new Op.Event(new KvEvent.Removed(w, engine)));
        if (k % 1000 == 999) {
            line(sb, new Op.Invalid("trailing data", "{\"op\":\"match\",\"local_hashes\":[1]} trailing"));
        }
    }

    private static void line(StringBuilder sb, Op op) {
        sb.append(OpStreamWriter.line(op)).append('\n');
    }

    /** The answers to iteration k, written from the match semantics of docs/SPEC.md section 4. */
    private static List<String> answers(long k) {
        List<String> a = new ArrayList<>(4);
        a.add("{\"status\":\"ok\"}");
        a.add("{\"scores\":[[" + Long.toUnsignedString(worker(k).workerId()) + ",0," + (1 + k % BLOCKS) + "]]}");
        a.add("{\"status\":\"ok\"}");
        if (k % 1000 == 999) {
            a.add("{\"status\":\"invalid_input\"}");
        }
        return a;
    }

    @Test
    void hundredMegabytesThroughAFortyEightMegabyteHeap(@TempDir Path dir) throws Exception {
        String java = ProcessHandle.current().info().command().orElseThrow();
        Path stderr = dir.resolve("stderr.txt");
        ProcessBuilder pb = new ProcessBuilder(
                java,
                "-Xmx48m",
                "-XX:+UseSerialGC",
                "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow",
                "-cp",
                System.getProperty("java.class.path"),
                "io.kvprefix.cli.Main",
                "replay",
                "--quiet",
                "-");
        pb.redirectError(stderr.toFile());
        long t0 = System.nanoTime();
        Process p = pb.start();
        try {
            CompletableFuture<long[]> writer = CompletableFuture.supplyAsync(() -> {
                long bytes = 0;
                long k = 0;
                StringBuilder sb = new StringBuilder(8192);
                try (OutputStream out = new BufferedOutputStream(p.getOutputStream(), 1 << 16)) {
                    while (bytes < STREAM_BYTES) {
                        sb.setLength(0);
                        iteration(k++, sb);
                        byte[] b = sb.toString().getBytes(StandardCharsets.US_ASCII);
                        out.write(b);
                        bytes += b.length;
                    }
                } catch (IOException e) {
                    throw new RuntimeException("writing to the child failed after " + bytes + " bytes", e);
                }
                return new long[] {k, bytes};
            });
            long lines = 0;
            long k = 0;
            try (BufferedReader r =
                    new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.US_ASCII))) {
                List<String> expected = answers(0);
                int i = 0;
                String line;
                while ((line = r.readLine()) != null) {
                    if (i == expected.size()) {
                        expected = answers(++k);
                        i = 0;
                    }
                    String want = expected.get(i++);
                    if (!want.equals(line)) {
                        throw new AssertionError("iteration " + k + ", output line " + (lines + 1) + ": expected "
                                + want + ", got " + line + "\n" + Files.readString(stderr));
                    }
                    lines++;
                }
            }
            long[] written = writer.get(60, TimeUnit.SECONDS);
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "child did not exit");
            assertEquals(0, p.exitValue(), Files.readString(stderr));
            long iterations = written[0];
            long expectedLines = 3 * iterations + iterations / 1000;
            assertEquals(expectedLines, lines, "one output line per input line; " + Files.readString(stderr));
            assertTrue(written[1] >= STREAM_BYTES);
            assertEquals("", Files.readString(stderr));
            System.out.printf(
                    "constant-memory replay: %d MB, %d lines in %.1f s with -Xmx48m%n",
                    written[1] >> 20, lines, (System.nanoTime() - t0) / 1e9);
        } finally {
            p.destroyForcibly();
        }
    }
}
