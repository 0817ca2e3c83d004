package io.kvprefix.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A {@code kvprefix} command run as a child process by the demo's live leg and the proxy benchmark
 * (docs/OPERATING.md section 12): the same JVM, class path and flags as this one, its standard error
 * in a log file, its {@code READY {...}} line parsed. Closed, it gets SIGTERM by its pid, then SIGKILL
 * if it has not ended within 30 s, and is waited for; a shutdown hook does the same if this JVM ends
 * first, and a stand-in also ends when its standard input (this process's pipe) closes.
 *
 * <p>Thread-safety: one owner; {@link #close} may run from the shutdown hook as well.
 */
final class LiveProcess implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long READY_SECONDS = 120;

    private final String name;
    private final Process process;
    private final JsonNode ready;
    private final Path log;
    private final Thread hook;

    private LiveProcess(String name, Process process, JsonNode ready, Path log) {
        this.name = name;
        this.process = process;
        this.ready = ready;
        this.log = log;
        this.hook = new Thread(this::stop, "kvprefix-live-stop-" + name);
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** The command line that runs {@code kvprefix ARGS} in a JVM like this one with a heap of {@code heap}. */
    static List<String> command(String heap, List<String> args) {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow",
                "-Xmx" + heap,
                "-cp",
                System.getProperty("java.class.path"),
                Main.class.getName()));
        cmd.addAll(args);
        return cmd;
    }

    /**
     * Starts {@code kvprefix ARGS} with its standard error in {@code log} and waits for its READY line.
     *
     * @throws IOException if it cannot start, or ends or stays silent without one (with its log's tail)
     */
    static LiveProcess start(String name, String heap, List<String> args, Path log) throws IOException {
        Files.createDirectories(log.toAbsolutePath().getParent());
        Process p = new ProcessBuilder(command(heap, args))
                .redirectError(log.toFile())
                .start();
        CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> readyLine(p));
        try {
            String l = line.get(READY_SECONDS, TimeUnit.SECONDS);
            if (l == null) {
                throw new IOException(name + " ended without its READY line: " + tail(log));
            }
            return new LiveProcess(name, p, JSON.readTree(l.substring("READY ".length())), log);
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException(name + ": interrupted while starting", e);
        } catch (ExecutionException | TimeoutException | IOException | RuntimeException e) {
            p.destroyForcibly();
            throw e instanceof IOException io ? io : new IOException(name + " did not start: " + tail(log), e);
        }
    }

    private static String readyLine(Process p) {
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            for (String l = out.readLine(); l != null; l = out.readLine()) {
                if (l.startsWith("READY {")) {
                    // keep draining standard output so the child never blocks on a full pipe
                    Thread.ofVirtual().start(() -> drain(out));
                    return l;
                }
            }
            return null;
        } catch (IOException e) {
            return null;
        }
    }

    private static void drain(BufferedReader out) {
        try {
            while (out.readLine() != null) {
                // discarded: the child's later lines are its summary, which the log has too
            }
        } catch (IOException ignored) {
            // the child ended
        }
    }

    /** The last lines of a log, for a message. */
    static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join(" | ", lines.subList(Math.max(0, lines.size() - 5), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    /** The JSON object of its READY line. */
    JsonNode ready() {
        return ready;
    }

    /** Its process id. */
    long pid() {
        return process.pid();
    }

    /** Whether it is still running. */
    boolean alive() {
        return process.isAlive();
    }

    /** Where its standard error goes. */
    Path log() {
        return log;
    }

    private void stop() {
        process.destroy();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(30, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        stop();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException ignored) {
            // the JVM is shutting down: the hook stops it as well
        }
    }

    @Override
    public String toString() {
        return name + " (pid " + process.pid() + ")";
    }
}
