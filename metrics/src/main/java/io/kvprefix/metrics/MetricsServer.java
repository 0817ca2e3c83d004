package io.kvprefix.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/**
 * A small HTTP endpoint on the JDK's {@code com.sun.net.httpserver} (docs/METRICS.md section 2):
 * {@code GET /metrics} renders a {@link PrometheusMeterRegistry} in the Prometheus text format
 * (version 0.0.4) after running the refresh hooks (so each scrape reads every object's statistics once);
 * {@code GET /health/live} answers 200 while the process serves; {@code GET /health/ready} answers 200
 * {@code ready} when the readiness check says so, and 503 with its reason otherwise. Other paths are
 * 404, other methods 405 (HEAD is answered like GET, without a body).
 *
 * <pre>{@code
 * try (MetricsServer s = MetricsServer.start(new InetSocketAddress(9400), registry,
 *         () -> sub.stats().caughtUp() ? null : "replaying", List.of(subMetrics::refresh))) { ... }
 * }</pre>
 *
 * <p>Thread-safety: thread-safe; requests are served one at a time on one daemon thread.
 */
public final class MetricsServer implements AutoCloseable {
    /** The content type of the Prometheus text format this server writes. */
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private final HttpServer server;
    private final ExecutorService executor;

    private MetricsServer(HttpServer server, ExecutorService executor) {
        this.server = server;
        this.executor = executor;
    }

    /**
     * Binds {@code address} and starts serving.
     *
     * @param registry what {@code /metrics} renders
     * @param notReady the readiness check: null when ready, else a one-line reason for the 503
     * @param beforeScrape run, in order, before each rendering of {@code /metrics}
     * @throws IOException with a one-line message naming the address if it cannot be bound (in use,
     *     not an address of this host, no permission)
     */
    public static MetricsServer start(
            InetSocketAddress address,
            PrometheusMeterRegistry registry,
            Supplier<String> notReady,
            List<Runnable> beforeScrape)
            throws IOException {
        Objects.requireNonNull(registry, "registry");
        Objects.requireNonNull(notReady, "notReady");
        List<Runnable> hooks = List.copyOf(beforeScrape);
        HttpServer server;
        try {
            server = HttpServer.create(address, 16);
        } catch (BindException e) {
            throw new IOException("cannot listen on " + describe(address) + ": " + e.getMessage(), e);
        } catch (IOException e) {
            throw new IOException("cannot listen on " + describe(address) + ": " + e.getMessage(), e);
        }
        ExecutorService executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "kvprefix-metrics-http");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        server.createContext("/", ex -> serve(ex, registry, notReady, hooks));
        server.start();
        return new MetricsServer(server, executor);
    }

    private static String describe(InetSocketAddress a) {
        return (a.getAddress() == null ? a.getHostString() : a.getAddress().getHostAddress()) + ":" + a.getPort();
    }

    /** The address bound (with the port the system chose, if 0 was asked for). */
    public InetSocketAddress address() {
        return server.getAddress();
    }

    private static void serve(
            HttpExchange ex, PrometheusMeterRegistry registry, Supplier<String> notReady, List<Runnable> hooks)
            throws IOException {
        try (ex) {
            String method = ex.getRequestMethod();
            if (!method.equals("GET") && !method.equals("HEAD")) {
                ex.getResponseHeaders().set("Allow", "GET, HEAD");
                send(ex, 405, "text/plain; charset=utf-8", "method not allowed\n");
                return;
            }
            switch (ex.getRequestURI().getPath()) {
                case "/metrics" -> {
                    for (Runnable r : hooks) {
                        r.run();
                    }
                    ByteArrayOutputStream body = new ByteArrayOutputStream(1 << 14);
                    registry.scrape(body, CONTENT_TYPE);
                    send(ex, 200, CONTENT_TYPE, body.toByteArray());
                }
                case "/health/live" -> send(ex, 200, "text/plain; charset=utf-8", "live\n");
                case "/health/ready" -> {
                    String why = notReady.get();
                    if (why == null) {
                        send(ex, 200, "text/plain; charset=utf-8", "ready\n");
                    } else {
                        send(ex, 503, "text/plain; charset=utf-8", "not ready: " + why + "\n");
                    }
                }
                default ->
                    send(ex, 404, "text/plain; charset=utf-8", "not found: /metrics, /health/live, /health/ready\n");
            }
        } catch (RuntimeException e) {
            // a failing hook or meter must not take the endpoint down; the client sees the connection close
            System.getLogger("io.kvprefix.metrics")
                    .log(System.Logger.Level.WARNING, "serving " + ex.getRequestURI() + ": " + e);
        }
    }

    private static void send(HttpExchange ex, int status, String type, String body) throws IOException {
        send(ex, status, type, body.getBytes(StandardCharsets.UTF_8));
    }

    private static void send(HttpExchange ex, int status, String type, byte[] body) throws IOException {
        ex.getResponseHeaders().set("Content-Type", type);
        boolean head = ex.getRequestMethod().equals("HEAD");
        ex.sendResponseHeaders(status, head ? -1 : body.length);
        if (!head) {
            try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
            }
        }
    }

    /** Stops serving (requests in progress get up to a second) and ends the server's thread. Idempotent. */
    @Override
    public void close() {
        server.stop(1);
        executor.shutdownNow();
    }
}
