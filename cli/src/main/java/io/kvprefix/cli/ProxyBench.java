package io.kvprefix.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code kvprefix proxy-bench}'s measurements (docs/SERVE.md section 7, the method in
 * docs/BENCHMARKS.md section 8): {@code kvprefix serve} and nginx side by side in one run, in front of
 * the same stand-in engines, the targets alternating within each round: the time to the first byte
 * direct and through each proxy at several concurrencies, short requests per second with {@code wrk},
 * the resident memory each proxy adds per open idle stream, and the router's decision cost on a long
 * token-id prompt from its own meter.
 *
 * <p>Thread-safety: one command's thread; it starts and joins its own.
 */
final class ProxyBench {
    static final String MODEL = LiveLeg.MODEL;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String[] TARGETS = {"direct", "nginx", "kvprefix serve"};

    /** The benchmark's settings; {@code dir} holds the processes' logs and nginx's configuration. */
    record Options(
            int engines,
            int rounds,
            int requests,
            List<Integer> concurrency,
            int promptTokens,
            int wrkSeconds,
            int wrkConnections,
            int openStreams,
            int decisionTokens,
            int decisions,
            double timeScale,
            String policy,
            Path dir) {}

    private final Options o;
    private final PrintStream err;
    private final AtomicLong unique = new AtomicLong(1_000_000);
    /** TTFT samples (ms) by concurrency, then target. */
    private final Map<Integer, Map<String, List<Double>>> ttft = new LinkedHashMap<>();

    private final Map<String, List<Double>> wrk = new LinkedHashMap<>();
    private final Map<String, double[]> memory = new LinkedHashMap<>();
    private double[] decision;

    ProxyBench(Options o, PrintStream err) {
        this.o = o;
        this.err = err;
    }

    /** Runs every measurement and returns the table (Markdown, ready for benchmarks/RESULTS.md). */
    String run() throws IOException, InterruptedException {
        try (LiveProcess engines = LiveProcess.start("stand-in engines", "1g", standinArgs(false), log("standin"));
                LiveProcess serve = LiveProcess.start(
                        "kvprefix serve", "1g", LiveLeg.serveArgs(o.policy(), engines.ready()), log("serve"));
                NginxProcess nginx = NginxProcess.start(o.dir().resolve("nginx"), upstreams(engines))) {
            URI serveUri =
                    URI.create("http://127.0.0.1:" + serve.ready().get("port").asInt());
            LiveLeg.waitHealthy(serveUri, serve);
            List<URI> direct = engineUris(engines);
            URI nginxUri = URI.create("http://127.0.0.1:" + nginx.port());
            err.println("proxy-bench: warming up (not counted)");
            for (int c : o.concurrency()) {
                measureTtft(c, List.of(direct, List.of(nginxUri), List.of(serveUri)));
            }
            Wrk.requestsPerSecond(o, nginxUri);
            Wrk.requestsPerSecond(o, serveUri);
            ttft.clear();
            for (int round = 1; round <= o.rounds(); round++) {
                for (int c : o.concurrency()) {
                    err.println("proxy-bench: round " + round + ", " + c + " concurrent streams");
                    measureTtft(c, List.of(direct, List.of(nginxUri), List.of(serveUri)));
                }
                err.println("proxy-bench: round " + round + ", wrk");
                wrk.computeIfAbsent("nginx", k -> new ArrayList<>()).add(Wrk.requestsPerSecond(o, nginxUri));
                wrk.computeIfAbsent("kvprefix serve", k -> new ArrayList<>()).add(Wrk.requestsPerSecond(o, serveUri));
            }
            err.println("proxy-bench: decision cost, " + o.decisionTokens() + "-token prompt");
            decision = decisionCost(serveUri);
        }
        measureMemory();
        return ProxyBenchTable.render(o, ttft, wrk, memory, decision);
    }

    private Path log(String name) {
        return o.dir().resolve(name + ".log");
    }

    private List<String> standinArgs(boolean idle) {
        List<String> a = new ArrayList<>(List.of(
                "standin",
                "--engines",
                "" + o.engines(),
                "--host",
                "127.0.0.1",
                "--model",
                MODEL,
                "--max-num-seqs",
                "1024",
                "--max-num-batched-tokens",
                "65536",
                "--enable-prompt-tokens-details"));
        // idle: a decode step of 30 s, so a stream holds its connection with nothing flowing
        a.addAll(
                idle
                        ? List.of("--time-scale", "1", "--decode-us-per-token", "30000000")
                        : List.of("--time-scale", Double.toString(o.timeScale())));
        return a;
    }

    private static List<String> upstreams(LiveProcess engines) {
        List<String> u = new ArrayList<>();
        for (JsonNode e : engines.ready().get("engines")) {
            u.add("127.0.0.1:" + e.get("http").asInt());
        }
        return u;
    }

    private static List<URI> engineUris(LiveProcess engines) {
        return upstreams(engines).stream().map(u -> URI.create("http://" + u)).toList();
    }

    /** A streamed completion of a prompt no earlier request shares (its first token is new), {@code maxTokens} long. */
    String body(int tokens, int maxTokens) {
        StringBuilder sb =
                new StringBuilder("{\"model\":\"" + MODEL + "\",\"prompt\":[").append(unique.incrementAndGet());
        for (int i = 1; i < tokens; i++) {
            sb.append(',').append(i);
        }
        return sb.append("],\"max_tokens\":")
                .append(maxTokens)
                .append(",\"stream\":true,\"stream_options\":{\"include_usage\":true}}")
                .toString();
    }

    /** One pass per target at {@code c} closed-loop streams, each stream sending its share of the requests. */
    private void measureTtft(int c, List<List<URI>> targets) throws InterruptedException {
        int each = Math.max(1, (o.requests() + c - 1) / c);
        for (int t = 0; t < targets.size(); t++) {
            List<URI> uris = targets.get(t);
            List<LiveClient> clients =
                    uris.stream().map(u -> new LiveClient(u, MODEL)).toList();
            List<Double> out = ttft.computeIfAbsent(c, k -> new LinkedHashMap<>())
                    .computeIfAbsent(TARGETS[t], k -> new ArrayList<>());
            AtomicInteger failed = new AtomicInteger();
            List<Double> samples = java.util.Collections.synchronizedList(new ArrayList<>());
            try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
                for (int s = 0; s < c; s++) {
                    LiveClient client = clients.get(s % clients.size()); // direct: round robin over the engines
                    threads.submit(() -> {
                        for (int i = 0; i < each; i++) {
                            LiveClient.Outcome r = client.send(body(o.promptTokens(), 1));
                            if (r.error() != null) {
                                failed.incrementAndGet();
                            } else {
                                samples.add(r.ttftNanos() / 1e6);
                            }
                        }
                    });
                }
            }
            if (failed.get() > 0) {
                throw new IllegalStateException(failed.get() + " requests to " + TARGETS[t] + " at " + c
                        + " streams failed; logs in " + o.dir());
            }
            out.addAll(samples);
        }
    }

    /** The router's decision cost for a cached {@code decisionTokens}-token prompt: mean, p50 and p99 bounds (us). */
    private double[] decisionCost(URI serve) throws IOException, InterruptedException {
        HttpClient http = HttpClient.newHttpClient();
        String completion = body(o.decisionTokens(), 1);
        LiveClient.Outcome first = new LiveClient(serve, MODEL).send(completion);
        if (first.error() != null) {
            throw new IOException("the " + o.decisionTokens() + "-token prompt failed: " + first.error());
        }
        String route = completion.replace(",\"stream\":true,\"stream_options\":{\"include_usage\":true}", "");
        long want = o.decisionTokens() / LiveLeg.BLOCK_SIZE - 1;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (cachedBlocks(http, serve, route) < want && System.nanoTime() < deadline) {
            Thread.sleep(50); // the engine's events reach the index; polling with the deadline above
        }
        PromText before = LiveLeg.scrape(serve);
        for (int i = 0; i < o.decisions(); i++) {
            done(http, serve, route);
        }
        PromText after = LiveLeg.scrape(serve);
        String name = "kvprefix_service_route_seconds";
        double n = after.sum(name + "_count", "") - before.sum(name + "_count", "");
        double sum = after.sum(name + "_sum", "") - before.sum(name + "_sum", "");
        return new double[] {
            sum / n * 1e6,
            PromText.quantileBound(before, after, name, 0.5) * 1e6,
            PromText.quantileBound(before, after, name, 0.99) * 1e6,
            cachedBlocks(http, serve, route)
        };
    }

    /** Routes {@code body} through the route API and ends the decision; returns the path after {@code route/}. */
    private static String done(HttpClient http, URI serve, String body) throws IOException, InterruptedException {
        JsonNode d = JSON.readTree(post(http, serve, "/kvprefix/v1/route", body));
        String id = d.get("decision_id").asText();
        post(http, serve, "/kvprefix/v1/route/" + id + "/done", "");
        return id + "/done";
    }

    /** The deepest any engine holds of {@code body}'s prompt, by the index (the route API's {@code workers}). */
    private static long cachedBlocks(HttpClient http, URI serve, String body) throws IOException, InterruptedException {
        JsonNode d = JSON.readTree(post(http, serve, "/kvprefix/v1/route", body));
        post(http, serve, "/kvprefix/v1/route/" + d.get("decision_id").asText() + "/done", "");
        long deepest = 0;
        for (JsonNode w : d.path("workers")) {
            deepest = Math.max(deepest, w.path("cached_blocks").asLong());
        }
        return deepest;
    }

    private static String post(HttpClient http, URI base, String path, String body)
            throws IOException, InterruptedException {
        HttpResponse<String> r = http.send(
                HttpRequest.newBuilder(base.resolve(path))
                        .timeout(Duration.ofSeconds(60))
                        .header("content-type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        return r.statusCode() / 100 == 2 ? r.body() : "";
    }

    /** Each proxy's resident memory with {@code openStreams} idle streams open, less without (bytes per stream). */
    private void measureMemory() throws IOException, InterruptedException {
        try (LiveProcess engines = LiveProcess.start("idle stand-ins", "1g", standinArgs(true), log("standin-idle"));
                LiveProcess serve = LiveProcess.start(
                        "kvprefix serve", "1g", LiveLeg.serveArgs(o.policy(), engines.ready()), log("serve-idle"));
                NginxProcess nginx = NginxProcess.start(o.dir().resolve("nginx-idle"), upstreams(engines))) {
            URI serveUri =
                    URI.create("http://127.0.0.1:" + serve.ready().get("port").asInt());
            LiveLeg.waitHealthy(serveUri, serve);
            URI nginxUri = URI.create("http://127.0.0.1:" + nginx.port());
            for (int round = 0; round < 2; round++) { // the first round warms each proxy up
                err.println("proxy-bench: " + o.openStreams() + " open idle streams, round " + (round + 1));
                memory.put("nginx", openStreams(nginxUri, nginx.pids()));
                memory.put("kvprefix serve", openStreams(serveUri, List.of(serve.pid())));
            }
        }
    }

    /**
     * Opens {@code openStreams} streams through the proxy at {@code uri} (each answered with its headers,
     * its first token 30 engine seconds away), reads the proxy's resident memory, and closes them: returns
     * {bytes per stream, streams that failed}.
     */
    private double[] openStreams(URI uri, List<Long> pids) throws IOException, InterruptedException {
        long before = rss(pids);
        HttpClient http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(30))
                .build();
        int n = o.openStreams();
        CountDownLatch open = new CountDownLatch(n);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger failed = new AtomicInteger();
        long during;
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < n; i++) {
                String body = body(64, 1000);
                threads.submit(() -> hold(http, uri, body, open, release, failed));
            }
            boolean all = open.await(180, TimeUnit.SECONDS);
            during = rss(pids);
            if (!all) {
                failed.addAndGet((int) open.getCount());
            }
            release.countDown();
        }
        return new double[] {(double) (during - before) / n, failed.get()};
    }

    private static void hold(
            HttpClient http, URI uri, String body, CountDownLatch open, CountDownLatch release, AtomicInteger failed) {
        HttpRequest req = HttpRequest.newBuilder(uri.resolve("/v1/completions"))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        try {
            HttpResponse<InputStream> r = http.send(req, HttpResponse.BodyHandlers.ofInputStream());
            InputStream in = r.body();
            try {
                if (r.statusCode() != 200) {
                    failed.incrementAndGet();
                    System.err.println("proxy-bench: an open stream was answered " + r.statusCode());
                }
                open.countDown();
                release.await(); // closing the body then closes the connection: the proxy aborts upstream
            } finally {
                in.close();
            }
        } catch (IOException e) {
            failed.incrementAndGet();
            System.err.println("proxy-bench: an open stream failed: " + e);
            open.countDown();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The summed resident set of {@code pids}, bytes (/proc/PID/status, VmRSS). */
    static long rss(List<Long> pids) throws IOException {
        long sum = 0;
        for (long pid : pids) {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith("VmRSS:")) {
                    sum += Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        }
        return sum;
    }
}
