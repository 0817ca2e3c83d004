package io.kvprefix.cli;

import io.kvprefix.bench.OpStream;
import io.kvprefix.bench.ReplayBench;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code kvprefix sweep}: offered versus achieved throughput (docs/BENCHMARKS.md section 2). The same
 * stream is replayed compressed into shorter and shorter windows: offered load (block ops per
 * second) climbs in log-spaced steps from {@code --from}; at each step every implementation runs one
 * paced pass on a fresh index and its achieved throughput and match latency (each call's duration,
 * as Dynamo's harness measures it) are recorded. An implementation stops after two consecutive
 * steps where achieved falls below 90% of offered. Writes {@code DIR/sweep.json} and
 * {@code DIR/sweep.svg} (offered on x, achieved on y, log-log, one line per implementation, the
 * y = x line for reference) and prints a table.
 *
 * <p>Thread-safety: a command object, used once by one thread.
 */
@Command(
        name = "sweep",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Measure offered versus achieved throughput, with a plot (docs/BENCHMARKS.md section 2).",
            "The same stream is replayed compressed into shorter windows (log-spaced offered loads, low to high);"
                    + " achieved block ops/s and p99 are recorded per step, an implementation stops after two steps"
                    + " below 90%% of offered, and sweep.json and sweep.svg go to --out."
        })
public final class SweepCommand implements Callable<Integer> {
    @Mixin
    ReplayOptions replay = new ReplayOptions();

    @Option(
            names = "--from",
            paramLabel = "OPS/S",
            defaultValue = "1000000",
            description = "first offered load in block ops/s (default: ${DEFAULT-VALUE})")
    double from;

    @Option(
            names = "--to",
            paramLabel = "OPS/S",
            defaultValue = "1000000000",
            description = "last offered load in block ops/s (default: ${DEFAULT-VALUE})")
    double to;

    @Option(
            names = "--steps-per-decade",
            paramLabel = "N",
            defaultValue = "4",
            description = "log-spaced steps per factor of 10 (default: ${DEFAULT-VALUE})")
    int stepsPerDecade;

    @Option(
            names = "--out",
            paramLabel = "DIR",
            defaultValue = "kvprefix-sweep",
            description = "output folder (default: ${DEFAULT-VALUE})")
    Path out;

    /** One step of one implementation. */
    record Step(double offered, double achieved, long p50, long p99, long p999, double windowS, double wallS) {}

    @Override
    public Integer call() throws Exception {
        Check.positive("--from", from);
        Check.positive("--to", to);
        if (to < from) {
            throw new IllegalArgumentException("--to must be >= --from, got --from " + from + " --to " + to);
        }
        Check.inRange("--steps-per-decade", stepsPerDecade, 1, 1000);
        Check.outputDir("--out", out);
        replay.checkImpls();
        PrintStream err = System.err;
        ReplayOptions.Loaded loaded = replay.load(err);
        OpStream stream = loaded.stream();
        List<String> impls = replay.impls;
        int writers = replay.writers, readers = replay.readers;
        ReplayBench bench = new ReplayBench(stream, writers, readers, false, loaded.config());
        for (String impl : impls) {
            bench.run(impl); // one warm-up pass each, unpaced
        }
        int steps = (int) Math.floor(Math.log10(to / from) * stepsPerDecade + 1e-9) + 1;
        Map<String, List<Step>> results = new LinkedHashMap<>();
        Map<String, Integer> misses = new LinkedHashMap<>();
        for (String impl : impls) {
            results.put(impl, new ArrayList<>());
            misses.put(impl, 0);
        }
        Progress progress = new Progress("sweep", (long) steps * impls.size(), err);
        int done = 0;
        for (int s = 0; s < steps; s++) {
            double offered = from * Math.pow(10, s / (double) stepsPerDecade);
            long window = (long) (stream.blockOps() / offered * 1e9);
            for (String impl : impls) {
                if (misses.get(impl) >= 2) {
                    done++;
                    continue;
                }
                ReplayBench.Pass p = bench.runPaced(impl, window);
                double achieved = stream.blockOps() / (p.wallNanos() / 1e9);
                long[] lat = p.latencies().clone();
                Arrays.sort(lat);
                results.get(impl)
                        .add(new Step(
                                offered,
                                achieved,
                                BenchReport.quantile(lat, 0.5),
                                BenchReport.quantile(lat, 0.99),
                                BenchReport.quantile(lat, 0.999),
                                window / 1e9,
                                p.wallNanos() / 1e9));
                misses.put(impl, achieved < 0.9 * offered ? misses.get(impl) + 1 : 0);
                progress.update(++done);
            }
            if (misses.values().stream().allMatch(m -> m >= 2)) {
                break;
            }
        }
        progress.finish();
        write(stream, results);
        return 0;
    }

    private void write(OpStream stream, Map<String, List<Step>> results) throws IOException {
        Files.createDirectories(out);
        PrintStream o = System.out;
        o.printf(
                Locale.ROOT,
                "# sweep of %s: %d block ops per pass, %d writer(s), %d reader(s); latency = match call duration%n",
                stream.name(),
                stream.blockOps(),
                replay.writers,
                replay.readers);
        o.printf(
                Locale.ROOT,
                "%-16s %14s %14s %7s %10s %10s %10s%n",
                "impl",
                "offered",
                "achieved",
                "ratio",
                "p50_ns",
                "p99_ns",
                "p999_ns");
        StringBuilder json = new StringBuilder("{\"stream\":\"")
                .append(BenchReport.jsonEscape(stream.name()))
                .append("\",\"block_ops\":")
                .append(stream.blockOps())
                .append(",\"writers\":")
                .append(replay.writers)
                .append(",\"readers\":")
                .append(replay.readers)
                .append(",\"implementations\":{");
        SvgPlot plot = new SvgPlot(
                        "Offered vs achieved: " + stream.name() + " (" + replay.writers + "W/" + replay.readers + "R)",
                        "offered block ops/s",
                        "achieved block ops/s")
                .identityLine();
        boolean firstImpl = true;
        for (var e : results.entrySet()) {
            if (!firstImpl) {
                json.append(',');
            }
            firstImpl = false;
            plot.add(implementation(o, json, e.getKey(), e.getValue()));
        }
        json.append("}}\n");
        Files.writeString(out.resolve("sweep.json"), json);
        Files.writeString(out.resolve("sweep.svg"), plot.render());
        o.println("# wrote " + out.resolve("sweep.json") + " and " + out.resolve("sweep.svg"));
    }

    /**
     * Prints the table rows of {@code impl}'s steps and its threshold line, appends its JSON array to
     * {@code json}, and returns its series of the plot.
     */
    private static SvgPlot.Series implementation(PrintStream o, StringBuilder json, String impl, List<Step> steps) {
        double[] x = new double[steps.size()], y = new double[steps.size()];
        json.append('"').append(impl).append("\":[");
        double threshold = 0;
        for (int i = 0; i < steps.size(); i++) {
            Step s = steps.get(i);
            x[i] = s.offered();
            y[i] = s.achieved();
            if (s.achieved() >= 0.9 * s.offered()) {
                threshold = s.offered();
            }
            o.printf(
                    Locale.ROOT,
                    "%-16s %14.0f %14.0f %6.2f %10d %10d %10d%n",
                    impl,
                    s.offered(),
                    s.achieved(),
                    s.achieved() / s.offered(),
                    s.p50(),
                    s.p99(),
                    s.p999());
            json.append(i > 0 ? "," : "")
                    .append(String.format(
                            Locale.ROOT,
                            "{\"offered\":%.0f,\"achieved\":%.0f,\"p50_ns\":%d,\"p99_ns\":%d,\"p999_ns\":%d,\"window_s\":%.6f,\"wall_s\":%.6f}",
                            s.offered(),
                            s.achieved(),
                            s.p50(),
                            s.p99(),
                            s.p999(),
                            s.windowS(),
                            s.wallS()));
        }
        json.append(']');
        o.printf(Locale.ROOT, "# %s: highest offered load achieved within 10%%: %.0f block ops/s%n", impl, threshold);
        return new SvgPlot.Series(impl, x, y);
    }
}
