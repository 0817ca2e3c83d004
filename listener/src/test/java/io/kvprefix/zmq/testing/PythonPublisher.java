package io.kvprefix.zmq.testing;

import io.kvprefix.testing.RepoPaths;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Runs {@code listener/src/test/python/vllm_publisher.py} in another process: a vLLM-shaped KV-event
 * publisher with replay sockets, bound to free loopback ports it reports back.
 *
 * <p>Thread-safety: not thread-safe; one test uses one publisher.
 */
public final class PythonPublisher implements AutoCloseable {
    /** Debian's interpreter, where python3-zmq and python3-msgpack install (a pyenv python3 on PATH lacks them). */
    public static final String PYTHON = "/usr/bin/python3";

    private static final Pattern ENGINE =
            Pattern.compile("\"([^\"]+)\": \\{\"pub\": (\\d+), \"replay\": (\\d+|null), \"topic\": \"([^\"]*)\""
                    + ", \"snapshot\": (\\d+|null)}");
    private static final Pattern DONE = Pattern.compile("\"([^\"]+)\": (-?\\d+)");

    /** Where one engine of the script listens. */
    public record Ports(int pub, Integer replay, String topic, Integer snapshot) {
        public String pubEndpoint() {
            return "tcp://127.0.0.1:" + pub;
        }

        public String replayEndpoint() {
            return replay == null ? null : "tcp://127.0.0.1:" + replay;
        }

        /** The snapshot endpoint (a spec's {@code "snapshot": true}), or null. */
        public String snapshotEndpoint() {
            return snapshot == null ? null : "tcp://127.0.0.1:" + snapshot;
        }
    }

    private final Process process;
    private final Path stderr;
    private final Path truth;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final Thread reader;
    private final Map<String, Ports> ports = new LinkedHashMap<>();
    /** The DONE line, once {@link #isDone} has seen it. */
    private String doneLine;

    /**
     * Starts the script with {@code specJson} (see the script's doc) in {@code dir} and waits for its ports.
     *
     * @throws AssertionError with a clear message if Debian's python3-zmq / python3-msgpack are missing
     */
    public PythonPublisher(Path dir, String specJson) throws IOException, InterruptedException {
        requirePythonModules();
        Path script = RepoPaths.root().resolve("listener/src/test/python/vllm_publisher.py");
        Path spec = dir.resolve("spec.json");
        Files.writeString(spec, specJson);
        truth = dir.resolve("truth.txt");
        stderr = dir.resolve("publisher.stderr");
        process = new ProcessBuilder(PYTHON, script.toString(), spec.toString(), truth.toString())
                .redirectError(stderr.toFile())
                .start();
        reader = new Thread(
                () -> {
                    try (BufferedReader r = new BufferedReader(
                            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                        for (String l; (l = r.readLine()) != null; ) {
                            lines.add(l);
                        }
                    } catch (IOException ignored) {
                        // the process ended
                    }
                },
                "python-publisher-stdout");
        reader.setDaemon(true);
        reader.start();
        String ready = expectLine("READY ", 20);
        Matcher m = ENGINE.matcher(ready);
        while (m.find()) {
            ports.put(
                    m.group(1),
                    new Ports(
                            Integer.parseInt(m.group(2)),
                            m.group(3).equals("null") ? null : Integer.valueOf(m.group(3)),
                            m.group(4),
                            m.group(5).equals("null") ? null : Integer.valueOf(m.group(5))));
        }
        if (ports.isEmpty()) {
            throw new AssertionError("publisher's READY line has no engines: " + ready);
        }
    }

    /** Fails with a clear message (never a silent skip) if the Python modules the publisher needs are missing. */
    public static void requirePythonModules() throws IOException, InterruptedException {
        String why;
        try {
            Process p = new ProcessBuilder(PYTHON, "-c", "import zmq, msgpack")
                    .redirectErrorStream(true)
                    .start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (p.waitFor() == 0) {
                return;
            }
            why = out.lines().reduce((a, b) -> b).orElse("exit " + p.exitValue()); // the traceback's last line
        } catch (IOException e) {
            why = e.getMessage();
        }
        throw new AssertionError("the listener's integration tests run a real publisher in Python and need Debian's "
                + "python3-zmq and python3-msgpack for " + PYTHON + ": run ./kvprefix setup as root, or "
                + "apt-get install -y python3-zmq python3-msgpack (" + why + ")");
    }

    /** The ports of the engine named {@code name} in the spec. */
    public Ports ports(String name) {
        Ports p = ports.get(name);
        if (p == null) {
            throw new IllegalArgumentException("no engine " + name + " in " + ports.keySet());
        }
        return p;
    }

    /** Waits for the publisher to have published everything; returns each engine's last sequence number. */
    public Map<String, Long> awaitDone(long timeoutSeconds) throws InterruptedException, IOException {
        String done = doneLine != null ? doneLine : expectLine("DONE ", timeoutSeconds);
        Map<String, Long> out = new LinkedHashMap<>();
        Matcher m = DONE.matcher(done);
        while (m.find()) {
            out.put(m.group(1), Long.parseLong(m.group(2)));
        }
        return out;
    }

    /** True once the publisher has said it published everything (never blocks). */
    public boolean isDone() {
        for (String l; doneLine == null && (l = lines.poll()) != null; ) {
            if (l.startsWith("DONE ")) {
                doneLine = l.substring("DONE ".length());
            }
        }
        return doneLine != null;
    }

    /** The truth file (valid after {@link #awaitDone}). */
    public Path truth() {
        return truth;
    }

    /** What the script wrote to standard error so far. */
    public String stderr() {
        try {
            return Files.exists(stderr) ? Files.readString(stderr) : "";
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }

    private String expectLine(String prefix, long timeoutSeconds) throws InterruptedException, IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        while (System.nanoTime() < deadline) {
            String l = lines.poll(100, TimeUnit.MILLISECONDS);
            if (l != null && l.startsWith(prefix)) {
                return l.substring(prefix.length());
            }
            if (l == null && !process.isAlive() && lines.isEmpty()) {
                throw new AssertionError("publisher exited (" + process.exitValue() + ") before '" + prefix.strip()
                        + "'; its stderr:\n" + stderr());
            }
        }
        throw new AssertionError("publisher did not say '" + prefix.strip() + "' within " + timeoutSeconds
                + " s; its stderr:\n" + stderr());
    }

    /** Closes the script's standard input (it then exits) and waits for it; kills it if it lingers. */
    @Override
    public void close() {
        try (OutputStream in = process.getOutputStream()) {
            in.flush();
        } catch (IOException ignored) {
            // already gone
        }
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(5, TimeUnit.SECONDS);
            }
            reader.join(5000);
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
