package io.kvprefix.cli;

import static io.kvprefix.cli.LiveLeg.f;

import java.util.List;
import java.util.Map;

/**
 * The proxy benchmark's table (docs/SERVE.md section 7), Markdown ready for benchmarks/RESULTS.md:
 * per concurrency the time to first byte direct and through each proxy (p50 and p99 over every round's
 * samples) and what each proxy adds to it, then wrk's short requests per second (the median round),
 * the memory per open idle stream and the router's decision cost.
 *
 * <p>Thread-safety: stateless.
 */
final class ProxyBenchTable {
    private ProxyBenchTable() {}

    static String render(
            ProxyBench.Options o,
            Map<Integer, Map<String, List<Double>>> ttft,
            Map<String, List<Double>> wrk,
            Map<String, double[]> memory,
            double[] decision) {
        StringBuilder sb = new StringBuilder();
        sb.append(f(
                "proxy-bench: %d stand-in engines (time scale %s), %d-token prompts, %d round(s), targets alternating%n%n",
                o.engines(), LiveReport.trim(o.timeScale()), o.promptTokens(), o.rounds()));
        sb.append("| figure | direct | nginx | kvprefix serve (" + o.policy() + ") |\n|---|---|---|---|\n");
        for (Map.Entry<Integer, Map<String, List<Double>>> e : ttft.entrySet()) {
            Map<String, List<Double>> t = e.getValue();
            double[] d = quantiles(t.get("direct"));
            double[] n = quantiles(t.get("nginx"));
            double[] s = quantiles(t.get("kvprefix serve"));
            sb.append(f(
                    "| first byte p50 / p99 ms, %d stream(s) (%d requests each) | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f |%n",
                    e.getKey(), t.get("direct").size(), d[0], d[1], n[0], n[1], s[0], s[1]));
            sb.append(f(
                    "| added p50 / p99 ms, %d stream(s) | - | %.2f / %.2f | %.2f / %.2f |%n",
                    e.getKey(), n[0] - d[0], n[1] - d[1], s[0] - d[0], s[1] - d[1]));
        }
        sb.append(f(
                "| short requests/s (wrk -t2 -c%d, %d s, median of rounds) | - | %.0f | %.0f |%n",
                o.wrkConnections(), o.wrkSeconds(), median(wrk.get("nginx")), median(wrk.get("kvprefix serve"))));
        double[] mn = memory.get("nginx");
        double[] ms = memory.get("kvprefix serve");
        sb.append(f(
                "| RSS per open idle stream, %d streams (errors) | - | %.1f KB (%d) | %.1f KB (%d) |%n",
                o.openStreams(), mn[0] / 1024, (long) mn[1], ms[0] / 1024, (long) ms[1]));
        sb.append(f(
                "| decision mean / p50 / p99 us, %d-token prompt, %d decisions (router meter; p50, p99: bucket"
                        + " bounds; %d blocks cached) | - | - | %.1f / <=%s / <=%s |%n",
                o.decisionTokens(),
                o.decisions(),
                (long) decision[3],
                decision[0],
                LiveReport.trim(decision[1]),
                LiveReport.trim(decision[2])));
        return sb.toString();
    }

    /** p50 and p99, nearest rank. */
    static double[] quantiles(List<Double> xs) {
        double[] s = xs.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return new double[] {rank(s, 0.5), rank(s, 0.99)};
    }

    private static double rank(double[] s, double q) {
        if (s.length == 0) {
            return Double.NaN;
        }
        return s[Math.max(0, Math.min(s.length - 1, (int) Math.ceil(q * s.length) - 1))];
    }

    private static double median(List<Double> xs) {
        return rank(xs.stream().mapToDouble(Double::doubleValue).sorted().toArray(), 0.5);
    }
}
