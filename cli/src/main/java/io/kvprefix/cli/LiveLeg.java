package io.kvprefix.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvprefix.simulator.PolicyKind;
import io.kvprefix.simulator.PolicyResult;
import io.kvprefix.simulator.SimSettings;
import io.kvprefix.simulator.Simulator;
import io.kvprefix.workload.LocalHashTable;
import io.kvprefix.workload.Trace;
import io.kvprefix.workload.TraceRequest;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;

/**
 * The demo's live leg (docs/OPERATING.md section 12): the built-in workload, scaled down in tokens, on
 * real HTTP. Per policy it starts 8 stand-in vLLM engines and {@code kvprefix serve} as child processes,
 * drives the requests through the router with {@link LiveClient}, reads the router's decision cost and
 * its index's prediction from {@code /metrics}, and stops both by pid; the same scaled trace is then
 * simulated with the same settings, so each live figure stands next to its simulated one.
 *
 * <p>Thread-safety: one demo's thread.
 */
final class LiveLeg {
    static final int DEFAULT_REQUESTS = 2_000;
    static final int ENGINES = 8;
    /** Tokens each block id of the workload stands for here (512 in the simulation): prompts 16 times shorter. */
    static final int TOKENS_PER_ID = 32;
    /** The stand-ins' wall seconds per engine second. */
    static final double TIME_SCALE = 0.2;
    /** The request-rate multiplier, as {@code simulate --rate}. */
    static final double RATE = 8;

    static final int BLOCK_SIZE = 16;
    /** The stand-in's default cache (16,384 blocks of 16 tokens per engine). */
    static final int CACHE_BLOCKS = 16_384;

    static final List<PolicyKind> POLICIES = List.of(PolicyKind.KVPREFIX_TTFT, PolicyKind.ROUND_ROBIN);
    static final String MODEL = "kvprefix-standin";
    private static final int WARMUP_REQUESTS = 64;

    /**
     * What one policy's run measured.
     *
     * @param ttftMs each successful request's time to first token in engine milliseconds (wall time
     *     divided by the time scale), sorted
     * @param decisionMeanUs the router's mean decision cost (hash, match, policy), from its meters
     * @param decisionP50Us the bucket bound holding half its decisions; {@code decisionP99Us} likewise
     */
    record Measured(
            String policy,
            int requests,
            int errors,
            String firstError,
            double[] ttftMs,
            long promptTokens,
            long cachedTokens,
            double indexCachedTokens,
            double indexPromptTokens,
            long decisions,
            double decisionMeanUs,
            double decisionP50Us,
            double decisionP99Us,
            int workersUsed,
            double wallSeconds,
            PolicyResult simulated) {

        double ttft(double q) {
            if (ttftMs.length == 0) {
                return Double.NaN;
            }
            int rank = (int) Math.ceil(q * ttftMs.length);
            return ttftMs[Math.max(0, Math.min(ttftMs.length - 1, rank - 1))];
        }

        double ttftMean() {
            return Arrays.stream(ttftMs).average().orElse(Double.NaN);
        }

        double engineHitRate() {
            return promptTokens == 0 ? 0 : (double) cachedTokens / promptTokens;
        }

        double indexHitRate() {
            return indexPromptTokens == 0 ? 0 : indexCachedTokens / indexPromptTokens;
        }
    }

    private LiveLeg() {}

    /** The built-in workload's {@code trace} with each block id standing for {@code tokensPerId} tokens. */
    static Trace scaled(Trace trace, int tokensPerId) {
        List<TraceRequest> out = new ArrayList<>(trace.size());
        double f = (double) tokensPerId / trace.tokensPerBlock();
        for (TraceRequest r : trace.requests()) {
            long in = Math.max(1, Math.round(r.inputLength() * f));
            in = Math.min(in, (long) r.hashIds().length * tokensPerId);
            int outLen = (int) Math.max(1, Math.round(r.outputLength() * f));
            out.add(new TraceRequest(r.index(), r.timestampMs(), (int) in, outLen, r.hashIds(), r.line()));
        }
        return new Trace(trace.source() + ", " + tokensPerId + " tokens per block id", tokensPerId, out);
    }

    /** The simulation's settings for the live deployment: 8 engines, the stand-ins' cache, the live rate. */
    static SimSettings simSettings(SimSettings base) {
        return base.toBuilder()
                .workers(ENGINES)
                .cacheBlocks(CACHE_BLOCKS * BLOCK_SIZE / TOKENS_PER_ID)
                .rate(RATE)
                .build();
    }

    /** Every policy of {@link #POLICIES} live on {@code trace} (already {@link #scaled}), then simulated. */
    static List<Measured> run(Trace trace, SimSettings sim, Path dir, PrintStream err)
            throws IOException, InterruptedException {
        LocalHashTable hashes = LocalHashTable.forTrace(trace);
        List<Measured> out = new ArrayList<>();
        for (PolicyKind k : POLICIES) {
            err.println("kvprefix demo: live leg, " + k.key() + ": " + trace.size() + " requests through kvprefix serve"
                    + " to " + ENGINES + " stand-in engines...");
            PolicyResult simulated = Simulator.run(trace, hashes, sim, k, n -> {});
            out.add(leg(k, trace, simulated, dir));
        }
        return out;
    }

    private static Measured leg(PolicyKind k, Trace trace, PolicyResult simulated, Path dir)
            throws IOException, InterruptedException {
        try (LiveProcess engines = LiveProcess.start(
                        "stand-in engines", "512m", standinArgs(), dir.resolve("standin-" + k.key() + ".log"));
                LiveProcess serve = LiveProcess.start(
                        "kvprefix serve",
                        "512m",
                        serveArgs(k.key(), engines.ready()),
                        dir.resolve("serve-" + k.key() + ".log"))) {
            URI base =
                    URI.create("http://127.0.0.1:" + serve.ready().get("port").asInt());
            waitHealthy(base, serve);
            LiveClient client = new LiveClient(base, MODEL);
            warmUp(client, trace);
            PromText before = scrape(base);
            long t0 = System.nanoTime();
            List<LiveClient.Outcome> outcomes = client.drive(trace, TIME_SCALE / RATE);
            double seconds = (System.nanoTime() - t0) / 1e9;
            PromText after = scrape(base);
            return measure(k.key(), outcomes, before, after, seconds, simulated);
        }
    }

    private static List<String> standinArgs() {
        return List.of(
                "standin",
                "--engines",
                Integer.toString(ENGINES),
                "--host",
                "127.0.0.1",
                "--time-scale",
                Double.toString(TIME_SCALE),
                "--cache-blocks",
                Integer.toString(CACHE_BLOCKS),
                "--block-size",
                Integer.toString(BLOCK_SIZE),
                "--model",
                MODEL,
                "--enable-prompt-tokens-details");
    }

    static List<String> serveArgs(String policy, JsonNode standin) {
        List<String> a = new ArrayList<>(List.of(
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--policy",
                policy,
                "--block-size",
                "" + BLOCK_SIZE,
                "--health-interval",
                "0.5",
                "--health-timeout",
                "10",
                "--duration",
                "1800",
                "--quiet"));
        for (JsonNode e : standin.get("engines")) {
            a.add("--engine");
            a.add(e.get("worker").asLong() + "=http://127.0.0.1:"
                    + e.get("http").asInt() + ",events=tcp://127.0.0.1:"
                    + e.get("events").asInt() + ",replay=tcp://127.0.0.1:"
                    + e.get("replay").asInt());
        }
        return a;
    }

    /** Polls {@code /health} until every engine is up and the events have caught up (generous deadline). */
    static void waitHealthy(URI base, LiveProcess serve) throws IOException, InterruptedException {
        HttpClient http = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        String last = "";
        while (System.nanoTime() < deadline && serve.alive()) {
            try {
                HttpResponse<String> r = http.send(
                        HttpRequest.newBuilder(base.resolve("/health"))
                                .timeout(Duration.ofSeconds(10))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                last = r.body();
                if (r.statusCode() == 200 && !last.contains("\"up\":false")) {
                    return;
                }
            } catch (IOException e) {
                last = e.toString();
            }
            Thread.sleep(100); // polling a condition, with the deadline above
        }
        throw new IOException("kvprefix serve did not become healthy: " + last + "; " + LiveProcess.tail(serve.log()));
    }

    /**
     * A few requests on tokens the workload never uses (ids above its largest), so the router's and the
     * client's code is compiled before the measured run; they leave a few blocks in the caches.
     */
    private static void warmUp(LiveClient client, Trace trace) throws IOException {
        long id = trace.maxId() + 1;
        for (int i = 0; i < WARMUP_REQUESTS; i++) {
            TraceRequest r = new TraceRequest(0, 0, 64, 2, new long[] {id + i, id + i + 1}, 0);
            LiveClient.Outcome o = client.send(client.body(r, TOKENS_PER_ID));
            if (o.error() != null) {
                throw new IOException("a warm-up request through kvprefix serve failed: " + o.error());
            }
        }
    }

    static PromText scrape(URI base) throws IOException, InterruptedException {
        HttpResponse<String> r = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(base.resolve("/metrics"))
                                .timeout(Duration.ofSeconds(30))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException("kvprefix serve's /metrics answered " + r.statusCode());
        }
        return PromText.parse(r.body());
    }

    private static Measured measure(
            String policy,
            List<LiveClient.Outcome> outcomes,
            PromText before,
            PromText after,
            double seconds,
            PolicyResult simulated) {
        List<Double> ttft = new ArrayList<>();
        long prompt = 0;
        long cached = 0;
        int errors = 0;
        String firstError = null;
        HashSet<String> workers = new HashSet<>();
        for (LiveClient.Outcome o : outcomes) {
            if (o.error() != null) {
                errors++;
                firstError = firstError == null ? o.error() : firstError;
                continue;
            }
            ttft.add(o.ttftNanos() / 1e6 / TIME_SCALE);
            prompt += o.promptTokens();
            cached += Math.max(0, o.cachedTokens());
            workers.add(o.worker());
        }
        String route = "kvprefix_service_route_seconds";
        double count = after.sum(route + "_count", "") - before.sum(route + "_count", "");
        double sum = after.sum(route + "_sum", "") - before.sum(route + "_sum", "");
        return new Measured(
                policy,
                outcomes.size(),
                errors,
                firstError,
                ttft.stream().mapToDouble(Double::doubleValue).sorted().toArray(),
                prompt,
                cached,
                delta(before, after, "kvprefix_service_cached_tokens_total", "source=\"index\""),
                delta(before, after, "kvprefix_service_cache_reported_prompt_tokens_total", ""),
                Math.round(count),
                count == 0 ? Double.NaN : sum / count * 1e6,
                PromText.quantileBound(before, after, route, 0.5) * 1e6,
                PromText.quantileBound(before, after, route, 0.99) * 1e6,
                workers.size(),
                seconds,
                simulated);
    }

    private static double delta(PromText before, PromText after, String name, String labels) {
        return after.sum(name, labels) - before.sum(name, labels);
    }

    static String f(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }
}
