package io.kvprefix.standin;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A child process that a test, the demo's live leg or a benchmark starts and stops (a stand-in, a
 * {@code kvprefix} command, nginx): the one home of stopping one by its process id (SIGTERM, a wait,
 * then SIGKILL and a wait), of reading the {@code READY {...}} line such a child prints when it
 * serves (docs/STANDIN.md; docs/OPERATING.md section 12), and of draining its standard output after
 * that line so that a full pipe never blocks it.
 *
 * <p>Thread-safety: {@link #stop} and {@link #kill} may be called from any thread (a shutdown hook
 * too); {@link #awaitReady} by its owner, once.
 */
public final class ChildProcess implements AutoCloseable {
    /** What {@link #stop} returns when the process did not end on SIGTERM in time and was killed. */
    public static final int KILLED = -1;

    private static final String READY = "READY {";

    private final String name;
    private final Process process;
    private final List<String> beforeReady = new CopyOnWriteArrayList<>();

    private ChildProcess(String name, Process process) {
        this.name = name;
        this.process = process;
    }

    /** Starts {@code pb}'s command as the child {@code name} (for messages). */
    public static ChildProcess start(String name, ProcessBuilder pb) throws IOException {
        return new ChildProcess(name, pb.start());
    }

    /**
     * The command line that runs {@code mainClass} with {@code args} in a JVM like this one: the same
     * {@code java}, class path and native-access flags, with a heap of {@code heap} ({@code -Xmx}; null:
     * the JVM's default).
     */
    public static List<String> javaCommand(String heap, String mainClass, List<String> args) {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow"));
        if (heap != null) {
            cmd.add("-Xmx" + heap);
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), mainClass));
        cmd.addAll(args);
        return cmd;
    }

    /**
     * Reads standard output (which must be a pipe) up to the first line starting with <code>READY {</code>
     * and returns it; the lines before it are kept ({@link #linesBeforeReady}), those after it read and
     * dropped on a daemon thread. Null if standard output ended without one.
     *
     * @throws IOException if no such line came within {@code timeout}
     */
    public String awaitReady(Duration timeout) throws IOException, InterruptedException {
        CompletableFuture<String> ready = new CompletableFuture<>();
        Thread reader = new Thread(() -> read(ready), name + "-stdout");
        reader.setDaemon(true); // a child that never ends must not keep this JVM
        reader.start();
        try {
            return ready.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new IOException(name + " printed no READY line within " + timeout.toSeconds() + " s", e);
        } catch (ExecutionException e) {
            throw new IOException(name + ": " + e.getCause(), e.getCause());
        }
    }

    private void read(CompletableFuture<String> ready) {
        try (BufferedReader out =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            for (String l; (l = out.readLine()) != null; ) {
                if (!ready.isDone()) {
                    if (l.startsWith(READY)) {
                        ready.complete(l);
                    } else {
                        beforeReady.add(l);
                    }
                } // after READY: read so that the pipe never fills and blocks the child
            }
        } catch (IOException e) {
            // the child ended, or its pipe was closed
        }
        ready.complete(null);
    }

    /** The lines of standard output before the {@code READY} line ({@link #awaitReady}). */
    public List<String> linesBeforeReady() {
        return List.copyOf(beforeReady);
    }

    /**
     * Stops the child by its process id: SIGTERM, then up to {@code grace} for it to end; if it has not,
     * SIGKILL and up to 30 s more. Returns its exit status, or {@link #KILLED}. Idempotent.
     */
    public int stop(Duration grace) {
        ProcessHandle h = process.toHandle();
        try {
            if (!process.isAlive()) {
                return process.exitValue();
            }
            h.destroy();
            if (process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
                return process.exitValue();
            }
            h.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            h.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        return KILLED;
    }

    /** SIGKILL by its process id, as a process that dies; waits up to 60 s until it is gone. */
    public void kill() throws InterruptedException {
        process.toHandle().destroyForcibly();
        process.waitFor(60, TimeUnit.SECONDS);
    }

    /** The process (its streams, its descendants). */
    public Process process() {
        return process;
    }

    /** Its process id. */
    public long pid() {
        return process.pid();
    }

    /** Whether it is still running. */
    public boolean alive() {
        return process.isAlive();
    }

    /** {@link #stop} with 30 s for SIGTERM. */
    @Override
    public void close() {
        stop(Duration.ofSeconds(30));
    }

    @Override
    public String toString() {
        return name + " (pid " + process.pid() + ")";
    }
}
