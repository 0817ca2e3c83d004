package io.kvprefix.cli;

import static io.kvprefix.cli.LiveLeg.f;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvprefix.simulator.PolicyResult;
import io.kvprefix.workload.Trace;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The live leg's results (docs/OPERATING.md section 12) as the demo shows them: a terminal table, a
 * {@code "live"} object added to {@code report.json}, and a section added to {@code index.html}, each
 * live figure beside the simulated one of the same trace and settings.
 *
 * <p>Thread-safety: stateless.
 */
final class LiveReport {
    private static final ObjectMapper JSON = new ObjectMapper();

    private LiveReport() {}

    /** One sentence on what ran. */
    static String describe(Trace trace, double wallSeconds) {
        return f(
                "%,d requests of the built-in workload (%d tokens per block id, rate x%s) through kvprefix serve to %d"
                        + " stand-in vLLM engines (time scale %s; TTFT in engine ms = wall / time scale), streamed by"
                        + " java.net.http; %.0f s of wall time",
                trace.size(),
                trace.tokensPerBlock(),
                trim(LiveLeg.RATE),
                LiveLeg.ENGINES,
                trim(LiveLeg.TIME_SCALE),
                wallSeconds);
    }

    /** The terminal table. */
    static String table(List<LiveLeg.Measured> ms) {
        StringBuilder sb = new StringBuilder();
        sb.append(f(
                "%-14s %8s %24s %24s %22s %18s%n",
                "live leg",
                "errors",
                "TTFT ms mean/p50/p99",
                "simulated mean/p50/p99",
                "hit engine/index/sim",
                "decision us mean/p99<="));
        for (LiveLeg.Measured m : ms) {
            PolicyResult s = m.simulated();
            sb.append(f(
                    "%-14s %8d %24s %24s %22s %18s%n",
                    m.policy(),
                    m.errors(),
                    f("%.0f / %.0f / %.0f", m.ttftMean(), m.ttft(0.5), m.ttft(0.99)),
                    f("%.0f / %.0f / %.0f", s.ttftMeanMs(), s.ttftMs(0.5), s.ttftMs(0.99)),
                    f("%.3f / %.3f / %.3f", m.engineHitRate(), m.indexHitRate(), s.hitRate()),
                    f("%.1f / %s", m.decisionMeanUs(), trim(m.decisionP99Us()))));
        }
        return sb.toString();
    }

    /** Adds {@code "live"} to the report's JSON file. */
    static void addToJson(Path file, String description, List<LiveLeg.Measured> ms) throws IOException {
        ObjectNode root = (ObjectNode) JSON.readTree(file.toFile());
        ObjectNode live = root.putObject("live");
        live.put("description", description);
        live.put("engines", LiveLeg.ENGINES);
        live.put("tokens_per_block_id", LiveLeg.TOKENS_PER_ID);
        live.put("time_scale", LiveLeg.TIME_SCALE);
        live.put("rate", LiveLeg.RATE);
        live.put("block_size", LiveLeg.BLOCK_SIZE);
        live.put("cache_blocks", LiveLeg.CACHE_BLOCKS);
        ArrayNode policies = live.putArray("policies");
        for (LiveLeg.Measured m : ms) {
            ObjectNode p = policies.addObject();
            p.put("policy", m.policy());
            p.put("requests", m.requests());
            p.put("errors", m.errors());
            p.put("first_error", m.firstError());
            p.put("ttft_mean_ms", m.ttftMean());
            p.put("ttft_p50_ms", m.ttft(0.5));
            p.put("ttft_p99_ms", m.ttft(0.99));
            p.put("engine_prompt_tokens", m.promptTokens());
            p.put("engine_cached_tokens", m.cachedTokens());
            p.put("engine_hit_rate", m.engineHitRate());
            p.put("index_cached_tokens", m.indexCachedTokens());
            p.put("index_hit_rate", m.indexHitRate());
            p.put("decisions", m.decisions());
            p.put("decision_mean_us", m.decisionMeanUs());
            p.put("decision_p50_us_at_most", m.decisionP50Us());
            p.put("decision_p99_us_at_most", m.decisionP99Us());
            p.put("workers_used", m.workersUsed());
            p.put("wall_s", m.wallSeconds());
            ObjectNode s = p.putObject("simulated");
            s.put("hit_rate", m.simulated().hitRate());
            s.put("ttft_mean_ms", m.simulated().ttftMeanMs());
            s.put("ttft_p50_ms", m.simulated().ttftMs(0.5));
            s.put("ttft_p99_ms", m.simulated().ttftMs(0.99));
            s.put("decision_p50_us", m.simulated().decisionUs(0.5));
            s.put("decision_p99_us", m.simulated().decisionUs(0.99));
        }
        JSON.writerWithDefaultPrettyPrinter().writeValue(file.toFile(), root);
    }

    /** Adds the live leg's section to the report's HTML page, before its end. */
    static void addToHtml(Path file, String description, List<LiveLeg.Measured> ms) throws IOException {
        StringBuilder h = new StringBuilder("<h2 id=\"live\">The live leg: real HTTP, stand-in engines</h2>\n<p>");
        h.append(esc(description))
                .append(".</p>\n<table><tr><th>policy</th><th>errors</th>")
                .append("<th>TTFT mean / p50 / p99 ms (live)</th><th>simulated</th>")
                .append("<th>hit rate: engines' cached_tokens</th><th>index</th><th>simulated</th>")
                .append("<th>decision mean / p99 us</th></tr>\n");
        for (LiveLeg.Measured m : ms) {
            PolicyResult s = m.simulated();
            h.append("<tr><td>").append(esc(m.policy())).append("</td><td>").append(m.errors());
            h.append(f("</td><td>%.0f / %.0f / %.0f", m.ttftMean(), m.ttft(0.5), m.ttft(0.99)));
            h.append(f("</td><td>%.0f / %.0f / %.0f", s.ttftMeanMs(), s.ttftMs(0.5), s.ttftMs(0.99)));
            h.append(f("</td><td>%.3f</td><td>%.3f</td><td>%.3f", m.engineHitRate(), m.indexHitRate(), s.hitRate()));
            h.append(f("</td><td>%.1f / &le;%s</td></tr>%n", m.decisionMeanUs(), trim(m.decisionP99Us())));
        }
        h.append("</table>\n<p class=\"note\">The decision cost is the router's own meter "
                + "(<code>kvprefix_service_route_seconds</code>: hash, match and policy), its p99 the bucket bound "
                + "holding 99% of the decisions. docs/OPERATING.md section 12 says how the leg runs.</p>\n");
        String page = Files.readString(file, StandardCharsets.UTF_8);
        int end = page.lastIndexOf("</body>");
        String out = end < 0 ? page + h : page.substring(0, end) + h + page.substring(end);
        Files.writeString(file, out, StandardCharsets.UTF_8);
    }

    static String trim(double v) {
        return v == Math.rint(v) && !Double.isInfinite(v) ? Long.toString((long) v) : f("%s", v);
    }

    private static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
