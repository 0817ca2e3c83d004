package io.kvprefix.server;

import io.kvprefix.server.internal.Counters;
import io.kvprefix.server.internal.FrontDoor;
import io.kvprefix.server.internal.FrontDoorSettings;
import io.kvprefix.service.RouterService;
import io.micrometer.core.instrument.Gauge;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code kvprefix serve}'s HTTP front door over a {@link RouterService}, on Vert.x core: the
 * OpenAI-compatible endpoints, the route API, {@code /health} and {@code /metrics} on one port
 * (docs/SERVE.md), served by one HTTP server per event loop with a pooled HTTP client to the
 * engines on each. Start it in process for tests, the demo and benchmarks, or through the command.
 *
 * <pre>{@code
 * try (RouterService service = RouterService.builder().engine(EngineSpec.parse("7=http://127.0.0.1:8001")).build();
 *         ServeServer server = ServeServer.start(service, ServeServer.options().port(0))) {
 *     int port = server.port();   // http://127.0.0.1:port/v1/chat/completions ...
 * }
 * }</pre>
 *
 * <p>Thread-safety: thread-safe; requests are served on the Vert.x event loops, {@link #close()} may
 * be called from any thread.
 */
public final class ServeServer implements AutoCloseable {
    private final Vertx vertx;
    private final int port;
    private final Counters counters;

    private ServeServer(Vertx vertx, int port, Counters counters) {
        this.vertx = vertx;
        this.port = port;
        this.counters = counters;
    }

    /** Options at their defaults. */
    public static Options options() {
        return new Options();
    }

    /**
     * Binds the port and starts serving; returns once every event loop listens.
     *
     * @throws IllegalArgumentException naming the address if it cannot be bound
     */
    public static ServeServer start(RouterService service, Options o) {
        Objects.requireNonNull(service, "service");
        Vertx vertx = Vertx.vertx(new VertxOptions()
                .setEventLoopPoolSize(o.eventLoops)
                .setPreferNativeTransport(false)
                .setWorkerPoolSize(o.workerThreads));
        Counters counters = new Counters();
        try {
            // port 0 asks for any free port; Vert.x shares one random port among servers that ask for the same
            // negative port, so every event loop's server serves the port the first one got
            int asked = o.port == 0 ? -1 : o.port;
            FrontDoor first = new FrontDoor(service, o.settings(asked), counters);
            await(vertx.deployVerticle(first), "--port " + o.port);
            int bound = first.actualPort();
            if (o.eventLoops > 1) {
                FrontDoorSettings s = o.settings(asked);
                await(
                        vertx.deployVerticle(
                                () -> new FrontDoor(service, s, counters),
                                new DeploymentOptions().setInstances(o.eventLoops - 1)),
                        "--port " + o.port);
            }
            bindGauges(service, counters);
            return new ServeServer(vertx, bound, counters);
        } catch (RuntimeException e) {
            vertx.close();
            throw e;
        }
    }

    private static void bindGauges(RouterService service, Counters c) {
        var r = service.meterRegistry();
        Gauge.builder("kvprefix.server.connections", c.clientConnections::get)
                .description("Open connections of the HTTP front door, by side (client or engine)")
                .tag("side", "client")
                .register(r);
        Gauge.builder("kvprefix.server.connections", c.engineConnections::get)
                .description("Open connections of the HTTP front door, by side (client or engine)")
                .tag("side", "engine")
                .register(r);
        Gauge.builder("kvprefix.server.exchanges", c.exchanges::get)
                .description("Requests being proxied now (between routing and their end)")
                .register(r);
    }

    private static <T> T await(Future<T> f, String what) {
        try {
            return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new IllegalArgumentException(
                    what + ": cannot listen: " + e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException(what + ": the server did not start within 60 s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting", e);
        }
    }

    /** The port served (the one the system chose, if 0 was asked for). */
    public int port() {
        return port;
    }

    /** What is open now: connections on both sides and requests being proxied. */
    public Stats stats() {
        return new Stats(
                counters.clientConnections.get(),
                counters.engineConnections.get(),
                counters.exchanges.get(),
                counters.requests.get());
    }

    /**
     * What the front door has open.
     *
     * <p>Thread-safety: immutable.
     *
     * @param clientConnections open client connections
     * @param engineConnections open connections to engines (pooled ones included)
     * @param exchanges requests being proxied now
     * @param requests requests received so far
     */
    public record Stats(long clientConnections, long engineConnections, long exchanges, long requests) {}

    /** Stops serving: the port is closed and open connections are closed with it. Idempotent. */
    @Override
    public void close() {
        try {
            vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            System.getLogger("io.kvprefix.server").log(System.Logger.Level.WARNING, "closing the server: " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The front door's options ({@code kvprefix serve}'s); every one has a default.
     *
     * <p>Thread-safety: not thread-safe; use one per thread.
     */
    public static final class Options {
        private String host = "0.0.0.0";
        private int port = 8000;
        private Duration connectTimeout = Duration.ofSeconds(5);
        private Duration idleTimeout = Duration.ofSeconds(600);
        private int eventLoops = Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors()));
        private int workerThreads = 32;
        private int maxEngineConnections = 4096;

        private Options() {}

        /** The address to bind (default {@code 0.0.0.0}, every interface). */
        public Options host(String host) {
            this.host = Objects.requireNonNull(host, "host");
            return this;
        }

        /** The port (default 8000; 0 for any free port). */
        public Options port(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("--port must be 0..65535 (0: any free port), got " + port);
            }
            this.port = port;
            return this;
        }

        /** How long connecting to an engine may take (default 5 s); past it, the next engine is tried. */
        public Options connectTimeout(Duration d) {
            this.connectTimeout = positive(d, "--connect-timeout");
            return this;
        }

        /**
         * How long an engine's request may go without a byte (its prefill included), and a client's
         * connection without traffic (default 600 s); past it, 504 or the stream's error event.
         */
        public Options idleTimeout(Duration d) {
            this.idleTimeout = positive(d, "--idle-timeout");
            return this;
        }

        /** Event loops (default: the cores, at most 4); each serves the port and pools its own engine connections. */
        public Options eventLoops(int n) {
            if (n < 1 || n > 256) {
                throw new IllegalArgumentException("--event-loops must be 1..256, got " + n);
            }
            this.eventLoops = n;
            return this;
        }

        /** Threads that run blocking work: tokenizing text and chat prompts, rendering /metrics (default 32). */
        public Options workerThreads(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("worker threads must be >= 1, got " + n);
            }
            this.workerThreads = n;
            return this;
        }

        /** Most pooled connections to one engine per event loop (default 4096). */
        public Options maxEngineConnections(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("max engine connections must be >= 1, got " + n);
            }
            this.maxEngineConnections = n;
            return this;
        }

        FrontDoorSettings settings(int p) {
            return new FrontDoorSettings(
                    host, p, connectTimeout.toMillis(), idleTimeout.toMillis(), maxEngineConnections);
        }

        private static Duration positive(Duration d, String option) {
            Objects.requireNonNull(d, option);
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(option + " must be positive, got " + d);
            }
            return d;
        }
    }
}
