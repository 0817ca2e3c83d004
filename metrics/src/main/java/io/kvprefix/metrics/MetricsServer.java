package io.kvprefix.metrics;

import io.kvprefix.metrics.internal.HttpConnection;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * A small HTTP/1.1 endpoint on a plain server socket (docs/METRICS.md section 2): {@code GET /metrics}
 * renders a {@link PrometheusMeterRegistry} in the Prometheus text format (version 0.0.4) after running
 * the refresh hooks; {@code GET /health/live} answers 200 while the process serves; {@code GET
 * /health/ready} answers 200 {@code ready} when the readiness check says so, and 503 with its reason
 * otherwise. Other paths are 404, other methods 405 (HEAD is answered like GET, without a body).
 * Each connection gets its own thread, a deadline for the whole exchange and one request; connections
 * beyond a bound are closed at once, so a stalled client never holds the health checks.
 *
 * <pre>{@code
 * try (MetricsServer s = MetricsServer.start(new InetSocketAddress(9400), registry,
 *         () -> sub.stats().caughtUp() ? null : "replaying", List.of(subMetrics::refresh))) { ... }
 * }</pre>
 *
 * <p>Thread-safety: thread-safe; requests are served concurrently, scrapes of {@code /metrics} one at a time.
 */
public final class MetricsServer implements AutoCloseable {
    /** The content type of the Prometheus text format this server writes. */
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    /** How long one connection may take, from accept to the last byte of the answer. */
    static final Duration DEFAULT_DEADLINE = Duration.ofSeconds(10);

    /** How many connections are served at once; more are closed as soon as they are accepted. */
    static final int DEFAULT_MAX_CONNECTIONS = 32;

    private static final String TEXT = "text/plain; charset=utf-8";

    private final ServerSocket socket;
    private final PrometheusMeterRegistry registry;
    private final Supplier<String> notReady;
    private final List<Runnable> hooks;
    private final Duration deadline;
    private final Semaphore slots;
    private final ReentrantLock scrapeLock = new ReentrantLock();
    private final ScheduledExecutorService reaper;
    private final Thread acceptor;

    private MetricsServer(
            ServerSocket socket,
            PrometheusMeterRegistry registry,
            Supplier<String> notReady,
            List<Runnable> hooks,
            Duration deadline,
            int maxConnections) {
        this.socket = socket;
        this.registry = registry;
        this.notReady = notReady;
        this.hooks = hooks;
        this.deadline = deadline;
        this.slots = new Semaphore(maxConnections);
        this.reaper = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "kvprefix-metrics-deadline");
            t.setDaemon(true);
            return t;
        });
        this.acceptor =
                Thread.ofPlatform().name("kvprefix-metrics-http").daemon().unstarted(this::acceptLoop);
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
        return start(address, registry, notReady, beforeScrape, DEFAULT_DEADLINE, DEFAULT_MAX_CONNECTIONS);
    }

    /** {@link #start(InetSocketAddress, PrometheusMeterRegistry, Supplier, List)} with its limits given. */
    static MetricsServer start(
            InetSocketAddress address,
            PrometheusMeterRegistry registry,
            Supplier<String> notReady,
            List<Runnable> beforeScrape,
            Duration deadline,
            int maxConnections)
            throws IOException {
        Objects.requireNonNull(registry, "registry");
        Objects.requireNonNull(notReady, "notReady");
        List<Runnable> hooks = List.copyOf(beforeScrape);
        ServerSocket socket = new ServerSocket();
        try {
            socket.setReuseAddress(true);
            socket.bind(address, 64);
        } catch (IOException | IllegalArgumentException | SecurityException e) {
            socket.close();
            throw new IOException("cannot listen on " + describe(address) + ": " + e.getMessage(), e);
        }
        MetricsServer server = new MetricsServer(socket, registry, notReady, hooks, deadline, maxConnections);
        server.acceptor.start();
        return server;
    }

    private static String describe(InetSocketAddress a) {
        return (a.getAddress() == null ? a.getHostString() : a.getAddress().getHostAddress()) + ":" + a.getPort();
    }

    /** The address bound (with the port the system chose, if 0 was asked for). */
    public InetSocketAddress address() {
        return (InetSocketAddress) socket.getLocalSocketAddress();
    }

    private void acceptLoop() {
        while (!socket.isClosed()) {
            Socket client;
            try {
                client = socket.accept();
            } catch (IOException e) {
                if (socket.isClosed()) {
                    return;
                }
                continue; // a connection reset before it was accepted, or out of file descriptors
            }
            if (!slots.tryAcquire()) {
                closeQuietly(client); // over the bound: the client sees the connection close
                continue;
            }
            var timer = reaper.schedule(() -> closeQuietly(client), deadline.toMillis(), TimeUnit.MILLISECONDS);
            Thread.ofVirtual().name("kvprefix-metrics-request").start(() -> {
                try {
                    serve(client);
                } finally {
                    timer.cancel(false);
                    closeQuietly(client);
                    slots.release();
                }
            });
        }
    }

    private void serve(Socket client) {
        try {
            client.setSoTimeout((int) Math.max(1, deadline.toMillis()));
            HttpConnection c = new HttpConnection(client);
            HttpConnection.Request req = c.readRequest();
            if (req == null) {
                return; // closed, timed out or malformed: already answered or nobody to answer
            }
            answer(c, req);
        } catch (SocketException e) {
            // closed by the deadline or by the client
        } catch (IOException | RuntimeException e) {
            // a failing hook or meter must not take the endpoint down; the client sees the connection close
            System.getLogger("io.kvprefix.metrics").log(System.Logger.Level.WARNING, "serving a request: " + e);
        }
    }

    private void answer(HttpConnection c, HttpConnection.Request req) throws IOException {
        boolean head = req.method().equals("HEAD");
        if (!req.method().equals("GET") && !head) {
            c.send(405, TEXT, "Allow: GET, HEAD\r\n", "method not allowed\n", false);
            return;
        }
        switch (req.path()) {
            case "/metrics" -> c.send(200, CONTENT_TYPE, "", scrape(), head);
            case "/health/live" -> c.send(200, TEXT, "", "live\n", head);
            case "/health/ready" -> {
                String why = notReady.get();
                if (why == null) {
                    c.send(200, TEXT, "", "ready\n", head);
                } else {
                    c.send(503, TEXT, "", "not ready: " + why + "\n", head);
                }
            }
            default -> c.send(404, TEXT, "", "not found: /metrics, /health/live, /health/ready\n", head);
        }
    }

    private byte[] scrape() {
        scrapeLock.lock();
        try {
            for (Runnable r : hooks) {
                r.run();
            }
            ByteArrayOutputStream body = new ByteArrayOutputStream(1 << 14);
            registry.scrape(body, CONTENT_TYPE);
            return body.toByteArray();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } finally {
            scrapeLock.unlock();
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // nothing to do: it is being closed
        }
    }

    /** Stops accepting; requests in progress end at their deadline at the latest. Idempotent. */
    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException e) {
            // already closed
        }
        try {
            acceptor.join(Duration.ofSeconds(1));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        reaper.shutdown();
    }
}
