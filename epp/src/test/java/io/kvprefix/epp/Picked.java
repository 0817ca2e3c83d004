package io.kvprefix.epp;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvprefix.service.EngineSpec;
import io.kvprefix.service.RouterService;
import io.kvprefix.standin.testing.StandinProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/** What the tests share: request bodies, the service's own decision for one, polling with a generous deadline. */
final class Picked {
    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10))
            .build();

    private Picked() {}

    /** A completion of {@code n} token ids from {@code base}, with a field in several UTF-8 widths. */
    static byte[] completion(int base, int n) {
        StringBuilder sb = new StringBuilder("{\"model\":\"" + StandinProcess.MODEL
                + "\",\"max_tokens\":2,\"user\":\"caf\u00e9 \u20ac \ud83d\ude00\",\"prompt\":[");
        for (int t = 0; t < n; t++) {
            sb.append(t == 0 ? "" : ",").append(base + t);
        }
        return sb.append("]}").toString().getBytes(StandardCharsets.UTF_8);
    }

    /** Sends {@code body} to the engine directly, so that only its KV events can tell the picker. */
    static void direct(StandinProcess.Engine e, byte[] body) throws Exception {
        HttpResponse<String> r = HTTP.send(
                HttpRequest.newBuilder(URI.create(e.url() + "/v1/completions"))
                        .header("content-type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertTrue(r.statusCode() == 200, r.body());
    }

    /** The service's explanation of {@code body} (docs/SERVE.md section 3): what routing it would do now. */
    static JsonNode explain(RouterService s, byte[] body) throws Exception {
        var a = s.routeApi().handle("POST", "/kvprefix/v1/explain", body);
        assertTrue(a.status() == 200, new String(a.body(), StandardCharsets.UTF_8));
        return JSON.readTree(a.body());
    }

    /** The depth the index holds for {@code worker} ("ID/RANK") of {@code body}'s prompt. */
    static int depth(RouterService s, byte[] body, String worker) throws Exception {
        for (JsonNode w : explain(s, body).get("workers")) {
            if (w.get("worker").asText().equals(worker)) {
                return w.get("depth").asInt();
            }
        }
        return -1;
    }

    /** The endpoint of the worker the service would route {@code body} to now. */
    static String servicePick(RouterService s, List<EngineSpec> specs, byte[] body) throws Exception {
        String w = explain(s, body).get("preferred").asText();
        for (EngineSpec e : specs) {
            if (e.worker().toString().equals(w)) {
                return e.host() + ":" + e.port();
            }
        }
        throw new AssertionError("no engine is worker " + w);
    }

    /** In flight at the engine of {@code spec}, as the service counts. */
    static long inFlight(RouterService s, EngineSpec spec) {
        return s.engines().stream()
                .filter(e -> e.spec().worker().equals(spec.worker()))
                .findFirst()
                .orElseThrow()
                .inFlight();
    }

    interface Check {
        boolean ok() throws Exception;
    }

    /** Waits until {@code c} holds, for up to {@code seconds}. */
    static void await(String what, int seconds, Check c) throws Exception {
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        while (!c.ok()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("not within " + seconds + " s: " + what);
            }
            Thread.sleep(20);
        }
    }
}
