package io.kvprefix.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvprefix.service.EngineSpec;
import io.kvprefix.service.RouterService;
import io.kvprefix.service.ServiceOptions;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * {@code kvprefix serve} in process for the tests, in front of stand-in engines, and a real HTTP client
 * (the JDK's) to talk to it: JSON requests, streamed responses read line by line with each line's
 * arrival time, and waiting for a condition with a generous deadline (never a sleep as synchronisation).
 */
final class Serve implements AutoCloseable {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String MODEL = "kvprefix-standin";

    final RouterService service;
    final ServeServer server;
    final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10))
            .build();

    private Serve(RouterService service, ServeServer server) {
        this.service = service;
        this.server = server;
    }

    /** The router over {@code engines}, with {@code options} changed by {@code tune}, on a free port. */
    static Serve start(List<EngineSpec> engines, Consumer<ServiceOptions> tune) {
        // checks every 200 ms, each with a generous deadline for a loaded machine
        ServiceOptions o =
                RouterService.builder().healthInterval(Duration.ofMillis(200)).healthTimeout(Duration.ofSeconds(5));
        engines.forEach(o::engine);
        tune.accept(o);
        RouterService s = o.build();
        try {
            return new Serve(
                    s,
                    ServeServer.start(
                            s, ServeServer.options().host("127.0.0.1").port(0).eventLoops(2)));
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
    }

    URI uri(String path) {
        return URI.create("http://127.0.0.1:" + server.port() + path);
    }

    /** A POST of {@code json} to {@code path} (content-type application/json), answered whole. */
    HttpResponse<String> post(String path, String json) throws IOException, InterruptedException {
        return http.send(
                HttpRequest.newBuilder(uri(path))
                        .timeout(Duration.ofSeconds(120))
                        .header("content-type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(json))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return http.send(
                HttpRequest.newBuilder(uri(path))
                        .timeout(Duration.ofSeconds(60))
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** One line of a streamed body and when it arrived (ns, System.nanoTime). */
    record Line(String text, long at) {}

    /** A POST whose body is read line by line as it arrives; {@code each} sees every line (it may throw to stop). */
    HttpResponse<List<Line>> stream(String path, String json, Consumer<Line> each)
            throws IOException, InterruptedException {
        HttpResponse<java.io.InputStream> r = http.send(
                HttpRequest.newBuilder(uri(path))
                        .timeout(Duration.ofSeconds(120))
                        .header("content-type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(json))
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        List<Line> lines = new ArrayList<>();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
            for (String l; (l = in.readLine()) != null; ) {
                Line line = new Line(l, System.nanoTime());
                lines.add(line);
                each.accept(line);
            }
        } catch (IOException e) {
            lines.add(new Line("<<" + e + ">>", System.nanoTime()));
        }
        return new Wrapped(r, lines);
    }

    /** A completion body with token ids {@code from..to} (inclusive), and extra fields (JSON, without braces). */
    static String completion(int from, int to, String extra) {
        StringBuilder sb = new StringBuilder("{\"model\":\"" + MODEL + "\",\"prompt\":[");
        for (int t = from; t <= to; t++) {
            sb.append(t == from ? "" : ",").append(t);
        }
        sb.append(']');
        if (extra != null && !extra.isEmpty()) {
            sb.append(',').append(extra);
        }
        return sb.append('}').toString();
    }

    static JsonNode json(String s) {
        try {
            return JSON.readTree(s);
        } catch (IOException e) {
            throw new AssertionError("not JSON: " + s, e);
        }
    }

    /** Waits until {@code condition} holds, for at most {@code seconds}; fails with {@code what} otherwise. */
    static void await(String what, double seconds, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + (long) (seconds * 1e9);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("waited " + seconds + " s for: " + what);
            }
            Thread.sleep(20);
        }
    }

    @Override
    public void close() {
        server.close();
        service.close();
    }

    /** A streamed response whose body is the lines read. */
    private record Wrapped(HttpResponse<java.io.InputStream> r, List<Line> body) implements HttpResponse<List<Line>> {
        @Override
        public int statusCode() {
            return r.statusCode();
        }

        @Override
        public HttpRequest request() {
            return r.request();
        }

        @Override
        public java.util.Optional<HttpResponse<List<Line>>> previousResponse() {
            return java.util.Optional.empty();
        }

        @Override
        public java.net.http.HttpHeaders headers() {
            return r.headers();
        }

        @Override
        public java.util.Optional<javax.net.ssl.SSLSession> sslSession() {
            return r.sslSession();
        }

        @Override
        public URI uri() {
            return r.uri();
        }

        @Override
        public HttpClient.Version version() {
            return r.version();
        }
    }
}
