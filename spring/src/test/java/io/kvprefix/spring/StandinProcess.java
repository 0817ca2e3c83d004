package io.kvprefix.spring;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvprefix.service.EngineSpec;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A stand-in engine process ({@link StandinLauncher}) started by a test: its engines' worker ids and
 * ports from its {@code READY} line, their {@code --engine} specs for the router, and a way to kill it
 * (SIGKILL) the way an engine dies. Closed, it is stopped and waited for; it is never left running.
 */
final class StandinProcess implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** One engine of the process. */
    record Engine(long worker, int http, int events, int replay) {
        /** The router's spec: the URL, the events and the replay socket. */
        EngineSpec spec() {
            return EngineSpec.parse(worker + "=http://127.0.0.1:" + http + ",events=tcp://127.0.0.1:" + events
                    + ",replay=tcp://127.0.0.1:" + replay);
        }

        /** The router's spec without the event sockets. */
        EngineSpec httpOnly() {
            return EngineSpec.parse(worker + "=http://127.0.0.1:" + http);
        }

        String url() {
            return "http://127.0.0.1:" + http;
        }
    }

    private final Process process;
    private final List<Engine> engines;
    private final List<String> args;

    private StandinProcess(Process process, List<Engine> engines, List<String> args) {
        this.process = process;
        this.engines = engines;
        this.args = args;
    }

    /** Starts a stand-in process with {@code args} (its options) and waits for its READY line. */
    static StandinProcess start(String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow",
                "-Xmx256m",
                "-cp",
                System.getProperty("java.class.path"),
                StandinLauncher.class.getName()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            String line = out.readLine();
            // the test class path has Spring's logback, which logs the tokenizer library's start to standard output
            for (int skipped = 0; line != null && !line.startsWith("READY {") && skipped < 1000; skipped++) {
                line = out.readLine();
            }
            if (line == null || !line.startsWith("READY {")) {
                throw new IOException("the stand-in did not start: its first line is " + line);
            }
            List<Engine> engines = new ArrayList<>();
            for (JsonNode e : JSON.readTree(line.substring("READY ".length())).get("engines")) {
                engines.add(new Engine(
                        e.get("worker").asLong(),
                        e.get("http").asInt(),
                        e.get("events").asInt(),
                        e.get("replay").asInt()));
            }
            Thread drain = new Thread(
                    () -> {
                        try {
                            while (out.readLine() != null) {
                                // log lines after READY: read so that the pipe never fills and blocks the stand-in
                            }
                        } catch (IOException ignored) {
                            // the process ended
                        }
                    },
                    "standin-stdout");
            drain.setDaemon(true);
            drain.start();
            return new StandinProcess(p, List.copyOf(engines), List.of(args));
        } catch (IOException | RuntimeException e) {
            p.destroyForcibly();
            throw e;
        }
    }

    /** A new process with the same options, on the ports this one had (after {@link #kill()}). */
    StandinProcess restartOnSamePorts() throws IOException {
        List<String> a = new ArrayList<>(args);
        Engine first = engines.get(0);
        a.addAll(List.of(
                "--port", Integer.toString(first.http()),
                "--events-port", Integer.toString(first.events()),
                "--replay-port", Integer.toString(first.replay())));
        return start(a.toArray(String[]::new));
    }

    List<Engine> engines() {
        return engines;
    }

    Engine engine(int i) {
        return engines.get(i);
    }

    /** SIGKILL, as an engine that dies; waits until the process is gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(60, TimeUnit.SECONDS);
    }

    boolean alive() {
        return process.isAlive();
    }

    @Override
    public void close() {
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
}
