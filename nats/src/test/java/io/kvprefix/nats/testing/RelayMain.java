package io.kvprefix.nats.testing;

import io.kvprefix.nats.EventRelay;
import io.kvprefix.nats.FleetConnection;
import io.kvprefix.nats.FleetStream;
import io.kvprefix.zmq.EngineEndpoint;
import io.nats.client.Connection;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A relay in a process of its own, for the tests that kill it: {@code RelayMain URL STREAM ENGINE...}
 * relays the engines (in {@code --engine} form) until its standard input closes, prints
 * {@code READY} once they are added and its stats JSON at the end. {@link #start} runs it in a new JVM
 * on this JVM's class path; {@link Handle#kill()} sends it SIGKILL.
 *
 * <p>Thread-safety: not thread-safe.
 */
public final class RelayMain {
    private RelayMain() {}

    public static void main(String[] args) throws Exception {
        Connection c = FleetConnection.open(args[0], "test-relay");
        EventRelay relay = EventRelay.builder(c, FleetStream.named(args[1])).build();
        try {
            for (String spec : Arrays.copyOfRange(args, 2, args.length)) {
                relay.addEngine(EngineEndpoint.parse(spec));
            }
            System.out.println("READY");
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            while (in.readLine() != null) {
                // run until standard input closes
            }
            relay.close();
            System.out.println(relay.stats().toJson());
        } finally {
            relay.close();
            c.close();
        }
    }

    /** A running relay process. */
    public static final class Handle implements AutoCloseable {
        private final Process process;
        private final Path log;

        private Handle(Process process, Path log) {
            this.process = process;
            this.log = log;
        }

        /** SIGKILL, by process id: no chance to flush or say goodbye. */
        public void kill() throws InterruptedException {
            process.toHandle().destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }

        /** Closes its standard input (it drains and exits) and returns its last line (the stats JSON). */
        public String stop() throws Exception {
            process.getOutputStream().close();
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("relay did not stop; its log:\n" + java.nio.file.Files.readString(log));
            }
            List<String> lines = java.nio.file.Files.readAllLines(log);
            return lines.isEmpty() ? "" : lines.get(lines.size() - 1);
        }

        public String log() throws java.io.IOException {
            return java.nio.file.Files.readString(log);
        }

        @Override
        public void close() {
            if (process.isAlive()) {
                process.toHandle().destroyForcibly();
            }
        }
    }

    /** Starts a relay JVM whose output goes to {@code log}; returns once it said READY. */
    public static Handle start(Path log, String url, String stream, List<String> engines) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow",
                "-cp",
                System.getProperty("java.class.path"),
                RelayMain.class.getName(),
                url,
                stream));
        cmd.addAll(engines);
        Process p = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        Handle h = new Handle(p, log);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            if (java.nio.file.Files.readString(log).contains("READY")) {
                return h;
            }
            if (!p.isAlive()) {
                throw new AssertionError("relay exited; its log:\n" + h.log());
            }
            Thread.sleep(20);
        }
        h.close();
        throw new AssertionError("relay not ready within 30 s; its log:\n" + h.log());
    }
}
