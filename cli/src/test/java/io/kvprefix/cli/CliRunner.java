package io.kvprefix.cli;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Runs the command line in this JVM with captured standard streams, for tests.
 *
 * <p>Thread-safety: swaps the process-wide System streams; tests using it must not run in parallel.
 */
public final class CliRunner {
    private CliRunner() {}

    /** Exit status and captured streams of one run. */
    public record Result(int exit, String out, String err) {}

    public static synchronized Result run(String... args) {
        return runWithInput(new byte[0], args);
    }

    public static synchronized Result runWithInput(byte[] stdin, String... args) {
        PrintStream oldOut = System.out, oldErr = System.err;
        InputStream oldIn = System.in;
        ByteArrayOutputStream out = new ByteArrayOutputStream(), err = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            System.setIn(new ByteArrayInputStream(stdin));
            int exit = Main.run(args);
            System.out.flush();
            System.err.flush();
            return new Result(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
            System.setIn(oldIn);
        }
    }
}
