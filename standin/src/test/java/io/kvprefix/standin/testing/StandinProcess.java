package io.kvprefix.standin.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvprefix.service.EngineSpec;
import io.kvprefix.standin.ChildProcess;
import io.kvprefix.standin.Standin;
import io.kvprefix.standin.StandinSettings;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * A stand-in engine process ({@link Main}, {@code kvprefix standin}'s lifecycle) started by a test: its
 * engines' worker ids and ports from its {@code READY} line, their {@code --engine} specs for a router,
 * and a way to kill it (SIGKILL) the way an engine dies. Lines after {@code READY} are read and dropped,
 * so the pipe never fills. Closed, it is stopped and waited for; it is never left running
 * ({@link ChildProcess} starts and stops it). The one home
 * of this helper for the server, epp and spring tests (the standin module's test-jar).
 *
 * <p>Thread-safety: not thread-safe; one test uses one process.
 */
public final class StandinProcess implements AutoCloseable {
    /** The model name the stand-in serves. */
    public static final String MODEL = "kvprefix-standin";

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    /** One engine of the process. */
    public record Engine(long worker, int http, int events, int replay) {
        /** The router's spec: the URL, the events and the replay socket. */
        public EngineSpec spec() {
            return EngineSpec.parse(specText());
        }

        /** {@link #spec()} as text, as a property or an option gives it. */
        public String specText() {
            return worker + "=" + url() + ",events=tcp://127.0.0.1:" + events + ",replay=tcp://127.0.0.1:" + replay;
        }

        /** The router's spec without the event sockets. */
        public EngineSpec httpOnly() {
            return EngineSpec.parse(worker + "=" + url());
        }

        /** {@code 127.0.0.1:PORT}, as a gateway names it. */
        public String endpoint() {
            return "127.0.0.1:" + http;
        }

        public String url() {
            return "http://" + endpoint();
        }
    }

    private final ChildProcess process;
    private final List<Engine> engines;
    private final List<String> args;

    private StandinProcess(ChildProcess process, List<Engine> engines, List<String> args) {
        this.process = process;
        this.engines = engines;
        this.args = args;
    }

    /** Starts a stand-in process with {@code args} (the options {@link Main} takes) and waits for its READY line. */
    public static StandinProcess start(String... args) throws IOException {
        ChildProcess p = ChildProcess.start(
                "the stand-in", new ProcessBuilder(command(args)).redirectError(ProcessBuilder.Redirect.INHERIT));
        try {
            // a test class path with Spring's logback logs the tokenizer library's start to standard output
            String line = p.awaitReady(Duration.ofSeconds(120));
            if (line == null) {
                throw new IOException("the stand-in did not start: its output was " + p.linesBeforeReady());
            }
            List<Engine> engines = new ArrayList<>();
            for (JsonNode e : JSON.readTree(line.substring("READY ".length())).get("engines")) {
                engines.add(new Engine(
                        e.get("worker").asLong(),
                        e.get("http").asInt(),
                        e.get("events").asInt(),
                        e.get("replay").asInt()));
            }
            return new StandinProcess(p, List.copyOf(engines), List.of(args));
        } catch (InterruptedException e) {
            p.stop(Duration.ZERO);
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while the stand-in started", e);
        } catch (IOException | RuntimeException e) {
            p.stop(Duration.ZERO);
            throw e;
        }
    }

    /** The command line of a stand-in process on this JVM's class path: {@link Main} with {@code args}. */
    public static List<String> command(String... args) {
        return ChildProcess.javaCommand("256m", Main.class.getName(), List.of(args));
    }

    /** A new process with the same options, on the ports this one had (after {@link #kill()}). */
    public StandinProcess restartOnSamePorts() throws IOException {
        List<String> a = new ArrayList<>(args);
        Engine first = engines.get(0);
        a.addAll(List.of(
                "--port", Integer.toString(first.http()),
                "--events-port", Integer.toString(first.events()),
                "--replay-port", Integer.toString(first.replay())));
        return start(a.toArray(String[]::new));
    }

    public List<Engine> engines() {
        return engines;
    }

    public Engine engine(int i) {
        return engines.get(i);
    }

    /** Every engine's {@link Engine#spec()}. */
    public List<EngineSpec> specs() {
        return engines.stream().map(Engine::spec).toList();
    }

    /**
     * Until the router whose Prometheus text {@code scrape} gives has applied a live batch of every
     * engine of this process: a PUB socket drops what it sends before the subscription reaches it (ZMQ's
     * late joiner), and a lost last batch is only found, and replayed, when a later one arrives, so the
     * events of a test's one request could never reach the index. Prefix-cache resets of the still empty
     * engines (an AllBlocksCleared each, nothing to change) are sent until the router's
     * {@code kvprefix_subscriber_last_sequence} of each is 0 or more (docs/METRICS.md section 1).
     */
    public void awaitLive(Supplier<String> scrape) throws IOException, InterruptedException {
        awaitLive(
                e -> lastSequence(
                        scrape.get(),
                        "kvprefix_subscriber_last_sequence{engine=\"tcp://127.0.0.1:" + e.events() + "\""),
                () -> scrape.get());
    }

    /**
     * {@link #awaitLive(Supplier)} for a subscriber whose last sequence applied of an engine
     * {@code lastSequence} gives (-1: none); {@code state} says what it saw when the wait times out.
     */
    public void awaitLive(ToDoubleFunction<Engine> lastSequence, Supplier<String> state)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        for (Engine e : engines) {
            while (lastSequence.applyAsDouble(e) < 0) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError(
                            "no live batch of engine " + e.worker() + " reached the subscriber:\n" + state.get());
                }
                HttpResponse<String> r = HTTP.send(
                        HttpRequest.newBuilder(URI.create(e.url() + "/reset_prefix_cache"))
                                .timeout(Duration.ofSeconds(30))
                                .POST(HttpRequest.BodyPublishers.noBody())
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() != 200) {
                    throw new AssertionError("/reset_prefix_cache answered " + r.statusCode() + ": " + r.body());
                }
                Thread.sleep(50);
            }
        }
    }

    /** The value of the first sample starting with {@code series} (name and first label), -1 if none. */
    private static double lastSequence(String text, String series) {
        for (String l : text.split("\n")) {
            if (l.startsWith(series)) {
                return Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1));
            }
        }
        return -1;
    }

    /** SIGKILL, as an engine that dies; waits until the process is gone. */
    public void kill() throws InterruptedException {
        process.kill();
    }

    public boolean alive() {
        return process.alive();
    }

    /** SIGTERM by its process id, then SIGKILL if it has not ended within 30 s ({@link ChildProcess#close}). */
    @Override
    public void close() {
        process.close();
    }

    /**
     * The child process ({@code kvprefix standin} is the command line's, a module the others cannot
     * depend on): the options the tests use, mapped to {@link StandinSettings}, then {@link Standin#run},
     * the lifecycle the command runs (one {@code READY} line, stop on SIGTERM or when standard input
     * closes).
     *
     * <p>Thread-safety: a process entry point.
     */
    public static final class Main {
        private Main() {}

        public static void main(String[] args) throws InterruptedException {
            StandinSettings.Builder b = StandinSettings.builder();
            int http = 0;
            int events = 0;
            int replay = 0;
            for (int i = 0; i < args.length; i++) {
                String v = i + 1 < args.length ? args[i + 1] : null;
                switch (args[i]) {
                    case "--engines" -> b.engines(Integer.parseInt(v));
                    case "--worker-id" -> b.firstWorker(Long.parseLong(v));
                    case "--time-scale" -> b.timeScale(Double.parseDouble(v));
                    case "--model" -> b.model(v);
                    case "--block-size" -> b.blockSize(Integer.parseInt(v));
                    case "--port" -> http = Integer.parseInt(v);
                    case "--events-port" -> events = Integer.parseInt(v);
                    case "--replay-port" -> replay = Integer.parseInt(v);
                    case "--tokenizer" -> b.tokenizer(Path.of(v));
                    case "--speeds" -> {
                        String[] s = v.split(",");
                        b.speeds(Double.parseDouble(s[0]), Double.parseDouble(s[1]));
                    }
                    case "--enable-prompt-tokens-details" -> {
                        b.promptTokensDetails(true);
                        i--;
                    }
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
                i++;
            }
            b.ports(http, events, replay);
            Standin.run(b.build(), System.out);
        }
    }
}
