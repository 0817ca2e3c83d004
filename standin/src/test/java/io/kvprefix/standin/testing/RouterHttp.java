package io.kvprefix.standin.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvprefix.testing.RepoPaths;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLSession;

/**
 * A router started by a test ({@code kvprefix serve} in process, the Spring gateway) and a real HTTP
 * client (the JDK's) to talk to it: JSON requests, streamed responses read line by line with each
 * line's arrival time, completion bodies of token ids, and waiting for a condition with a generous
 * deadline (never a sleep as synchronisation). Subclasses say where the router listens. The one home
 * of these for the server's and spring's tests.
 *
 * <p>Thread-safety: the client is thread-safe; the static helpers are stateless.
 */
public abstract class RouterHttp implements AutoCloseable {
    public static final ObjectMapper JSON = new ObjectMapper();
    public static final String MODEL = StandinProcess.MODEL;

    public final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10))
            .build();

    /** The router's URI of {@code path}. */
    public abstract URI uri(String path);

    /** A POST of {@code json} to {@code path} (content-type application/json), answered whole. */
    public HttpResponse<String> post(String path, String json) throws IOException, InterruptedException {
        return http.send(request(path, json), HttpResponse.BodyHandlers.ofString());
    }

    public HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return http.send(
                HttpRequest.newBuilder(uri(path))
                        .timeout(Duration.ofSeconds(60))
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** One line of a streamed body and when it arrived (ns, System.nanoTime). */
    public record Line(String text, long at) {}

    /** A POST whose body is read line by line as it arrives; {@code each} sees every line (it may throw to stop). */
    public HttpResponse<List<Line>> stream(String path, String json, Consumer<Line> each)
            throws IOException, InterruptedException {
        HttpResponse<InputStream> r = http.send(request(path, json), HttpResponse.BodyHandlers.ofInputStream());
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

    private HttpRequest request(String path, String json) {
        return HttpRequest.newBuilder(uri(path))
                .timeout(Duration.ofSeconds(120))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json))
                .build();
    }

    /** A completion body with token ids {@code from..to} (inclusive), and extra fields (JSON, without braces). */
    public static String completion(int from, int to, String extra) {
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

    public static JsonNode json(String s) {
        try {
            return JSON.readTree(s);
        } catch (IOException e) {
            throw new AssertionError("not JSON: " + s, e);
        }
    }

    /** Waits until {@code condition} holds, for at most {@code seconds}; fails with {@code what} otherwise. */
    public static void await(String what, double seconds, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + (long) (seconds * 1e9);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("waited " + seconds + " s for: " + what);
            }
            Thread.sleep(20);
        }
    }

    /**
     * Where the launcher installs the OpenAI Node SDK ({@code ./kvprefix setup}, npm): its version is the
     * launcher's {@code OPENAI_NODE_VERSION}, under {@code XDG_CACHE_HOME} or {@code ~/.cache}.
     */
    public static Path openAiSdkDir() throws IOException {
        Matcher m = Pattern.compile("(?m)^OPENAI_NODE_VERSION=(\\S+)$")
                .matcher(Files.readString(RepoPaths.root().resolve("kvprefix")));
        if (!m.find()) {
            throw new AssertionError("the launcher does not name the SDK's version (OPENAI_NODE_VERSION)");
        }
        String cache = System.getenv("XDG_CACHE_HOME");
        Path base =
                cache != null && !cache.isEmpty() ? Path.of(cache) : Path.of(System.getProperty("user.home"), ".cache");
        Path dir = base.resolve("kvprefix/npm/openai-" + m.group(1));
        if (!Files.isRegularFile(dir.resolve("node_modules/openai/package.json"))) {
            throw new AssertionError("the OpenAI Node SDK is not installed in " + dir
                    + ": run ./kvprefix setup (it installs openai@" + m.group(1) + " there with npm)");
        }
        return dir;
    }

    @Override
    public abstract void close();

    /** A streamed response whose body is the lines read. */
    private record Wrapped(HttpResponse<InputStream> r, List<Line> body) implements HttpResponse<List<Line>> {
        @Override
        public int statusCode() {
            return r.statusCode();
        }

        @Override
        public HttpRequest request() {
            return r.request();
        }

        @Override
        public Optional<HttpResponse<List<Line>>> previousResponse() {
            return Optional.empty();
        }

        @Override
        public HttpHeaders headers() {
            return r.headers();
        }

        @Override
        public Optional<SSLSession> sslSession() {
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
