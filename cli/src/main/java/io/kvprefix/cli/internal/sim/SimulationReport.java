package io.kvprefix.cli.internal.sim;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The results of a simulation, side by side: a terminal table, a JSON file and a self-contained HTML
 * page with charts (hand-written inline SVG: it opens from disk in any browser, without a server or
 * anything from the network).
 *
 * <p>Thread-safety: immutable.
 */
public final class SimulationReport {
    private static final String[] COLORS = {"#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#d62728", "#17becf"
    };

    /**
     * The workload.
     *
     * <p>Thread-safety: immutable.
     *
     * @param source where the requests came from
     * @param requests number of requests
     * @param tokensPerBlock tokens per block (512 for Mooncake traces, less after a split)
     * @param inputTokens input tokens over all requests
     * @param infiniteCacheHitTokens tokens an infinite shared cache would reuse ({@link Simulator#infiniteCacheHitTokens})
     */
    public record TraceInfo(
            String source, int requests, int tokensPerBlock, long inputTokens, long infiniteCacheHitTokens) {
        /** The infinite-cache bound on the hit rate. */
        public double hitRateBound() {
            return inputTokens == 0 ? 0 : (double) infiniteCacheHitTokens / inputTokens;
        }
    }

    private final TraceInfo trace;
    private final SimSettings settings;
    private final List<PolicyResult> results;

    /** A report of {@code results} (one per policy, in display order). */
    public SimulationReport(TraceInfo trace, SimSettings settings, List<PolicyResult> results) {
        this.trace = trace;
        this.settings = settings;
        this.results = List.copyOf(results);
    }

    /** The per-policy results. */
    public List<PolicyResult> results() {
        return results;
    }

    /** The workload. */
    public TraceInfo trace() {
        return trace;
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

    private static String f(String fmt, Object... args) {
        return String.format(Locale.ROOT, fmt, args);
    }

    /** The terminal table. */
    public String table() {
        StringBuilder sb = new StringBuilder();
        sb.append(f(
                "%s: %,d requests, %,d input tokens, %d tokens per block%n",
                trace.source(), trace.requests(), trace.inputTokens(), trace.tokensPerBlock()));
        sb.append(f(
                "%d workers x %,d blocks%s; prefill %,.0f tokens/s per worker, decode %,.0f tokens/s per request%n%n",
                settings.workers(),
                settings.cacheBlocks(),
                settings.cpuBlocks() == 0
                        ? ""
                        : f(
                                " + %,d CPU-tier blocks (loaded back at %,.0f tokens/s; a hit counts GPU and CPU blocks)",
                                settings.cpuBlocks(), settings.onloadTokensPerS()),
                settings.prefillTokensPerS(),
                settings.decodeTokensPerS()));
        sb.append(f(
                "%-22s %9s %16s %11s %11s %11s %13s %17s%n",
                "policy",
                "hit rate",
                "prefill tokens",
                "TTFT mean",
                "TTFT p50",
                "TTFT p99",
                "req/worker",
                "decision p50/p99"));
        sb.append(f("%-22s %9s %16s %11s %11s %11s %13s %17s%n", "", "", "", "ms", "ms", "ms", "max/min", "us"));
        for (PolicyResult r : results) {
            sb.append(f(
                    "%-22s %8.1f%% %,16d %11.1f %11.1f %11.1f %13s %17s%n",
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
                "%-22s %8.1f%%   (every full block whose prefix appeared before counts as a hit)%n",
                "infinite-cache bound", 100 * trace.hitRateBound()));
        return sb.toString();
    }

    /** Writes the JSON file. */
    public void writeJson(Path file) throws IOException {
        try (OutputStream out = Files.newOutputStream(file);
                JsonGenerator g = new JsonFactory().createGenerator(out, JsonEncoding.UTF8)) {
            g.useDefaultPrettyPrinter();
            g.writeStartObject();
            g.writeObjectFieldStart("trace");
            g.writeStringField("source", trace.source());
            g.writeNumberField("requests", trace.requests());
            g.writeNumberField("tokens_per_block", trace.tokensPerBlock());
            g.writeNumberField("input_tokens", trace.inputTokens());
            g.writeNumberField("infinite_cache_hit_tokens", trace.infiniteCacheHitTokens());
            g.writeNumberField("infinite_cache_hit_rate", trace.hitRateBound());
            g.writeEndObject();
            g.writeObjectFieldStart("settings");
            g.writeNumberField("workers", settings.workers());
            g.writeNumberField("cache_blocks", settings.cacheBlocks());
            g.writeNumberField("prefill_tokens_per_s", settings.prefillTokensPerS());
            g.writeNumberField("decode_tokens_per_s", settings.decodeTokensPerS());
            g.writeNumberField("seed", settings.seed());
            g.writeNumberField("overlap_weight", settings.overlapWeight());
            g.writeNumberField("temperature", settings.temperature());
            g.writeNumberField("min_match_blocks", settings.minMatchBlocks());
            g.writeBooleanField("spread_misses", settings.spreadMisses());
            g.writeNumberField("predicted_ttl_s", settings.predictedTtl().toMillis() / 1000.0);
            g.writeNumberField("predicted_max_blocks", settings.predictedMaxBlocks());
            g.writeEndObject();
            g.writeArrayFieldStart("policies");
            for (PolicyResult r : results) {
                g.writeStartObject();
                g.writeStringField("policy", r.name());
                g.writeNumberField("requests", r.requests());
                g.writeNumberField("hit_rate", r.hitRate());
                g.writeNumberField("input_tokens", r.inputTokens());
                g.writeNumberField("reused_tokens", r.reusedTokens());
                g.writeNumberField("prefill_tokens", r.prefillTokens());
                g.writeNumberField("ttft_mean_ms", r.ttftMeanMs());
                g.writeNumberField("ttft_p50_ms", r.ttftMs(0.5));
                g.writeNumberField("ttft_p99_ms", r.ttftMs(0.99));
                g.writeNumberField("requests_per_worker_max", r.maxRequestsPerWorker());
                g.writeNumberField("requests_per_worker_min", r.minRequestsPerWorker());
                g.writeArrayFieldStart("requests_per_worker");
                for (long n : r.requestsPerWorker()) {
                    g.writeNumber(n);
                }
                g.writeEndArray();
                g.writeNumberField("decision_p50_us", r.decisionUs(0.5));
                g.writeNumberField("decision_p99_us", r.decisionUs(0.99));
                g.writeNumberField("simulated_s", r.simulatedSeconds());
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        }
    }

    /** Writes the HTML page. */
    public void writeHtml(Path file) throws IOException {
        StringBuilder h = new StringBuilder();
        h.append(
                "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>kvprefix routing simulation</title>\n");
        h.append("<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px;color:#222}"
                + "table{border-collapse:collapse;margin:1em 0}td,th{padding:4px 10px;border-bottom:1px solid #ddd;text-align:right}"
                + "td:first-child,th:first-child{text-align:left}th{background:#f4f4f4}h2{margin-top:1.6em}"
                + "svg{display:block;margin:0.5em 0}.note{color:#555;font-size:0.92em}</style></head><body>\n");
        h.append("<h1>kvprefix routing simulation</h1>\n");
        h.append("<p>")
                .append(esc(trace.source()))
                .append(": ")
                .append(f("%,d", trace.requests()))
                .append(" requests, ")
                .append(f("%,d", trace.inputTokens()))
                .append(" input tokens, ")
                .append(trace.tokensPerBlock())
                .append(" tokens per block. ")
                .append(settings.workers())
                .append(" mock engines of ")
                .append(f("%,d", settings.cacheBlocks()))
                .append(" blocks (LRU prefix cache).</p>\n");
        h.append("<p class=\"note\">Cost model: one prefill at a time per worker, first come first served, at ")
                .append(f("%,.0f", settings.prefillTokensPerS()))
                .append(" uncached tokens/s; TTFT = queueing + own prefill; decode beside it at ")
                .append(f("%,.0f", settings.decodeTokensPerS()))
                .append(" tokens/s per request. The KV-aware policies are kvprefix's Router " + "(overlap weight ")
                .append(settings.overlapWeight())
                .append(", temperature ")
                .append(settings.temperature())
                .append("); its event-fed index hears each admission's KV events when the prefill ends. "
                        + "Decision cost is the wall-clock time of the routing call, hashing included.</p>\n");

        h.append(
                "<table><tr><th>policy</th><th>hit rate</th><th>prefill tokens</th><th>TTFT mean (ms)</th><th>TTFT p50 (ms)</th>"
                        + "<th>TTFT p99 (ms)</th><th>requests per worker max/min</th><th>decision p50/p99 (&micro;s)</th></tr>\n");
        for (PolicyResult r : results) {
            h.append("<tr><td>")
                    .append(esc(r.name()))
                    .append("</td><td>")
                    .append(f("%.1f%%", 100 * r.hitRate()))
                    .append("</td><td>")
                    .append(f("%,d", r.prefillTokens()))
                    .append("</td><td>")
                    .append(f("%.1f", r.ttftMeanMs()))
                    .append("</td><td>")
                    .append(f("%.1f", r.ttftMs(0.5)))
                    .append("</td><td>")
                    .append(f("%.1f", r.ttftMs(0.99)))
                    .append("</td><td>")
                    .append(r.maxRequestsPerWorker())
                    .append(" / ")
                    .append(r.minRequestsPerWorker())
                    .append("</td><td>")
                    .append(f("%.1f / %.1f", r.decisionUs(0.5), r.decisionUs(0.99)))
                    .append("</td></tr>\n");
        }
        h.append("<tr><td>infinite-cache bound</td><td>")
                .append(f("%.1f%%", 100 * trace.hitRateBound()))
                .append(
                        "</td><td colspan=\"6\" style=\"text-align:left\" class=\"note\">every full block whose prefix appeared in an earlier request counts as a hit</td></tr>\n");
        h.append("</table>\n");

        h.append("<h2>Prefix-cache hit rate</h2>\n").append(hitRateChart());
        h.append("<h2>Time to first token</h2>\n").append(ttftChart());
        h.append("<h2>Requests per worker</h2>\n").append(loadChart());
        h.append("</body></html>\n");
        Files.writeString(file, h, StandardCharsets.UTF_8);
    }

    private String hitRateChart() {
        int label = 170;
        int width = 760;
        int bar = 26;
        int gap = 10;
        int top = 26;
        int plot = width - label - 70;
        int bottom = top + results.size() * (bar + gap);
        int height = bottom + 30;
        StringBuilder s = svgOpen(width, height);
        for (int i = 0; i < results.size(); i++) {
            PolicyResult r = results.get(i);
            int y = top + i * (bar + gap);
            double w = plot * r.hitRate();
            s.append(text(label - 8, y + bar * 0.7, "end", r.name()));
            s.append(f(
                    "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>", label, y, w, bar, color(i)));
            s.append(text(label + w + 6, y + bar * 0.7, "start", f("%.1f%%", 100 * r.hitRate())));
        }
        double bx = label + plot * trace.hitRateBound();
        s.append(f(
                "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#d62728\" stroke-dasharray=\"5,4\" stroke-width=\"2\"/>",
                bx, top - 6, bx, bottom));
        s.append(f(
                "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#d62728\">%s</text>",
                bx, top - 10, esc(f("infinite-cache bound %.1f%%", 100 * trace.hitRateBound()))));
        s.append(axis(label, bottom, plot));
        return s.append("</svg>\n").toString();
    }

    private String ttftChart() {
        int label = 170;
        int width = 760;
        int bar = 12;
        int groupGap = 14;
        int plot = width - label - 90;
        double max = 0;
        for (PolicyResult r : results) {
            max = Math.max(max, Math.max(r.ttftMs(0.99), r.ttftMeanMs()));
        }
        max = max <= 0 ? 1 : max;
        int group = 3 * bar + groupGap;
        int height = results.size() * group + 50;
        StringBuilder s = svgOpen(width, height);
        String[] what = {"mean", "p50", "p99"};
        String[] shade = {"#4e79a7", "#a0cbe8", "#e15759"};
        for (int i = 0; i < results.size(); i++) {
            PolicyResult r = results.get(i);
            double[] v = {r.ttftMeanMs(), r.ttftMs(0.5), r.ttftMs(0.99)};
            int y0 = 10 + i * group;
            s.append(text(label - 8, y0 + 1.5 * bar + 4, "end", r.name()));
            for (int k = 0; k < 3; k++) {
                double w = plot * v[k] / max;
                int y = y0 + k * bar;
                s.append(f(
                        "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>%s %s %.1f ms</title></rect>",
                        label, y, w, bar - 1, shade[k], esc(r.name()), what[k], v[k]));
                s.append(f(
                        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">%s %.0f ms</text>",
                        label + w + 4, y + bar - 2.5, what[k], v[k]));
            }
        }
        int bottom = 10 + results.size() * group;
        s.append(f("<text x=\"%d\" y=\"%d\" font-size=\"11\">0</text>", label, bottom + 16));
        s.append(text(label + plot, bottom + 16, "end", f("%.0f ms", max)));
        s.append(f(
                "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>",
                label, bottom, label + plot, bottom));
        return s.append("</svg>\n").toString();
    }

    private String loadChart() {
        int workers = settings.workers();
        int label = 170;
        int width = 760;
        int row = 64;
        int plot = width - label - 80;
        long max = 1;
        for (PolicyResult r : results) {
            max = Math.max(max, r.maxRequestsPerWorker());
        }
        int height = results.size() * (row + 12) + 30;
        StringBuilder s = svgOpen(width, height);
        double slot = (double) plot / workers;
        double bw = Math.max(1, slot * 0.8);
        for (int i = 0; i < results.size(); i++) {
            PolicyResult r = results.get(i);
            long[] n = r.requestsPerWorker();
            int base = 10 + i * (row + 12) + row;
            s.append(text(label - 8, base - row / 2.0 + 4, "end", r.name()));
            for (int w = 0; w < n.length; w++) {
                double hgt = (double) row * n[w] / max;
                s.append(f(
                        "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>worker %d: %d requests</title></rect>",
                        label + w * slot, base - hgt, bw, hgt, color(i), w, n[w]));
            }
            s.append(f(
                    "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>",
                    label, base, label + plot, base));
            s.append(text(
                    label + plot + 6,
                    base - row / 2.0 + 4,
                    "start",
                    r.maxRequestsPerWorker() + " / " + r.minRequestsPerWorker()));
        }
        s.append(text(
                label + plot / 2.0,
                height - 8,
                "middle",
                "workers 0.." + (workers - 1) + " (bar height: requests; right: max / min; scale 0.." + max + ")"));
        return s.append("</svg>\n").toString();
    }

    private static StringBuilder svgOpen(int width, int height) {
        return new StringBuilder(f(
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                        + "font-family=\"system-ui,sans-serif\" font-size=\"12\">",
                width, height, width, height));
    }

    private static String axis(int x, int y, int plot) {
        StringBuilder s = new StringBuilder();
        s.append(f("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>", x, y, x + plot, y));
        for (int p = 0; p <= 100; p += 25) {
            double px = x + plot * p / 100.0;
            s.append(f("<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#888\"/>", px, y, px, y + 4));
            s.append(f(
                    "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\" fill=\"#555\">%d%%</text>",
                    px, y + 16, p));
        }
        return s.toString();
    }

    private static String text(double x, double y, String anchor, String t) {
        return f("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%s</text>", x, y, anchor, esc(t));
    }

    private static String color(int i) {
        return COLORS[i % COLORS.length];
    }

    /** Escapes text for HTML and SVG. */
    static String esc(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '<' -> b.append("&lt;");
                case '>' -> b.append("&gt;");
                case '&' -> b.append("&amp;");
                case '"' -> b.append("&quot;");
                case '\'' -> b.append("&#39;");
                default -> b.append(c);
            }
        }
        return b.toString();
    }
}
