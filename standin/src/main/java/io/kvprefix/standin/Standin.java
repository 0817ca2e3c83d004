package io.kvprefix.standin;

import io.kvprefix.Worker;
import io.kvprefix.simulator.EngineSettings;
import io.kvprefix.standin.internal.ApiRequests;
import io.kvprefix.standin.internal.EventEncoding;
import io.kvprefix.standin.internal.EventPublisher;
import io.kvprefix.standin.internal.OpenAiServer;
import io.kvprefix.standin.internal.PromptSource;
import io.kvprefix.standin.internal.RealTimeEngine;
import io.kvprefix.standin.internal.TokenizerSource;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.zeromq.ZContext;

/**
 * A running stand-in process: {@link StandinSettings#engines()} independent vLLM-like engines, each
 * with its own HTTP port (vLLM's OpenAI API), KV-event PUB port and replay ROUTER port, on the
 * simulator's engine model in real time. The package description has what each endpoint and socket
 * does and which vLLM source it follows.
 *
 * <pre>{@code
 * try (Standin s = Standin.start(StandinSettings.builder().engines(2).build())) {
 *     System.out.println(s.readyLine()); // READY {"engines":[{"worker":1,"http":...,"events":...,"replay":...}, ...]}
 * }
 * }</pre>
 *
 * <p>Thread-safety: {@link #engines()} and {@link #readyLine()} may be called from any thread;
 * {@link #close()} once.
 */
public final class Standin implements AutoCloseable {
    private static final long BIND_TIMEOUT_SECONDS = 30;

    /** One engine's worker id and bound ports. */
    public record BoundEngine(long worker, int http, int events, int replay) {}

    private final Vertx vertx;
    private final ZContext zmq;
    private final PromptSource tokens;
    private final List<EventPublisher> publishers = new ArrayList<>();
    private final List<RealTimeEngine> models = new ArrayList<>();
    private final List<OpenAiServer> servers = new ArrayList<>();
    private final List<BoundEngine> bound = new ArrayList<>();

    private Standin(StandinSettings s, PromptSource tokens) {
        this.tokens = tokens;
        this.vertx = Vertx.vertx(new VertxOptions()
                .setEventLoopPoolSize(Math.max(
                        1, Math.min(s.engines(), 2 * Runtime.getRuntime().availableProcessors())))
                .setWorkerPoolSize(Math.max(4, Math.min(4 * s.engines(), 64))));
        this.zmq = new ZContext();
    }

    /**
     * Binds every engine's sockets and starts its thread; returns when all are bound.
     *
     * @throws IllegalArgumentException if a setting is bad (naming its option) or a port cannot be bound
     */
    public static Standin start(StandinSettings settings) {
        StandinSettings s = settings.check();
        try {
            java.net.InetAddress.getByName(s.host());
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException("--host " + s.host() + ": no such address (" + e.getMessage() + ")");
        }
        PromptSource tokens = TokenizerSource.open(s.tokenizer());
        Standin p = new Standin(s, tokens);
        try {
            for (int i = 0; i < s.engines(); i++) {
                p.startEngine(s, i);
            }
            return p;
        } catch (RuntimeException e) {
            p.close();
            throw e;
        }
    }

    private void startEngine(StandinSettings s, int i) {
        long worker = s.firstWorker() + i;
        EventPublisher pub;
        try {
            pub = new EventPublisher(
                    zmq,
                    s.host(),
                    next(s.eventsPort(), i),
                    next(s.replayPort(), i),
                    EventEncoding.named(s.encoding()),
                    "",
                    s.replayBuffer(),
                    "kvprefix-standin-events-" + worker);
        } catch (org.zeromq.ZMQException e) {
            throw new IllegalArgumentException("--events-port/--replay-port: cannot bind on " + s.host()
                    + " for engine " + worker + ": " + e.getMessage());
        }
        publishers.add(pub);
        EngineSettings speeds =
                EngineSettings.defaults().withSpeeds(1e6 / s.prefillUsPerToken(), 1e6 / s.decodeUsPerToken());
        RealTimeEngine model = new RealTimeEngine(
                Worker.of(worker), s.blockSize(), s.cacheBlocks(), speeds, s.timeScale(), tokens.vocabSize(), pub);
        models.add(model);
        OpenAiServer server = new OpenAiServer(
                vertx,
                model,
                new ApiRequests.Model(s.model(), s.maxModelLen(), tokens),
                s.promptTokensDetails(),
                s.seed());
        server.eventSources("tcp://" + s.host() + ":" + pub.eventsPort(), "tcp://" + s.host() + ":" + pub.replayPort());
        servers.add(server);
        int http = await(
                server.listen(s.host(), next(s.httpPort(), i))
                        .toCompletionStage()
                        .toCompletableFuture(),
                "--port",
                s.host(),
                worker);
        bound.add(new BoundEngine(worker, http, pub.eventsPort(), pub.replayPort()));
    }

    private static int next(int first, int i) {
        return first == 0 ? 0 : first + i;
    }

    private static int await(java.util.concurrent.CompletableFuture<Integer> f, String option, String host, long w) {
        try {
            return f.get(BIND_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new IllegalArgumentException(option + ": cannot bind on " + host + " for engine " + w + ": "
                    + e.getCause().getMessage());
        } catch (TimeoutException e) {
            throw new IllegalStateException(
                    "engine " + w + "'s HTTP server did not bind in " + BIND_TIMEOUT_SECONDS + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while binding", e);
        }
    }

    /**
     * KV-event batches engine {@code worker} has queued so far (each is sent with a sequence number
     * below this); the events of a request's step are queued before its response hears of the step.
     */
    public long queued(long worker) {
        return publisher(worker).queued();
    }

    /** KV-event batches engine {@code worker} has sent so far. */
    public long sent(long worker) {
        return publisher(worker).published();
    }

    private EventPublisher publisher(long worker) {
        for (int i = 0; i < bound.size(); i++) {
            if (bound.get(i).worker() == worker) {
                return publishers.get(i);
            }
        }
        throw new IllegalArgumentException("no engine is worker " + worker);
    }

    /** The engines, in worker order, with their bound ports. */
    public List<BoundEngine> engines() {
        return List.copyOf(bound);
    }

    /**
     * The line the command prints when every engine is bound:
     * {@code READY {"engines":[{"worker":W,"http":P,"events":E,"replay":R}, ...]}}.
     */
    public String readyLine() {
        StringBuilder b = new StringBuilder("READY {\"engines\":[");
        for (int i = 0; i < bound.size(); i++) {
            BoundEngine e = bound.get(i);
            b.append(i == 0 ? "" : ",")
                    .append("{\"worker\":")
                    .append(e.worker())
                    .append(",\"http\":")
                    .append(e.http())
                    .append(",\"events\":")
                    .append(e.events())
                    .append(",\"replay\":")
                    .append(e.replay())
                    .append('}');
        }
        return b.append("]}").toString();
    }

    /**
     * Runs a stand-in process: starts it, prints {@link #readyLine()} on {@code out}, and returns after
     * SIGTERM (or Ctrl-C) or when standard input reaches its end, having closed everything. Standard input
     * that is {@code /dev/null} (a background job) is not watched. Nothing relies on this clean stop: a
     * SIGKILL leaves no state behind but the process.
     *
     * @throws IllegalArgumentException if a setting is bad or a port cannot be bound
     */
    public static void run(StandinSettings settings, java.io.PrintStream out) throws InterruptedException {
        java.util.concurrent.CountDownLatch stop = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch closed = new java.util.concurrent.CountDownLatch(1);
        Thread hook = new Thread(
                () -> {
                    stop.countDown();
                    try {
                        closed.await(10, TimeUnit.SECONDS); // let close() finish before the JVM halts
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                },
                "kvprefix-standin-shutdown");
        try (Standin standin = start(settings)) {
            Runtime.getRuntime().addShutdownHook(hook);
            if (!stdinIsDevNull()) {
                watchStdin(System.in, stop);
            }
            out.println(standin.readyLine());
            out.flush();
            stop.await();
        } finally {
            closed.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException | IllegalArgumentException shuttingDownOrNeverAdded) {
                // the hook is running, or start() failed before it was added
            }
        }
    }

    private static boolean stdinIsDevNull() {
        try {
            return java.nio.file.Files.readSymbolicLink(java.nio.file.Path.of("/proc/self/fd/0"))
                    .toString()
                    .equals("/dev/null");
        } catch (java.io.IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    /** Counts {@code stop} down when {@code in} reaches its end (the parent closed it or went away). */
    private static void watchStdin(java.io.InputStream in, java.util.concurrent.CountDownLatch stop) {
        Thread t = new Thread(
                () -> {
                    try {
                        while (in.read() >= 0) {
                            // what is written is ignored; only the end counts
                        }
                    } catch (java.io.IOException ignored) {
                        // a broken stream ends the process too
                    }
                    stop.countDown();
                },
                "kvprefix-standin-stdin");
        t.setDaemon(true);
        t.start();
    }

    /** Stops the servers, the engines and the publishers (queued events are sent first). */
    @Override
    public void close() {
        for (OpenAiServer s : servers) {
            try {
                s.close().toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
            } catch (Exception ignored) {
                // closing anyway
            }
        }
        models.forEach(RealTimeEngine::close);
        publishers.forEach(EventPublisher::close);
        try {
            vertx.close().toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
        } catch (Exception ignored) {
            // the event loops are daemon threads
        }
        zmq.close();
        tokens.close();
    }
}
