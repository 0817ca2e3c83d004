package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.standin.Standin;
import io.kvprefix.standin.StandinSettings;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code kvprefix serve} as a child process, as scripts and the demo start it: one {@code READY} line
 * with the port it serves, requests routed to the engine behind it, and a clean stop on SIGTERM.
 */
class ServeCommandTest {
    @Test
    void aChildProcessPrintsReadyServesAndStopsOnSigterm() throws Exception {
        try (Standin engines =
                Standin.start(StandinSettings.builder().timeScale(0.05).build())) {
            Standin.BoundEngine e = engines.engines().get(0);
            Process p = new ProcessBuilder(List.of(
                            Path.of(System.getProperty("java.home"), "bin", "java")
                                    .toString(),
                            "--enable-native-access=ALL-UNNAMED",
                            "--sun-misc-unsafe-memory-access=allow",
                            "-cp",
                            System.getProperty("java.class.path"),
                            Main.class.getName(),
                            "serve",
                            "--port",
                            "0",
                            "--host",
                            "127.0.0.1",
                            "--engine",
                            e.worker() + "=http://127.0.0.1:" + e.http() + ",events=tcp://127.0.0.1:" + e.events()
                                    + ",replay=tcp://127.0.0.1:" + e.replay(),
                            "--policy",
                            "kvprefix-ttft"))
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
            try {
                BufferedReader out =
                        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                String ready = out.readLine();
                Matcher m = Pattern.compile(
                                "^READY \\{\"port\":(\\d+),\"metrics_port\":null,\"engines\":1,\"engines_up\":1}$")
                        .matcher(String.valueOf(ready));
                assertTrue(m.matches(), ready);
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
                p.destroy(); // SIGTERM
                assertTrue(p.waitFor(60, TimeUnit.SECONDS), "stopped on SIGTERM");
                assertEquals(143, p.exitValue(), "the JVM's status after SIGTERM, its shutdown hook done");
            } finally {
                p.destroyForcibly();
            }
        }
    }
}
