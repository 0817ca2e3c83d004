package io.kvprefix.cli;

import io.kvprefix.epp.EppServer;
import io.kvprefix.service.EngineSpec;
import io.kvprefix.service.RouterService;
import io.kvprefix.service.ServiceOptions;
import io.kvprefix.standin.Standin;
import io.kvprefix.standin.StandinSettings;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code kvprefix epp-bench}: the endpoint picker's added latency and throughput, and whether a body
 * cut into one-byte chunks is picked as the whole one (docs/EPP.md section 9). Everything runs in this
 * process on loopback: stand-in engines whose KV events feed a real index (warmed with requests sent
 * to the engines directly), the picker, and a gateway-side gRPC client replaying Envoy's messages.
 *
 * <p>Thread-safety: a command object, used once by one thread.
 */
@Command(
        name = "epp-bench",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Measure the endpoint picker's added latency, requests per second and chunking stability.",
            "Per prompt size and concurrency: p50/p99 from the first ext_proc message out to the",
            "destination in, and requests per second, over stand-in engines in this process; then the",
            "fraction of picks that change when the body comes in one-byte chunks (target 0).",
            "docs/EPP.md section 9."
        })
final class EppBenchCommand implements Callable<Integer> {
    @Option(
            names = "--tokens",
            paramLabel = "N,N",
            defaultValue = "1024,8192",
            split = ",",
            description = "prompt sizes in tokens (default: ${DEFAULT-VALUE})")
    List<Integer> tokens;

    @Option(
            names = "--concurrency",
            paramLabel = "N,N",
            defaultValue = "1,64,512",
            split = ",",
            description = "concurrent streams (default: ${DEFAULT-VALUE})")
    List<Integer> concurrency;

    @Option(
            names = "--requests",
            paramLabel = "N",
            defaultValue = "2000",
            description = "measured requests per cell (default: ${DEFAULT-VALUE})")
    int requests;

    @Option(
            names = "--warmup",
            paramLabel = "N",
            defaultValue = "500",
            description = "requests before each cell, not measured (default: ${DEFAULT-VALUE})")
    int warmup;

    @Mixin
    BenchFlags bench = new BenchFlags();

    @Option(
            names = "--prefixes",
            paramLabel = "N",
            defaultValue = "32",
            description = "prompts cached on the engines before measuring (default: ${DEFAULT-VALUE})")
    int prefixes;

    @Option(
            names = "--chunk-checks",
            paramLabel = "N",
            defaultValue = "20",
            description = "bodies picked whole and in one-byte chunks, per prompt size (default: ${DEFAULT-VALUE})")
    int chunkChecks;

    @Option(
            names = "--policy",
            paramLabel = "NAME",
            defaultValue = "dynamo-cost",
            description = "routing policy (default: ${DEFAULT-VALUE})")
    String policy;

    @Override
    public Integer call() throws Exception {
        check();
        try (Standin standin = Standin.start(StandinSettings.builder()
                        .engines(bench.engines)
                        .timeScale(0.01)
                        .maxModelLen(Math.max(
                                4096, 2 * tokens.stream().max(Integer::compare).orElseThrow()))
                        .build());
                RouterService service = service(standin);
                EppServer epp = EppServer.start(
                        service, EppServer.options().host("127.0.0.1").port(0).healthPort(0));
                EppBenchClient client = new EppBenchClient(epp.port())) {
            awaitReady(service);
            System.out.println("tokens\tconcurrency\trequests\treq_per_s\tp50_ms\tp99_ms\trefused");
            for (int t : tokens) {
                warm(standin, service, t);
                for (int c : concurrency) {
                    cell(client, t, c);
                }
            }
            for (int t : tokens) {
                chunking(client, t);
            }
            return 0;
        }
    }

    private void check() {
        tokens.forEach(t -> Check.atLeast("--tokens", t, 16));
        concurrency = BenchFlags.concurrency(concurrency);
        Check.atLeast("--requests", requests, 1);
        Check.atLeast("--warmup", warmup, 0);
        bench.engines(64);
        Check.atLeast("--prefixes", prefixes, 1);
        Check.atLeast("--chunk-checks", chunkChecks, 0);
        policy = BenchFlags.policy(policy);
    }

    private RouterService service(Standin standin) {
        ServiceOptions o =
                RouterService.builder().policy(policy).maxInFlight(8192).maxQueued(8192);
        for (Standin.BoundEngine e : standin.engines()) {
            o.engine(EngineSpec.parse(e.worker() + "=http://127.0.0.1:" + e.http() + ",events=tcp://127.0.0.1:"
                    + e.events() + ",replay=tcp://127.0.0.1:" + e.replay()));
        }
        return o.build();
    }

    private static void awaitReady(RouterService service) throws InterruptedException {
        long end = System.nanoTime() + 120_000_000_000L;
        while (service.notReady() != null) {
            if (System.nanoTime() > end) {
                throw new IllegalStateException("the stand-in engines did not come up: " + service.notReady());
            }
            Thread.sleep(50);
        }
    }

    /** A completion body: prefix {@code p}'s first half of {@code n} tokens, then a tail of request {@code i}'s own. */
    static byte[] body(int p, int i, int n) {
        StringBuilder sb =
                new StringBuilder(n * 7 + 80).append("{\"model\":\"kvprefix-standin\",\"max_tokens\":1,\"prompt\":[");
        for (int k = 0; k < n; k++) {
            int id = k < n / 2 ? 1_000_000 + p * 100_000 + k : 5_000_000 + (i % 1_000_000) * 3 + k;
            sb.append(k == 0 ? "" : ",").append(id);
        }
        return sb.append("]}").toString().getBytes(StandardCharsets.UTF_8);
    }

    /** Caches every prefix on one engine (sent to it directly) and waits until the index holds them. */
    private void warm(Standin standin, RouterService service, int n) throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        List<Standin.BoundEngine> es = standin.engines();
        for (int p = 0; p < prefixes; p++) {
            Standin.BoundEngine e = es.get(p % es.size());
            http.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + e.http() + "/v1/completions"))
                            .header("content-type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofByteArray(body(p, -1, n)))
                            .build(),
                    HttpResponse.BodyHandlers.discarding());
        }
        // the events arrive asynchronously: wait until the index holds the prompts' first halves, or stops growing
        long want = (long) prefixes * (n / 2 / 16);
        long end = System.nanoTime() + 120_000_000_000L;
        long last = -1;
        while (true) {
            long now = service.index().stats().blocks();
            if (now >= want || (now > 0 && now == last)) {
                return;
            }
            if (System.nanoTime() > end) {
                throw new IllegalStateException("the engines' KV events did not arrive within 120 s");
            }
            last = now;
            Thread.sleep(1000);
        }
    }

    private void cell(EppBenchClient client, int n, int c) throws Exception {
        run(client, n, c, warmup, new long[Math.max(1, warmup)]);
        long[] nanos = new long[requests];
        long t0 = System.nanoTime();
        int refused = run(client, n, c, requests, nanos);
        double seconds = (System.nanoTime() - t0) / 1e9;
        Arrays.sort(nanos);
        System.out.println(String.format(
                Locale.ROOT,
                "%d\t%d\t%d\t%.0f\t%.3f\t%.3f\t%d",
                n,
                c,
                requests,
                requests / seconds,
                nanos[(int) (0.50 * (requests - 1))] / 1e6,
                nanos[(int) (0.99 * (requests - 1))] / 1e6,
                refused));
    }

    /** {@code total} requests over {@code c} streams at once, each latency into {@code nanos}; returns the refused. */
    private int run(EppBenchClient client, int n, int c, int total, long[] nanos) throws Exception {
        AtomicInteger next = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        byte[][] bodies = new byte[Math.min(total, 256)][];
        for (int i = 0; i < bodies.length; i++) {
            bodies[i] = body(i % prefixes, i, n);
        }
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<?>> fs = new ArrayList<>();
            for (int k = 0; k < c; k++) {
                fs.add(pool.submit(() -> {
                    for (int i = next.getAndIncrement(); i < total; i = next.getAndIncrement()) {
                        EppBenchClient.Result r = client.request(bodies[i % bodies.length], 65_536);
                        nanos[i] = r.nanos();
                        if (r.destination() == null) {
                            refused.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        }
        return refused.get();
    }

    private void chunking(EppBenchClient client, int n) throws Exception {
        int changed = 0;
        for (int i = 0; i < chunkChecks; i++) {
            byte[] b = body(i % prefixes, 7_000_000 + i, n);
            String whole = first(client.request(b, b.length));
            String bytes = first(client.request(b, 1));
            if (!whole.equals(bytes)) {
                changed++;
            }
        }
        System.out.println(String.format(
                Locale.ROOT,
                "one-byte chunks, %d tokens: %d of %d picks changed (%.3f)",
                n,
                changed,
                chunkChecks,
                chunkChecks == 0 ? 0.0 : (double) changed / chunkChecks));
    }

    private static String first(EppBenchClient.Result r) {
        if (r.destination() == null) {
            throw new IllegalStateException("the picker refused a request of the chunking check");
        }
        return r.destination().split(",")[0];
    }
}
