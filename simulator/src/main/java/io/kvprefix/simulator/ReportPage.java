package io.kvprefix.simulator;

import static io.kvprefix.simulator.SimulationReport.f;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The simulation's HTML page: the settings, the side-by-side table with its yardsticks, bar charts of
 * hit rate, TTFT and requests per worker, and the rate sweep as TTFT-against-rate line charts with
 * each policy's knee. Hand-written inline SVG: it opens from disk in any browser, without a server,
 * scripts or anything from the network.
 *
 * <p>Thread-safety: not thread-safe; build and write on one thread.
 */
final class ReportPage {
    private static final String[] COLORS = {
        "#d62728", "#1f77b4", "#aec7e8", "#2ca02c", "#98df8a", "#ff7f0e", "#ffbb78", "#9467bd", "#8c564b", "#7f7f7f",
        "#17becf", "#bcbd22"
    };

    private final SimulationReport report;
    private final SimulationReport.TraceInfo trace;
    private final SimSettings settings;
    private final List<PolicyResult> results;

    ReportPage(SimulationReport report) {
        this.report = report;
        this.trace = report.trace();
        this.settings = report.settings();
        this.results = report.results();
    }

    void write(Path file) throws IOException {
        StringBuilder h = new StringBuilder();
        h.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                + "<title>kvprefix routing simulation</title>\n");
        h.append("<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:1150px;color:#222}"
                + "table{border-collapse:collapse;margin:1em 0}td,th{padding:4px 10px;border-bottom:1px solid #ddd;"
                + "text-align:right}td:first-child,th:first-child{text-align:left}th{background:#f4f4f4}"
                + "h2{margin-top:1.6em}svg{display:block;margin:0.5em 0}.note{color:#555;font-size:0.92em}"
                + "</style></head><body>\n");
        h.append("<h1>kvprefix routing simulation</h1>\n");
        h.append("<p>")
                .append(esc(trace.source()))
                .append(": ")
                .append(f("%,d", trace.requests()))
                .append(" requests, ")
                .append(f("%,d", trace.inputTokens()))
                .append(" input tokens, ")
                .append(trace.tokensPerBlock())
                .append(" tokens per block.</p>\n<p>")
                .append(esc(settings.describe()))
                .append(".</p>\n");
        engineNote(h);
        mainTable(h);
        h.append("<h2>Prefix-cache hit rate</h2>\n").append(hitRateChart());
        h.append("<h2>Time to first token</h2>\n").append(ttftChart());
        if (!report.sweep().isEmpty()) {
            h.append("<h2>TTFT against request rate</h2>\n");
            h.append("<p class=\"note\">The same trace with arrival times divided by the rate. A policy's knee is the "
                    + "highest rate whose mean TTFT stays within "
                    + f("%.0f", RateSweep.KNEE_FACTOR)
                    + "x the TTFT floor's mean ("
                    + f("%.0f", report.sweepTrace().floorMeanMs()) + " ms), the same "
                    + "yardstick for every policy; - means above it already at the lowest rate. Log scale."
                    + (report.sweepTrace().requests() == trace.requests()
                            ? ""
                            : f(
                                    " The sweep runs the first %,d requests.",
                                    report.sweepTrace().requests()))
                    + "</p>\n");
            h.append(sweepChart(true)).append(sweepChart(false)).append(sweepTable());
        }
        h.append("<h2>Requests per worker</h2>\n").append(loadChart());
        h.append("</body></html>\n");
        Files.writeString(file, h, StandardCharsets.UTF_8);
    }

    /** The note on the engine model, the event delay and what the policies are. */
    private void engineNote(StringBuilder h) {
        h.append("<p class=\"note\">Engines: ")
                .append(
                        settings.engine() == EngineModel.VLLM_CHUNKED
                                ? "vLLM V1's scheduler with chunked prefill: each step has a budget of "
                                        + f("%,d", settings.maxBatchedTokens())
                                        + " tokens, running requests first (a decode takes one token), then waiting ones first"
                                        + " come first served; a step lasts 1/"
                                        + f("%,.0f", settings.decodeTokensPerS())
                                        + " s plus its tokens at "
                                        + f("%,.0f", settings.prefillTokensPerS())
                                        + " tokens/s. "
                                : "one prefill at a time per worker at "
                                        + f("%,.0f", settings.prefillTokensPerS())
                                        + " uncached tokens/s, decode beside it. ")
                .append("KV events reach the index ")
                .append(f("%.0f", settings.eventDelayNs() / 1e6))
                .append(" ms after the engine publishes them (after the step that computed their blocks). Every "
                        + "cache-aware policy is kvprefix's Router with that project's policy, on the same engines, "
                        + "events and seeds. Decision cost is the wall-clock time of the routing call, hashing "
                        + "included.</p>\n");
    }

    private void mainTable(StringBuilder h) {
        h.append("<table><tr><th>policy</th><th>what it is</th><th>hit rate</th><th>hits given up</th>"
                + "<th>prefill tokens</th><th>TTFT mean (ms)</th><th>TTFT p50 (ms)</th><th>TTFT p99 (ms)</th>"
                + "<th>requests per worker max/min</th><th>decision p50/p99 (&micro;s)</th></tr>\n");
        for (int i = 0; i < results.size(); i++) {
            PolicyResult r = results.get(i);
            h.append("<tr><td>").append(esc(r.name())).append("</td><td style=\"text-align:left\" class=\"note\">");
            h.append(esc(report.kinds().get(i).description())).append("</td><td>");
            h.append(f("%.1f%%", 100 * r.hitRate())).append("</td><td>");
            h.append(
                    r.heldElsewhereTokens() < 0 ? "-" : f("%.1f%%", 100.0 * r.heldElsewhereTokens() / r.inputTokens()));
            h.append("</td><td>").append(f("%,d", r.prefillTokens())).append("</td><td>");
            h.append(f("%.1f", r.ttftMeanMs())).append("</td><td>").append(f("%.1f", r.ttftMs(0.5)));
            h.append("</td><td>").append(f("%.1f", r.ttftMs(0.99))).append("</td><td>");
            h.append(r.maxRequestsPerWorker())
                    .append(" / ")
                    .append(r.minRequestsPerWorker())
                    .append("</td><td>");
            h.append(f("%.1f / %.1f", r.decisionUs(0.5), r.decisionUs(0.99))).append("</td></tr>\n");
        }
        h.append("<tr><td>infinite-cache bound</td><td></td><td>")
                .append(f("%.1f%%", 100 * trace.hitRateBound()))
                .append("</td><td colspan=\"7\" style=\"text-align:left\" class=\"note\">every full block whose prefix "
                        + "appeared in an earlier request counts as a hit</td></tr>\n");
        h.append("<tr><td>TTFT floor</td><td></td><td></td><td></td><td></td><td>")
                .append(f(
                        "%.1f</td><td>%.1f</td><td>%.1f", trace.floorMeanMs(), trace.floorP50Ms(), trace.floorP99Ms()))
                .append(
                        "</td><td colspan=\"2\" style=\"text-align:left\" class=\"note\">each request's own prefill of what "
                                + "that cache would miss, alone on an idle engine: no policy does better</td></tr>\n");
        h.append("</table>\n<p class=\"note\">Hits given up: tokens that another engine held as a longer cached "
                + "prefix than the engine the request went to, when it was admitted (the routing's loss, not the "
                + "caches').</p>\n");
    }

    private String hitRateChart() {
        int label = 190;
        int width = 780;
        int bar = 22;
        int gap = 8;
        int top = 26;
        int plot = width - label - 70;
        int bottom = top + results.size() * (bar + gap);
        StringBuilder s = svgOpen(width, bottom + 30);
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
        s.append(f(
                "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>",
                label, bottom, label + plot, bottom));
        for (int p = 0; p <= 100; p += 25) {
            double px = label + plot * p / 100.0;
            s.append(f(
                    "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\" fill=\"#555\">%d%%</text>",
                    px, bottom + 16, p));
        }
        return s.append("</svg>\n").toString();
    }

    private String ttftChart() {
        int label = 190;
        int width = 780;
        int bar = 11;
        int groupGap = 12;
        int plot = width - label - 100;
        double max = trace.floorP99Ms();
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
        double fx = label + plot * trace.floorP99Ms() / max;
        s.append(f(
                "<line x1=\"%.1f\" y1=\"4\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e15759\" stroke-dasharray=\"4,3\"/>",
                fx, fx, bottom));
        s.append(text(fx, bottom + 30, "middle", f("TTFT floor p99 %.0f ms", trace.floorP99Ms())));
        s.append(f("<text x=\"%d\" y=\"%d\" font-size=\"11\">0</text>", label, bottom + 16));
        s.append(text(label + plot, bottom + 16, "end", f("%.0f ms", max)));
        s.append(f(
                "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>",
                label, bottom, label + plot, bottom));
        return s.append("</svg>\n").toString();
    }

    /** TTFT (mean or p99) against request rate, one line per policy, log y. */
    private String sweepChart(boolean mean) {
        List<RateSweep.Point> pts = report.sweep();
        int width = 780;
        int height = 430;
        int left = 70;
        int right = 200;
        int top = 30;
        int bottom = 50;
        double minX = pts.get(0).rate();
        double maxX = pts.get(pts.size() - 1).rate();
        double minY = Double.MAX_VALUE;
        double maxY = 0;
        for (RateSweep.Point p : pts) {
            for (PolicyResult r : p.results()) {
                double v = value(r, mean);
                minY = Math.min(minY, v);
                maxY = Math.max(maxY, v);
            }
        }
        double ly0 = Math.floor(Math.log10(Math.max(1, minY)));
        double ly1 = Math.max(ly0 + 1, Math.ceil(Math.log10(Math.max(1, maxY))));
        double spanX = Math.max(1e-9, maxX - minX);
        int pw = width - left - right;
        int ph = height - top - bottom;
        StringBuilder s = svgOpen(width, height);
        s.append(text(left + pw / 2.0, 18, "middle", "TTFT " + (mean ? "mean" : "p99") + " against request rate"));
        for (double e = ly0; e <= ly1 + 1e-9; e++) {
            double y = top + ph - (e - ly0) / (ly1 - ly0) * ph;
            s.append(f("<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>", left, y, left + pw, y));
            s.append(text(
                    left - 6, y + 4, "end", e >= 3 ? f("%.0f s", Math.pow(10, e - 3)) : f("%.0f ms", Math.pow(10, e))));
        }
        for (RateSweep.Point p : pts) {
            double x = left + (p.rate() - minX) / spanX * pw;
            s.append(text(x, top + ph + 16, "middle", "x" + SimSettings.trim(p.rate())));
        }
        s.append(text(left + pw / 2.0, height - 10, "middle", "request rate (x the trace's)"));
        for (int i = 0; i < report.kinds().size(); i++) {
            StringBuilder path = new StringBuilder();
            for (RateSweep.Point p : pts) {
                double v = Math.max(1, value(p.results().get(i), mean));
                double x = left + (p.rate() - minX) / spanX * pw;
                double y = top + ph - (Math.log10(v) - ly0) / (ly1 - ly0) * ph;
                path.append(path.isEmpty() ? "M" : " L").append(f("%.1f %.1f", x, y));
                s.append(f(
                        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"><title>%s x%s: %.0f ms</title></circle>",
                        x, y, color(i), esc(report.kinds().get(i).key()), SimSettings.trim(p.rate()), v));
            }
            s.append(f(
                    "<path d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"/>",
                    path, color(i), i == 0 ? "3" : "1.6"));
            double ly = top + 10 + i * 17;
            s.append(f(
                    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"3\"/>",
                    left + pw + 12, ly, left + pw + 30, ly, color(i)));
            s.append(text(left + pw + 36, ly + 4, "start", report.kinds().get(i).key()));
        }
        return s.append("</svg>\n").toString();
    }

    private static double value(PolicyResult r, boolean mean) {
        return mean ? r.ttftMeanMs() : r.ttftMs(0.99);
    }

    private String sweepTable() {
        List<RateSweep.Point> pts = report.sweep();
        StringBuilder h = new StringBuilder("<table><tr><th>policy</th>");
        for (RateSweep.Point p : pts) {
            h.append("<th>x").append(SimSettings.trim(p.rate())).append("<br>mean / p99 (s)</th>");
        }
        h.append("<th>hit rate at each rate</th><th>knee</th></tr>\n");
        for (int i = 0; i < report.kinds().size(); i++) {
            h.append("<tr><td>").append(esc(report.kinds().get(i).key())).append("</td>");
            StringBuilder hits = new StringBuilder();
            for (RateSweep.Point p : pts) {
                PolicyResult r = p.results().get(i);
                h.append("<td>")
                        .append(f("%.2f / %.2f", r.ttftMeanMs() / 1e3, r.ttftMs(0.99) / 1e3))
                        .append("</td>");
                hits.append(hits.isEmpty() ? "" : " ").append(f("%.0f%%", 100 * r.hitRate()));
            }
            h.append("<td>").append(hits).append("</td><td>");
            h.append(SimulationReport.kneeText(
                            RateSweep.knee(pts, i, report.sweepTrace().floorMeanMs())))
                    .append("</td></tr>\n");
        }
        return h.append("</table>\n").toString();
    }

    private String loadChart() {
        int workers = settings.workers();
        int label = 190;
        int width = 780;
        int row = 56;
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
            for (int w = 0; w < n.length && workers <= 4096; w++) {
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
