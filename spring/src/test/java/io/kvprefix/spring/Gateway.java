package io.kvprefix.spring;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvprefix.service.RouterService;
import io.kvprefix.standin.testing.StandinProcess;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A real Spring Cloud Gateway application started in the test on a free port, with the starter's
 * auto-configuration, in front of stand-in engines: route {@code llm} ({@code /v1/**}, KV-aware) and
 * route {@code plain} ({@code /plain/v1/**}, the gateway's round-robin load balancer over the same
 * engines), plus a real HTTP client (the JDK's) and waiting with generous deadlines, never a sleep.
 */
final class Gateway implements AutoCloseable {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String MODEL = "kvprefix-standin";

    final ConfigurableApplicationContext context;
    final RouterService service;
    final int port;
    final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10))
            .build();

    private Gateway(ConfigurableApplicationContext context) {
        this.context = context;
        this.service = context.getBean(RouterService.class);
        this.port = Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
    }

    /** The properties of the two routes over {@code engines}, the KV-aware one with the engines' event sockets. */
    static Map<String, Object> routes(List<StandinProcess.Engine> engines) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("server.port", "0");
        p.put("server.address", "127.0.0.1");
        String r = "spring.cloud.gateway.server.webflux.routes";
        p.put(r + "[0].id", "llm");
        p.put(r + "[0].uri", "http://kvprefix.invalid");
        p.put(r + "[0].predicates[0]", "Path=/v1/**");
        p.put(r + "[0].filters[0]", "KvAwareRouting");
        p.put(r + "[1].id", "plain");
        p.put(r + "[1].uri", "lb://engines");
        p.put(r + "[1].predicates[0]", "Path=/plain/**");
        p.put(r + "[1].filters[0]", "StripPrefix=1");
        for (int i = 0; i < engines.size(); i++) {
            StandinProcess.Engine e = engines.get(i);
            p.put("kvprefix.engines[" + i + "]", e.specText());
            p.put("spring.cloud.discovery.client.simple.instances.engines[" + i + "].uri", e.url());
        }
        // checks every 200 ms, each with a generous deadline for a loaded machine
        p.put("kvprefix.health-interval", "200ms");
        p.put("kvprefix.health-timeout", "5s");
        p.put("management.endpoints.web.exposure.include", "health,prometheus");
        p.put("spring.main.banner-mode", "off");
        return p;
    }

    static Gateway start(Map<String, Object> properties) {
        return new Gateway(new SpringApplicationBuilder(TestGateway.class)
                .properties(properties)
                .run());
    }

    URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

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

    /** A POST whose body is read line by line as it arrives. */
    List<Line> stream(String path, String json) throws IOException, InterruptedException {
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
                lines.add(new Line(l, System.nanoTime()));
            }
        } catch (IOException e) {
            lines.add(new Line("<<" + e + ">>", System.nanoTime()));
        }
        return lines;
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

    /** The router's explanation of {@code body} (the route API's explain, on the gateway's own service). */
    JsonNode explain(String body) {
        var a = service.routeApi().handle("POST", "/kvprefix/v1/explain", body.getBytes(StandardCharsets.UTF_8));
        return json(new String(a.body(), StandardCharsets.UTF_8));
    }

    /** The depth the index gives worker {@code w} for {@code body}. */
    int depth(String body, String w) {
        for (JsonNode e : explain(body).get("workers")) {
            if (e.get("worker").asText().equals(w)) {
                return e.get("depth").asInt();
            }
        }
        throw new AssertionError("no worker " + w);
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
        context.close();
    }
}
