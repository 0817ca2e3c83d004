package io.kvprefix.simulator;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The results of a simulation, side by side: a terminal table, a JSON file and a self-contained HTML
 * page ({@link ReportPage}). It holds the main run (every policy at the settings' rate), the
 * request-rate sweep ({@link RateSweep}) and two yardsticks no policy can pass: the infinite-cache
 * bound on the hit rate and the TTFT floor ({@link Simulator#ttftFloorNs}).
 *
 * <p>Thread-safety: immutable.
 */
public final class SimulationReport {
    /**
     * The workload and its yardsticks.
     *
     * <p>Thread-safety: immutable.
     *
     * @param source where the requests came from
     * @param requests number of requests
     * @param tokensPerBlock tokens per block (512 for Mooncake traces, less after a split)
     * @param inputTokens input tokens over all requests
     * @param infiniteCacheHitTokens tokens an infinite shared cache would reuse ({@link Simulator#infiniteCacheHitTokens})
     * @param floorMeanMs mean of the TTFT floor, milliseconds
     * @param floorP50Ms median of the TTFT floor
     * @param floorP99Ms 99th percentile of the TTFT floor
     */
    public record TraceInfo(
            String source,
            int requests,
            int tokensPerBlock,
            long inputTokens,
            long infiniteCacheHitTokens,
            double floorMeanMs,
            double floorP50Ms,
            double floorP99Ms) {
        /** The infinite-cache bound on the hit rate. */
        public double hitRateBound() {
            return inputTokens == 0 ? 0 : (double) infiniteCacheHitTokens / inputTokens;
        }

        /** The workload of {@code trace} with its yardsticks under {@code settings}' engine model. */
        public static TraceInfo of(io.kvprefix.workload.Trace trace, SimSettings settings) {
            long[] floor = Simulator.ttftFloorNs(trace, settings);
            Arrays.sort(floor);
            double sum = 0;
            for (long f : floor) {
                sum += f;
            }
            return new TraceInfo(
                    trace.source(),
                    trace.size(),
                    trace.tokensPerBlock(),
                    Simulator.inputTokens(trace),
                    Simulator.infiniteCacheHitTokens(trace),
                    floor.length == 0 ? 0 : sum / floor.length / 1e6,
                    PolicyResult.quantile(floor, 0.5) / 1e6,
                    PolicyResult.quantile(floor, 0.99) / 1e6);
        }
    }

    private final TraceInfo trace;
    private final SimSettings settings;
    private final List<PolicyKind> kinds;
    private final List<PolicyResult> results;
    private final List<RateSweep.Point> sweep;
    private final TraceInfo sweepTrace;

    /**
     * A report of {@code results} (one per policy of {@code kinds}, in that order) and of a sweep
     * (points sorted by rate, each with one result per policy of {@code kinds}; may be empty) run on
     * {@code sweepTrace} (the trace, or its first requests).
     */
    public SimulationReport(
            TraceInfo trace,
            SimSettings settings,
            List<PolicyKind> kinds,
            List<PolicyResult> results,
            List<RateSweep.Point> sweep,
            TraceInfo sweepTrace) {
        this.trace = trace;
        this.sweepTrace = sweepTrace;
        this.settings = settings;
        this.kinds = List.copyOf(kinds);
        this.results = List.copyOf(results);
        this.sweep = List.copyOf(sweep);
    }

    /** The per-policy results of the main run. */
    public List<PolicyResult> results() {
        return results;
    }

    /** The policies, in display order. */
    public List<PolicyKind> kinds() {
        return kinds;
    }

    /** The rate sweep (empty if none was run). */
    public List<RateSweep.Point> sweep() {
        return sweep;
    }

    /** The workload of the sweep: the trace, or its first requests. */
    public TraceInfo sweepTrace() {
        return sweepTrace;
    }

    /** The workload. */
    public TraceInfo trace() {
        return trace;
    }

    /** The settings of the main run. */
    public SimSettings settings() {
        return settings;
    }

    /** The result of the policy named {@code name}. */
    public PolicyResult result(String name) {
        for (PolicyResult r : results) {
            if (r.name().equals(name)) {
                return r;
            }
        }
        throw new IllegalArgumentException("no policy named " + name);
    }

    static String f(String fmt, Object... args) {
        return String.format(Locale.ROOT, fmt, args);
    }

    /** The terminal table, then the sweep's. */
    public String table() {
        StringBuilder sb = new StringBuilder();
        sb.append(f(
                "%s: %,d requests, %,d input tokens, %d tokens per block%n",
                trace.source(), trace.requests(), trace.inputTokens(), trace.tokensPerBlock()));
        sb.append(settings.describe()).append(f("%n%n"));
        String row = "%-26s %9s %16s %11s %11s %11s %13s %17s%n";
        sb.append(f(
                row,
                "policy",
                "hit rate",
                "prefill tokens",
                "TTFT mean",
                "TTFT p50",
                "TTFT p99",
                "req/worker",
                "decision p50/p99"));
        sb.append(f(row, "", "", "", "ms", "ms", "ms", "max/min", "us"));
        for (PolicyResult r : results) {
            sb.append(f(
                    "%-26s %8.1f%% %,16d %11.1f %11.1f %11.1f %13s %17s%n",
                    r.name(),
                    100 * r.hitRate(),
                    r.prefillTokens(),
                    r.ttftMeanMs(),
                    r.ttftMs(0.5),
                    r.ttftMs(0.99),
                    r.maxRequestsPerWorker() + "/" + r.minRequestsPerWorker(),
                    f("%.1f/%.1f", r.decisionUs(0.5), r.decisionUs(0.99))));
        }
        sb.append(f(
                "%-26s %8.1f%%   (every full block whose prefix appeared before counts as a hit)%n",
                "infinite-cache bound", 100 * trace.hitRateBound()));
        sb.append(f(
                "%-26s %9s %16s %11.1f %11.1f %11.1f   (own prefill of what that cache would miss, idle engine)%n",
                "TTFT floor", "", "", trace.floorMeanMs(), trace.floorP50Ms(), trace.floorP99Ms()));
        if (!sweep.isEmpty()) {
            sb.append(sweepTable());
        }
        return sb.toString();
    }

    private String sweepTable() {
        StringBuilder sb = new StringBuilder(f(
                "%nrate sweep: TTFT mean / p99 in seconds at each request rate (x the trace's); knee = the highest rate"
                        + " whose mean stays within %.0fx the TTFT floor's (%.0f ms)%s%n",
                RateSweep.KNEE_FACTOR,
                sweepTrace.floorMeanMs(),
                sweepTrace.requests() == trace.requests() ? "" : f("; the first %,d requests", sweepTrace.requests())));
        sb.append(f("%-26s", "policy"));
        for (RateSweep.Point p : sweep) {
            sb.append(f(" %15s", "x" + SimSettings.trim(p.rate())));
        }
        sb.append(f(" %6s%n", "knee"));
        for (int i = 0; i < kinds.size(); i++) {
            sb.append(f("%-26s", kinds.get(i).key()));
            for (RateSweep.Point p : sweep) {
                PolicyResult r = p.results().get(i);
                sb.append(f(" %15s", f("%.2f / %.2f", r.ttftMeanMs() / 1e3, r.ttftMs(0.99) / 1e3)));
            }
            sb.append(f(" %6s%n", kneeText(RateSweep.knee(sweep, i, sweepTrace.floorMeanMs()))));
        }
        return sb.toString();
    }

    /** A knee as shown: {@code x4}, or {@code -} when there is none. */
    static String kneeText(double knee) {
        return Double.isNaN(knee) ? "-" : "x" + SimSettings.trim(knee);
    }

    /** Writes the JSON file. */
    public void writeJson(Path file) throws IOException {
        try (OutputStream out = Files.newOutputStream(file);
                JsonGenerator g = new JsonFactory().createGenerator(out, JsonEncoding.UTF8)) {
            g.useDefaultPrettyPrinter();
            g.writeStartObject();
            writeTrace(g);
            writeSettings(g);
            g.writeArrayFieldStart("policies");
            for (int i = 0; i < results.size(); i++) {
                writeResult(g, results.get(i), kinds.get(i), true);
            }
            g.writeEndArray();
            g.writeNumberField("sweep_requests", sweepTrace.requests());
            g.writeNumberField("sweep_ttft_floor_mean_ms", sweepTrace.floorMeanMs());
            g.writeArrayFieldStart("sweep");
            for (RateSweep.Point p : sweep) {
                g.writeStartObject();
                g.writeNumberField("rate", p.rate());
                g.writeArrayFieldStart("policies");
                for (int i = 0; i < p.results().size(); i++) {
                    writeResult(g, p.results().get(i), kinds.get(i), false);
                }
                g.writeEndArray();
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeObjectFieldStart("knees");
            for (int i = 0; i < kinds.size() && !sweep.isEmpty(); i++) {
                double knee = RateSweep.knee(sweep, i, sweepTrace.floorMeanMs());
                if (Double.isNaN(knee)) {
                    g.writeNullField(kinds.get(i).key());
                } else {
                    g.writeNumberField(kinds.get(i).key(), knee);
                }
            }
            g.writeEndObject();
            g.writeEndObject();
        }
    }

    private void writeTrace(JsonGenerator g) throws IOException {
        g.writeObjectFieldStart("trace");
        g.writeStringField("source", trace.source());
        g.writeNumberField("requests", trace.requests());
        g.writeNumberField("tokens_per_block", trace.tokensPerBlock());
        g.writeNumberField("input_tokens", trace.inputTokens());
        g.writeNumberField("infinite_cache_hit_tokens", trace.infiniteCacheHitTokens());
        g.writeNumberField("infinite_cache_hit_rate", trace.hitRateBound());
        g.writeNumberField("ttft_floor_mean_ms", trace.floorMeanMs());
        g.writeNumberField("ttft_floor_p50_ms", trace.floorP50Ms());
        g.writeNumberField("ttft_floor_p99_ms", trace.floorP99Ms());
        g.writeEndObject();
    }

    private void writeSettings(JsonGenerator g) throws IOException {
        g.writeObjectFieldStart("settings");
        g.writeNumberField("workers", settings.workers());
        g.writeNumberField("cache_blocks", settings.cacheBlocks());
        g.writeStringField("engine", settings.engine().key());
        g.writeNumberField("max_batched_tokens", settings.maxBatchedTokens());
        g.writeNumberField("max_num_seqs", settings.maxNumSeqs());
        g.writeNumberField("prefill_tokens_per_s", settings.prefillTokensPerS());
        g.writeNumberField("decode_tokens_per_s", settings.decodeTokensPerS());
        g.writeNumberField("event_delay_ms", settings.eventDelayNs() / 1e6);
        g.writeNumberField("rate", settings.rate());
        g.writeNumberField("slow_factor", settings.slowFactor());
        g.writeNumberField("join_at", settings.joinAt());
        g.writeNumberField("seed", settings.seed());
        g.writeNumberField("overlap_weight", settings.overlapWeight());
        g.writeNumberField("temperature", settings.temperature());
        g.writeNumberField("min_match_blocks", settings.minMatchBlocks());
        g.writeBooleanField("spread_misses", settings.spreadMisses());
        g.writeNumberField("predicted_ttl_s", settings.predictedTtl().toMillis() / 1000.0);
        g.writeNumberField("predicted_max_blocks", settings.predictedMaxBlocks());
        g.writeEndObject();
    }

    private static void writeResult(JsonGenerator g, PolicyResult r, PolicyKind k, boolean full) throws IOException {
        g.writeStartObject();
        g.writeStringField("policy", r.name());
        g.writeNumberField("requests", r.requests());
        g.writeNumberField("hit_rate", r.hitRate());
        if (full) {
            g.writeStringField("description", k.description());
            g.writeNumberField("input_tokens", r.inputTokens());
            g.writeNumberField("reused_tokens", r.reusedTokens());
            g.writeNumberField("prefill_tokens", r.prefillTokens());
            g.writeNumberField("held_elsewhere_tokens", r.heldElsewhereTokens());
        }
        g.writeNumberField("ttft_mean_ms", r.ttftMeanMs());
        g.writeNumberField("ttft_p50_ms", r.ttftMs(0.5));
        g.writeNumberField("ttft_p99_ms", r.ttftMs(0.99));
        g.writeNumberField("requests_per_worker_max", r.maxRequestsPerWorker());
        g.writeNumberField("requests_per_worker_min", r.minRequestsPerWorker());
        if (full) {
            g.writeArrayFieldStart("requests_per_worker");
            for (long n : r.requestsPerWorker()) {
                g.writeNumber(n);
            }
            g.writeEndArray();
            g.writeNumberField("decision_p50_us", r.decisionUs(0.5));
            g.writeNumberField("decision_p99_us", r.decisionUs(0.99));
        }
        g.writeNumberField("simulated_s", r.simulatedSeconds());
        g.writeEndObject();
    }

    /** Writes the HTML page. */
    public void writeHtml(Path file) throws IOException {
        new ReportPage(this).write(file);
    }
}
