package io.kvprefix.standin;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** A real HTTP client (the JDK's) for the tests, against one engine's port. */
final class Http {
    static final HttpClient CLIENT = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(30))
            .build();

    private Http() {}

    static HttpRequest.Builder to(int port, String path) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(120));
    }

    static HttpResponse<String> post(int port, String path, String json) throws IOException, InterruptedException {
        return CLIENT.send(
                to(port, path)
                        .header("content-type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(json))
                        .build(),
                HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    static HttpResponse<String> get(int port, String path) throws IOException, InterruptedException {
        return CLIENT.send(to(port, path).GET().build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }
}
