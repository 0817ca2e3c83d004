package io.kvprefix.nats.testing;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real {@code nats-server} (Debian's package, 2.9.10 on this machine) in another process, with
 * JetStream on, its file store in a folder of the test's, on a free loopback port: {@code nats-server
 * -js -sd DIR -a 127.0.0.1 -p PORT}. {@link #restart()} stops it and starts it again on the same port
 * and store (what a server restart looks like to its clients). {@link #close()} stops it by its
 * process id (SIGTERM, then SIGKILL if it lingers); use it in try-with-resources so a failing test
 * stops it too.
 *
 * <p>Thread-safety: not thread-safe; one test drives one server.
 */
public final class NatsServer implements AutoCloseable {
    /** Where Debian installs the server ({@code apt-get install nats-server}); /usr/sbin is not on every PATH. */
    private static final List<String> CANDIDATES = List.of("/usr/sbin/nats-server", "/usr/bin/nats-server");

    private final Path binary;
    private final Path storeDir;
    private final Path log;
    private final int port;
    private Process process;

    /** Starts a server whose store and log live under {@code dir}. */
    public NatsServer(Path dir) throws IOException, InterruptedException {
        this.binary = binary();
        this.storeDir = Files.createDirectories(dir.resolve("jetstream"));
        this.log = dir.resolve("nats-server.log");
        this.port = freePort();
        start();
    }

    /** The server's executable; fails with how to install it if there is none. */
    public static Path binary() {
        for (String c : CANDIDATES) {
            Path p = Path.of(c);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        for (String d : System.getenv().getOrDefault("PATH", "").split(":")) {
            Path p = Path.of(d.isEmpty() ? "." : d, "nats-server");
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        throw new AssertionError("the fleet tests run a real nats-server and there is none (looked in " + CANDIDATES
                + " and PATH): run ./kvprefix setup as root, or apt-get install -y nats-server");
    }

    /** {@code nats://127.0.0.1:PORT}. */
    public String url() {
        return "nats://127.0.0.1:" + port;
    }

    /** The port it listens on (the same across restarts). */
    public int port() {
        return port;
    }

    /** The process id of the running server. */
    public long pid() {
        return process.pid();
    }

    /** Stops the server (SIGTERM by process id) and starts it again on the same port and store. */
    public void restart() throws IOException, InterruptedException {
        stop();
        start();
    }

    /** Stops the server, empties its store and starts it again on the same port: every stream is gone. */
    public void restartWithoutStore() throws IOException, InterruptedException {
        stop();
        try (var files = Files.walk(storeDir)) {
            for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                if (!p.equals(storeDir)) {
                    Files.delete(p);
                }
            }
        }
        start();
    }

    /** Stops the server by its process id; {@link #start()} brings it back. Idempotent. */
    public void stop() throws InterruptedException {
        if (process == null) {
            return;
        }
        ProcessHandle h = process.toHandle();
        h.destroy(); // SIGTERM: the server flushes its store and exits
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            h.destroyForcibly();
            process.waitFor(5, TimeUnit.SECONDS);
        }
        process = null;
    }

    /** Kills the server with SIGKILL by its process id (no flush, no goodbye to clients); {@link #start()} brings it back. */
    public void kill() throws InterruptedException {
        if (process == null) {
            return;
        }
        process.toHandle().destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
        process = null;
    }

    /** Starts the server (after {@link #stop()}) and waits until it accepts clients with JetStream ready. */
    public void start() throws IOException, InterruptedException {
        if (process != null) {
            return;
        }
        Files.deleteIfExists(log);
        process = new ProcessBuilder(
                        binary.toString(),
                        "-js",
                        "-sd",
                        storeDir.toString(),
                        "-a",
                        "127.0.0.1",
                        "-p",
                        Integer.toString(port),
                        "-n",
                        "kvprefix-test-" + port)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                String out = logText();
                process = null;
                throw new AssertionError("nats-server exited at start; its log:\n" + out);
            }
            if (logText().contains("Server is ready") && answersInfo()) {
                return;
            }
            Thread.sleep(20);
        }
        String out = logText();
        close();
        throw new AssertionError("nats-server did not get ready within 20 s; its log:\n" + out);
    }

    /** The server's log so far. */
    public String logText() {
        try {
            return Files.exists(log) ? Files.readString(log) : "";
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }

    private boolean answersInfo() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 500);
            s.setSoTimeout(500);
            InputStream in = s.getInputStream();
            byte[] b = new byte[4];
            int n = in.readNBytes(b, 0, 4);
            return n == 4 && new String(b, StandardCharsets.US_ASCII).equals("INFO");
        } catch (IOException e) {
            return false;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress("127.0.0.1", 0));
            return s.getLocalPort();
        }
    }

    @Override
    public void close() {
        try {
            stop();
        } catch (InterruptedException e) {
            if (process != null) {
                process.toHandle().destroyForcibly();
            }
            Thread.currentThread().interrupt();
        }
    }
}
