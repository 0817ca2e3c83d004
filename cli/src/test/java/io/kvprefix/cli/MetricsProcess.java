package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.testing.RepoPaths;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * {@code kvprefix COMMAND --metrics-port 0 --metrics-host 127.0.0.1 ARGS} in its own JVM (the launcher,
 * on this JVM's class path), found by its {@code metrics on} line on standard error, and the scrape
 * helpers of its tests: a GET with the JDK's client, a scrape's counter lines, one sample's value. The
 * one home of these for {@link ListenMetricsTest} and {@link RelayMetricsTest}. Closed, it is killed.
 */
final class MetricsProcess implements AutoCloseable {
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    final Process process;
    /** {@code http://127.0.0.1:PORT}, where /metrics and /health/ready are. */
    final String base;
    /** Every line of standard error so far, the metrics line included. */
    final BlockingQueue<String> err = new LinkedBlockingQueue<>();

    /** Starts {@code kvprefix command} with the metrics options, {@code args}, and waits for its metrics line. */
    MetricsProcess(String command, List<String> args) throws IOException, InterruptedException {
        String javaHome = Path.of(ProcessHandle.current().info().command().orElseThrow())
                .getParent()
                .getParent()
                .toString();
        List<String> cmd = new ArrayList<>(List.of(
                RepoPaths.root().resolve("kvprefix").toString(),
                command,
                "--metrics-port",
                "0",
                "--metrics-host",
                "127.0.0.1"));
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("JAVA_HOME", javaHome);
        pb.environment().put("KVPREFIX_CLASSPATH", System.getProperty("java.class.path"));
        process = pb.start();
        Thread t = new Thread(this::readErrors, command + "-stderr");
        t.setDaemon(true);
        t.start();
        String prefix = "kvprefix " + command + ": metrics on ";
        String url = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        List<String> lines = new ArrayList<>();
        while (url == null && System.nanoTime() < deadline) {
            String l = err.poll(100, TimeUnit.MILLISECONDS);
            if (l != null) {
                lines.add(l);
                if (l.startsWith(prefix + "http://")) {
                    url = l.substring(prefix.length());
                }
            }
        }
        assertNotNull(url, "no metrics line from " + command + ": " + lines);
        base = url.substring(0, url.length() - "/metrics".length());
    }

    private void readErrors() {
        try (BufferedReader r =
                new BufferedReader(new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
            for (String l; (l = r.readLine()) != null; ) {
                err.add(l);
            }
        } catch (IOException ignored) {
            // the process ended
        }
    }

    /** A GET of {@code path} (e.g. {@code /metrics}) on this process's metrics endpoint. */
    HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return get(URI.create(base + path));
    }

    /** SIGTERM, as a service manager stops it; returns the last line of standard output (the JSON stats). */
    String stop() throws IOException, InterruptedException {
        List<String> lines = stopAndReadAll();
        return lines.get(lines.size() - 1);
    }

    /** SIGTERM; every line of standard output (for listen: the answers to --queries, then the JSON stats). */
    List<String> stopAndReadAll() throws IOException, InterruptedException {
        process.toHandle().destroy();
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "the process did not stop");
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        List<String> lines = out.lines().toList();
        assertFalse(lines.isEmpty(), "no stats line; stderr: " + err);
        return lines;
    }

    @Override
    public void close() {
        process.destroyForcibly();
    }

    static HttpResponse<String> get(URI uri) throws IOException, InterruptedException {
        return HTTP.send(
                HttpRequest.newBuilder(uri)
                        .timeout(Duration.ofSeconds(10))
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The counter lines of a scrape whose names start with {@code prefix}, to tell when two scrapes agree. */
    static String counters(String text, String prefix) {
        StringBuilder sb = new StringBuilder();
        for (String l : text.split("\n")) {
            if (l.startsWith(prefix) && l.contains("_total{")) {
                sb.append(l).append('\n');
            }
        }
        return sb.toString();
    }

    /** The value of the first sample named {@code name} in a scrape, with or without labels (NaN if absent). */
    static double value(String text, String name) {
        for (String l : text.split("\n")) {
            if (l.startsWith(name + "{") || l.startsWith(name + " ")) {
                return Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1));
            }
        }
        return Double.NaN;
    }

    /** The value of the sample {@code name} whose labels hold the value {@code label} (NaN if none). */
    static double value(String text, String name, String label) {
        for (String l : text.split("\n")) {
            if (l.startsWith(name + "{") && l.contains("=\"" + label + "\"")) {
                return Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1));
            }
        }
        return Double.NaN;
    }
}
