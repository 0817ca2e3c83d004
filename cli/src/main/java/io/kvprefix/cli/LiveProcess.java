package io.kvprefix.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvprefix.standin.ChildProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

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
    private final ChildProcess process;
    private final String readyLine;
    private final JsonNode ready;
    private final Path log;
    private final Thread hook;

    private LiveProcess(String name, ChildProcess process, String readyLine, Path log) throws IOException {
        this.name = name;
        this.process = process;
        this.readyLine = readyLine;
        this.ready = JSON.readTree(readyLine.substring("READY ".length()));
        this.log = log;
        this.hook = new Thread(this::stop, "kvprefix-live-stop-" + name);
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /**
     * The command line that runs {@code kvprefix ARGS} in a JVM like this one with a heap of {@code heap}
     * (null: the JVM's default).
     */
    static List<String> command(String heap, List<String> args) {
        return ChildProcess.javaCommand(heap, Main.class.getName(), args);
    }

    /**
     * Starts {@code kvprefix ARGS} with its standard error in {@code log} and waits for its READY line.
     *
     * @throws IOException if it cannot start, or ends or stays silent without one (with its log's tail)
     */
    static LiveProcess start(String name, String heap, List<String> args, Path log) throws IOException {
        Files.createDirectories(log.toAbsolutePath().getParent());
        ChildProcess p = ChildProcess.start(name, new ProcessBuilder(command(heap, args)).redirectError(log.toFile()));
        String l;
        try {
            l = p.awaitReady(Duration.ofSeconds(READY_SECONDS));
        } catch (InterruptedException e) {
            p.stop(Duration.ZERO);
            Thread.currentThread().interrupt();
            throw new IOException(name + ": interrupted while starting", e);
        } catch (IOException e) {
            p.stop(Duration.ZERO);
            throw new IOException(name + " did not start: " + tail(log), e);
        }
        if (l == null) {
            p.stop(Duration.ZERO);
            throw new IOException(name + " ended without its READY line: " + tail(log));
        }
        try {
            return new LiveProcess(name, p, l, log);
        } catch (IOException | RuntimeException e) {
            p.stop(Duration.ZERO);
            throw e;
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

    /** Its READY line, whole. */
    String readyLine() {
        return readyLine;
    }

    /** The lines it printed on standard output before its READY line. */
    List<String> linesBeforeReady() {
        return process.linesBeforeReady();
    }

    /** Its process id. */
    long pid() {
        return process.pid();
    }

    /** Whether it is still running. */
    boolean alive() {
        return process.alive();
    }

    /** Where its standard error goes. */
    Path log() {
        return log;
    }

    /** SIGTERM by its pid, up to {@code grace} to end, then SIGKILL; its exit status or {@link ChildProcess#KILLED}. */
    int stop(Duration grace) {
        return process.stop(grace);
    }

    private void stop() {
        process.stop(Duration.ofSeconds(30));
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
        return process.toString();
    }
}
