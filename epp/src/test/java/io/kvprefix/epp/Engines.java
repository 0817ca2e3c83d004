package io.kvprefix.epp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvprefix.service.EngineSpec;
import io.kvprefix.standin.Standin;
import io.kvprefix.standin.StandinSettings;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Stand-in vLLM engines in a child process ({@code kvprefix standin}'s lifecycle, {@link Standin#run}):
 * real HTTP servers and real KV events over ZMQ in vLLM's format, so the picker's index is fed as in a
 * cluster. Closed, the process is stopped and waited for.
 */
final class Engines implements AutoCloseable {
    static final String MODEL = "kvprefix-standin";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** One engine of the process. */
    record Engine(long worker, int http, int events, int replay) {
        /** The picker's engine: the endpoint the gateway is told, with the event sockets. */
        EngineSpec spec() {
            return EngineSpec.parse(worker + "=http://127.0.0.1:" + http + ",events=tcp://127.0.0.1:" + events
                    + ",replay=tcp://127.0.0.1:" + replay);
        }

        /** {@code 127.0.0.1:PORT}, as the gateway names it. */
        String endpoint() {
            return "127.0.0.1:" + http;
        }

        String url() {
            return "http://127.0.0.1:" + http;
        }
    }

    private final Process process;
    private final List<Engine> engines;

    private Engines(Process process, List<Engine> engines) {
        this.process = process;
        this.engines = engines;
    }

    /** Starts the process with {@code args} and waits for its READY line. */
    static Engines start(String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow",
                "-Xmx256m",
                "-cp",
                System.getProperty("java.class.path"),
                Main.class.getName()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            String line = out.readLine();
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
            return new Engines(p, List.copyOf(engines));
        } catch (IOException | RuntimeException e) {
            p.destroyForcibly();
            throw e;
        }
    }

    List<Engine> all() {
        return engines;
    }

    Engine get(int i) {
        return engines.get(i);
    }

    List<EngineSpec> specs() {
        return engines.stream().map(Engine::spec).toList();
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

    /** The child process: the options the tests use, mapped to {@link StandinSettings}. */
    public static final class Main {
        private Main() {}

        public static void main(String[] args) throws InterruptedException {
            StandinSettings.Builder b = StandinSettings.builder();
            int http = 0;
            for (int i = 0; i < args.length; i += 2) {
                String v = args[i + 1];
                switch (args[i]) {
                    case "--engines" -> b.engines(Integer.parseInt(v));
                    case "--worker-id" -> b.firstWorker(Long.parseLong(v));
                    case "--time-scale" -> b.timeScale(Double.parseDouble(v));
                    case "--port" -> http = Integer.parseInt(v);
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            b.ports(http, 0, 0);
            Standin.run(b.build(), System.out);
        }
    }
}
