package io.kvprefix.examples.gateway;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Runs the example as {@code ./kvprefix test} does: two stand-in vLLM engines ({@code kvprefix standin},
 * from the command line's jar), the gateway in front of them on a free port, then a few requests: the
 * KV-aware route sends a prompt back to the engine that cached it (the engine's own usage says so), an
 * event stream passes whole, the ordinary route balances round robin, and the router's meters are on
 * {@code /actuator/prometheus}. Exits 0 when every check holds, 1 otherwise.
 */
public final class RunExample {
    private static final HttpClient HTTP =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private RunExample() {}

    public static void main(String[] args) throws Exception {
        Process engines = startEngines();
        ConfigurableApplicationContext gateway = null;
        int status = 1;
        try {
            gateway = SpringApplication.run(GatewayApplication.class, "--PORT=0", "--server.address=127.0.0.1");
            String base = "http://127.0.0.1:" + gateway.getEnvironment().getProperty("local.server.port");
            check(base);
            status = 0;
        } catch (AssertionError | Exception e) {
            System.err.println("spring-gateway example: FAILED: " + e);
        } finally {
            if (gateway != null) {
                gateway.close();
            }
            engines.destroy();
            engines.waitFor();
        }
        System.exit(status);
    }

    private static void check(String base) throws Exception {
        String prompt = completion(0, 69, "\"max_tokens\":2");
        HttpResponse<String> first = post(base + "/v1/completions", prompt);
        expect(first.statusCode() == 200, "the KV-aware route answers: " + first.body());
        String worker = header(first, "x-kvprefix-worker");
        // the engine's KV events reach the index a moment after its answer: ask again until it knows
        HttpResponse<String> again = first;
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!header(again, "x-kvprefix-cached-blocks").equals("4") && System.nanoTime() < deadline) {
            Thread.sleep(100);
            again = post(base + "/v1/completions", prompt);
        }
        expect(header(again, "x-kvprefix-cached-blocks").equals("4"), "the index knows the prompt's 4 blocks");
        expect(header(again, "x-kvprefix-worker").equals(worker), "back to the engine that holds it, " + worker);
        expect(again.body().contains("\"cached_tokens\":64"), "that engine reports 64 cached tokens: " + again.body());
        System.out.println("spring-gateway example: KV-aware route: back to " + worker + " with 4 cached blocks");

        HttpResponse<String> stream =
                post(base + "/v1/completions", completion(500, 540, "\"max_tokens\":5,\"stream\":true"));
        long chunks = stream.body().lines().filter(l -> l.startsWith("data: {")).count();
        expect(chunks == 5 && stream.body().endsWith("data: [DONE]\n\n"), "the event stream passes: " + stream.body());
        System.out.println("spring-gateway example: event stream: 5 chunks and [DONE]");

        HttpResponse<String> plain = post(base + "/plain/v1/completions", prompt);
        expect(plain.statusCode() == 200, "the ordinary route answers: " + plain.body());
        expect(plain.headers().firstValue("x-kvprefix-worker").isEmpty(), "the ordinary route is not kvprefix's");
        System.out.println("spring-gateway example: ordinary route: answered by the round-robin load balancer");

        HttpResponse<String> metrics = HTTP.send(
                HttpRequest.newBuilder(URI.create(base + "/actuator/prometheus"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        expect(metrics.body().contains("kvprefix_service_requests_total"), "the router's meters are exported");
        System.out.println("spring-gateway example: /actuator/prometheus has the router's meters; all checks passed");
    }

    /** Starts {@code kvprefix standin --engines 2} and sets ENGINE1_* and ENGINE2_* from its READY line. */
    private static Process startEngines() throws IOException {
        Path jar = Path.of(System.getProperty("kvprefix.cli.jar", "../../cli/target/kvprefix-cli.jar"));
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("no " + jar + ": build the command line first (./kvprefix setup)");
        }
        Process p = new ProcessBuilder(List.of(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "--enable-native-access=ALL-UNNAMED",
                        "--sun-misc-unsafe-memory-access=allow",
                        "-Xmx256m",
                        "-jar",
                        jar.toString(),
                        "standin",
                        "--engines",
                        "2",
                        "--time-scale",
                        "0.05",
                        "--enable-prompt-tokens-details"))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        String ready = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
        Matcher m = Pattern.compile("\"worker\":(\\d+),\"http\":(\\d+),\"events\":(\\d+),\"replay\":(\\d+)")
                .matcher(ready == null ? "" : ready);
        for (int i = 1; i <= 2; i++) {
            if (!m.find()) {
                p.destroyForcibly();
                throw new IllegalStateException("the stand-in did not start: " + ready);
            }
            System.setProperty("ENGINE" + i + "_HTTP", "http://127.0.0.1:" + m.group(2));
            System.setProperty("ENGINE" + i + "_EVENTS", "tcp://127.0.0.1:" + m.group(3));
            System.setProperty("ENGINE" + i + "_REPLAY", "tcp://127.0.0.1:" + m.group(4));
        }
        return p;
    }

    private static String completion(int from, int to, String extra) {
        return "{\"model\":\"kvprefix-standin\",\"prompt\":"
                + IntStream.rangeClosed(from, to).mapToObj(Integer::toString).collect(Collectors.joining(",", "[", "]"))
                + "," + extra + "}";
    }

    private static HttpResponse<String> post(String url, String json) throws IOException, InterruptedException {
        return HTTP.send(
                HttpRequest.newBuilder(URI.create(url))
                        .timeout(Duration.ofSeconds(60))
                        .header("content-type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(json))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static String header(HttpResponse<?> r, String name) {
        return r.headers().firstValue(name).orElse("");
    }

    private static void expect(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }
}
