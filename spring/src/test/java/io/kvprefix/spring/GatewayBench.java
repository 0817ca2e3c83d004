package io.kvprefix.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.standin.testing.StandinProcess;
import io.micrometer.core.instrument.Timer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The benchmark of docs/SPRING.md section 6, not a test (its name keeps it out of {@code mvn test}; run
 * it with {@code -Dtest=GatewayBench}): one gateway with the KV-aware route and the plain round-robin
 * route over the same stand-in engines, measured side by side in alternating rounds at 1 and 64
 * concurrent streams: the time to the first event of each stream as the client sees it, and the
 * KV-aware route's own work per request (the {@code kvprefix.spring.decide} timer: body read,
 * classification, admission, routing). Two workloads: unique prompts (no prefix to find: the difference
 * is the filter's cost) and prompts in 8 groups sharing 192 of their 256 tokens (the cache's worth).
 * Settings: {@code kvprefix.bench.seconds} per round (default 10), {@code kvprefix.bench.rounds}
 * (default 3); the table goes to standard output and {@code kvprefix.bench.out} (default
 * {@code target/gateway-bench.txt}).
 */
class GatewayBench {
    private static final AtomicInteger NEXT = new AtomicInteger();

    @Test
    void firstByteAndTheFiltersCostSideBySide() throws Exception {
        int seconds = Integer.getInteger("kvprefix.bench.seconds", 10);
        int rounds = Integer.getInteger("kvprefix.bench.rounds", 3);
        Path out = Path.of(System.getProperty("kvprefix.bench.out", "target/gateway-bench.txt"));
        StringBuilder table = new StringBuilder(String.format(
                Locale.ROOT,
                "# gateway-bench: %d rounds of %d s per cell; stand-ins: 4 engines, prefill 100 us/token, decode 20 ms/token%n"
                        + "| workload | streams | route | round | requests | first byte p50 ms | p90 ms | p99 ms | mean ms | filter mean us | filter max us |%n"
                        + "|---|---|---|---|---|---|---|---|---|---|---|%n",
                rounds,
                seconds));
        try (StandinProcess engines = StandinProcess.start("--engines", "4", "--time-scale", "1");
                Gateway g = Gateway.start(Gateway.routes(engines.engines()))) {
            Timer decide =
                    g.service.meterRegistry().get("kvprefix.spring.decide").timer();
            run(g, "/v1/completions", "unique", 1, 3); // warm-up, both routes
            run(g, "/plain/v1/completions", "unique", 1, 3);
            for (String workload : List.of("unique", "shared")) {
                for (int streams : new int[] {1, 64}) {
                    for (int round = 1; round <= rounds; round++) {
                        for (String route : List.of("kv", "round-robin")) {
                            long n0 = decide.count();
                            double t0 = decide.totalTime(TimeUnit.MICROSECONDS);
                            List<Long> ttfb = run(
                                    g,
                                    route.equals("kv") ? "/v1/completions" : "/plain/v1/completions",
                                    workload,
                                    streams,
                                    seconds);
                            long n = decide.count() - n0;
                            String filter = route.equals("kv") && n > 0
                                    ? String.format(
                                            Locale.ROOT,
                                            "%.1f | %.1f",
                                            (decide.totalTime(TimeUnit.MICROSECONDS) - t0) / n,
                                            decide.max(TimeUnit.MICROSECONDS))
                                    : "- | -";
                            table.append(row(workload, streams, route, round, ttfb, filter));
                        }
                    }
                }
            }
        }
        System.out.print(table);
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, table);
    }

    private static String row(String workload, int streams, String route, int round, List<Long> ttfb, String filter) {
        List<Long> s = new ArrayList<>(ttfb);
        Collections.sort(s);
        double mean = s.stream().mapToLong(Long::longValue).average().orElse(0) / 1e6;
        return String.format(
                Locale.ROOT,
                "| %s | %d | %s | %d | %d | %.2f | %.2f | %.2f | %.2f | %s |%n",
                workload,
                streams,
                route,
                round,
                s.size(),
                pct(s, 0.50),
                pct(s, 0.90),
                pct(s, 0.99),
                mean,
                filter);
    }

    private static double pct(List<Long> sorted, double q) {
        return sorted.isEmpty() ? 0 : sorted.get((int) Math.min(sorted.size() - 1, q * sorted.size())) / 1e6;
    }

    /** {@code streams} clients, each sending streamed requests one after another for {@code seconds}. */
    private static List<Long> run(Gateway g, String path, String workload, int streams, int seconds) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        ExecutorService pool = Executors.newFixedThreadPool(streams);
        try {
            List<Future<List<Long>>> fs = new ArrayList<>();
            for (int i = 0; i < streams; i++) {
                fs.add(pool.submit(() -> {
                    List<Long> mine = new ArrayList<>();
                    while (System.nanoTime() < end) {
                        mine.add(firstByte(g, path, prompt(workload, NEXT.getAndIncrement())));
                    }
                    return mine;
                }));
            }
            List<Long> all = new ArrayList<>();
            for (Future<List<Long>> f : fs) {
                all.addAll(f.get(seconds + 300L, TimeUnit.SECONDS));
            }
            return all;
        } finally {
            pool.shutdownNow();
        }
    }

    /** One streamed request: nanoseconds from sending it to its first event; the rest is read to the end. */
    private static long firstByte(Gateway g, String path, String body) throws Exception {
        long t0 = System.nanoTime();
        HttpResponse<java.io.InputStream> r = g.http.send(
                HttpRequest.newBuilder(g.uri(path))
                        .timeout(Duration.ofSeconds(120))
                        .header("content-type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, r.statusCode());
        long first = -1;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
            for (String l; (l = in.readLine()) != null; ) {
                if (first < 0 && l.startsWith("data: ")) {
                    first = System.nanoTime() - t0;
                }
            }
        }
        assertTrue(first > 0, "a stream with an event");
        return first;
    }

    /** 256 token ids: unique per request, or 192 shared by one of 8 groups and 64 of its own. */
    static String prompt(String workload, int n) {
        StringBuilder sb = new StringBuilder("{\"model\":\"" + Gateway.MODEL + "\",\"prompt\":[");
        for (int i = 0; i < 256; i++) {
            int id = workload.equals("shared") && i < 192
                    ? 1 + (n % 8) * 192 + i
                    : 1 + (int) ((n * 7919L + i * 104_729L) % 30_000); // a first token of its own for 30,000 requests
            sb.append(i == 0 ? "" : ",").append(id);
        }
        return sb.append("],\"max_tokens\":2,\"stream\":true}").toString();
    }
}
