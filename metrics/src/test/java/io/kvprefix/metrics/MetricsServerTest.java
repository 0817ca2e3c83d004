package io.kvprefix.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Counter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The endpoint over real HTTP on a loopback port: paths, methods, readiness, the hooks, a busy port, stalled clients. */
class MetricsServerTest {
    /** A status, the content type and the body of one response. */
    private record Response(int statusCode, String type, String body) {}

    private static Response send(String method, String url) throws IOException {
        HttpURLConnection c = (HttpURLConnection) URI.create(url).toURL().openConnection();
        try {
            c.setRequestMethod(method);
            int status = c.getResponseCode();
            var in = status < 400 ? c.getInputStream() : c.getErrorStream();
            String body = in == null ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8);
            return new Response(status, c.getContentType(), body);
        } finally {
            c.disconnect();
        }
    }

    @Test
    void servesMetricsHealthAndNothingElse() throws Exception {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        Counter c = Counter.builder("kvprefix.test.things").register(registry);
        AtomicReference<String> notReady = new AtomicReference<>("a replay is outstanding");
        AtomicInteger hooks = new AtomicInteger();
        try (MetricsServer s = MetricsServer.start(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                registry,
                notReady::get,
                List.of(() -> c.increment(), hooks::incrementAndGet))) {
            String base = "http://127.0.0.1:" + s.address().getPort();
            Response m = send("GET", base + "/metrics");
            assertEquals(200, m.statusCode());
            assertEquals(MetricsServer.CONTENT_TYPE, m.type());
            assertTrue(m.body().contains("kvprefix_test_things_total 1.0"), m.body()); // the hook ran first
            assertEquals(1, hooks.get());
            assertEquals(200, send("GET", base + "/health/live").statusCode());
            Response r = send("GET", base + "/health/ready");
            assertEquals(503, r.statusCode());
            assertEquals("not ready: a replay is outstanding\n", r.body());
            notReady.set(null);
            assertEquals("ready\n", send("GET", base + "/health/ready").body());
            assertEquals(404, send("GET", base + "/nothing").statusCode());
            assertEquals(405, send("POST", base + "/metrics").statusCode());
            Response head = send("HEAD", base + "/metrics");
            assertEquals(200, head.statusCode());
            assertEquals("", head.body());
        }
    }

    /**
     * Half a request (a broken scraper, a port scan) must not hold the health checks: before the fix one
     * thread read request heads with no time limit, and {@code /health/live} waited behind it.
     */
    @Test
    void aStalledClientDoesNotHoldTheHealthChecks() throws Exception {
        try (MetricsServer s = MetricsServer.start(
                        new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                        new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
                        () -> null,
                        List.of(),
                        Duration.ofMinutes(10), // the deadline is not what frees the health checks here
                        MetricsServer.DEFAULT_MAX_CONNECTIONS);
                Socket stalled =
                        new Socket(InetAddress.getLoopbackAddress(), s.address().getPort())) {
            stalled.getOutputStream().write("GET /metrics HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
            stalled.getOutputStream().flush();
            String base = "http://127.0.0.1:" + s.address().getPort();
            for (int i = 0; i < 3; i++) {
                assertEquals(200, sendWithin(base + "/health/live", Duration.ofSeconds(30)));
                assertEquals(200, sendWithin(base + "/metrics", Duration.ofSeconds(30)));
            }
        }
    }

    @Test
    void aStalledClientIsCutOffAtTheDeadline() throws Exception {
        try (MetricsServer s = MetricsServer.start(
                        new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                        new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
                        () -> null,
                        List.of(),
                        Duration.ofMillis(300),
                        MetricsServer.DEFAULT_MAX_CONNECTIONS);
                Socket stalled =
                        new Socket(InetAddress.getLoopbackAddress(), s.address().getPort())) {
            stalled.getOutputStream().write("GET /health/l".getBytes(StandardCharsets.US_ASCII));
            stalled.setSoTimeout(60_000); // generous: the server's deadline, not this one, must end it
            assertEquals(-1, stalled.getInputStream().read(), "the server closes the stalled connection");
        }
    }

    @Test
    void connectionsBeyondTheBoundAreClosedAndServingResumes() throws Exception {
        int bound = 4;
        try (MetricsServer s = MetricsServer.start(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
                () -> null,
                List.of(),
                Duration.ofMinutes(10),
                bound)) {
            List<Socket> held = new ArrayList<>();
            try {
                for (int i = 0; i < bound; i++) {
                    Socket h = new Socket(
                            InetAddress.getLoopbackAddress(), s.address().getPort());
                    h.getOutputStream().write('G');
                    held.add(h);
                }
                // every slot is taken once the server has accepted them; a further connection is closed at once
                boolean refused = false;
                for (int attempt = 0; attempt < 600 && !refused; attempt++) {
                    try (Socket extra = new Socket(
                            InetAddress.getLoopbackAddress(), s.address().getPort())) {
                        extra.setSoTimeout(60_000);
                        extra.getOutputStream()
                                .write("GET /health/live HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                        refused = extra.getInputStream().read() == -1;
                    } catch (IOException e) {
                        refused = true; // reset by the close
                    }
                    if (!refused) {
                        Thread.sleep(50);
                    }
                }
                assertTrue(refused, "a connection beyond the bound is closed");
            } finally {
                for (Socket h : held) {
                    h.close();
                }
            }
            // the held connections' threads free their slots as they see the closes: serving resumes
            String base = "http://127.0.0.1:" + s.address().getPort();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            int status = -1;
            while (status != 200 && System.nanoTime() < deadline) {
                try {
                    status = sendWithin(base + "/health/live", Duration.ofSeconds(30));
                } catch (IOException stillFull) {
                    Thread.sleep(20);
                }
            }
            assertEquals(200, status, "serving resumes once the held connections are closed");
        }
    }

    private static int sendWithin(String url, Duration limit) throws IOException {
        HttpURLConnection c = (HttpURLConnection) URI.create(url).toURL().openConnection();
        try {
            c.setConnectTimeout((int) limit.toMillis());
            c.setReadTimeout((int) limit.toMillis());
            int status = c.getResponseCode();
            c.getInputStream().readAllBytes();
            return status;
        } finally {
            c.disconnect();
        }
    }

    @Test
    void aBusyPortIsRefusedWithAOneLineMessage() throws IOException {
        try (ServerSocket busy = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            IOException e = assertThrows(
                    IOException.class,
                    () -> MetricsServer.start(
                            new InetSocketAddress(InetAddress.getLoopbackAddress(), busy.getLocalPort()),
                            new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
                            () -> null,
                            List.of()));
            assertTrue(
                    e.getMessage().startsWith("cannot listen on 127.0.0.1:" + busy.getLocalPort() + ": "),
                    e.getMessage());
            assertEquals(1, e.getMessage().lines().count());
        }
    }
}
