package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.standin.Standin;
import io.kvprefix.standin.StandinSettings;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kvprefix serve} as a child process, as scripts and the demo start it: one {@code READY} line
 * with the port it serves, requests routed to the engine behind it, and a clean stop on SIGTERM.
 */
class ServeCommandTest {
    @TempDir
    Path dir;

    @Test
    void aChildProcessPrintsReadyServesAndStopsOnSigterm() throws Exception {
        try (Standin engines =
                Standin.start(StandinSettings.builder().timeScale(0.05).build())) {
            Standin.BoundEngine e = engines.engines().get(0);
            try (LiveProcess p = LiveProcess.start(
                    "serve",
                    null,
                    List.of(
                            "serve",
                            "--port",
                            "0",
                            "--host",
                            "127.0.0.1",
                            "--engine",
                            e.worker() + "=http://127.0.0.1:" + e.http() + ",events=tcp://127.0.0.1:" + e.events()
                                    + ",replay=tcp://127.0.0.1:" + e.replay(),
                            "--policy",
                            "kvprefix-ttft"),
                    dir.resolve("serve.log"))) {
                assertEquals(List.of(), p.linesBeforeReady(), "the READY line is the first of standard output");
                Matcher m = Pattern.compile(
                                "^READY \\{\"port\":(\\d+),\"metrics_port\":null,\"engines\":1,\"engines_up\":1}$")
                        .matcher(p.readyLine());
                assertTrue(m.matches(), p.readyLine());
                HttpClient http = HttpClient.newHttpClient();
                HttpResponse<String> r = http.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + m.group(1) + "/v1/completions"))
                                .header("content-type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString(
                                        "{\"model\":\"kvprefix-standin\",\"prompt\":[1,2,3,4,5],\"max_tokens\":2}"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                assertEquals(200, r.statusCode(), r.body());
                assertEquals(
                        e.worker() + "/0",
                        r.headers().firstValue("x-kvprefix-worker").orElseThrow());
                http.close();
                assertEquals(
                        143,
                        p.stop(Duration.ofSeconds(60)),
                        "stopped on SIGTERM, the JVM's status after its shutdown hook: " + LiveProcess.tail(p.log()));
            }
        }
    }
}
