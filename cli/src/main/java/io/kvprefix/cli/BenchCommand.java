package io.kvprefix.cli;

import io.kvprefix.bench.OpStream;
import io.kvprefix.bench.ReplayBench;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code kvprefix bench}: saturation throughput of the indexes on one op stream, side by side
 * (docs/BENCHMARKS.md section 2; the method is in {@link ReplayBench}). Prints a table with ratios to the
 * first implementation, then, as the last lines of standard output, one JSON object per
 * implementation. Refuses to report (exit 1) if the implementations disagree on any event status
 * or on the final number of (worker, block) pairs: a figure of a wrong answer is not a result.
 *
 * <p>Thread-safety: a command object, used once by one thread.
 */
@Command(
        name = "bench",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Measure the saturation throughput of each index implementation on one op stream.",
            "The stream is replayed as fast as possible against each implementation (a fresh index per pass), with"
                    + " writer threads applying events and reader threads issuing matches. Reported: block ops/s in"
                    + " two accountings (the Flash Indexer blog's: match + stored blocks; Dynamo's corrected one of"
                    + " 2026: match + stored + removed blocks, queues drained), ops/s, match latency and bytes per"
                    + " (worker, block) pair (docs/BENCHMARKS.md section 2).",
            "--readers 0 times the write path alone; with --sink the events go through an EventSink of --writers"
                    + " lanes.",
            "The stream: --ops FILE (docs/SPEC.md section 5), or a --trace replayed against mock engines, or the"
                    + " built-in workload."
        })
public final class BenchCommand implements Callable<Integer> {
    @Mixin
    ReplayOptions replay = new ReplayOptions();

    @Option(
            names = "--repeat",
            paramLabel = "K",
            defaultValue = "10",
            description = "timed passes per implementation (default: ${DEFAULT-VALUE})")
    int repeat;

    @Option(
            names = "--warmup",
            paramLabel = "W",
            defaultValue = "3",
            description = "untimed passes per implementation first (default: ${DEFAULT-VALUE})")
    int warmup;

    @Option(
            names = "--order",
            paramLabel = "free|trace",
            defaultValue = "free",
            description =
                    "free: everything as fast as possible; trace: a match waits (untimed) for the events before it (default: ${DEFAULT-VALUE})")
    String order;

    @Option(
            names = "--latency-at",
            split = ",",
            paramLabel = "FRACTIONS",
            description =
                    "after the saturation passes, one paced pass per implementation at these fractions of its own "
                            + "saturation, reporting match call latency (default: 0.5,0.9; 'none' to skip)")
    List<String> latencyAt = List.of("0.5", "0.9");

    @Option(
            names = "--sink",
            description =
                    "write-only passes through an EventSink of --writers lanes fed by one producer (needs --readers 0)")
    boolean sink;

    @Option(
            names = "--private-indexes",
            description =
                    "a diagnostic of write-only passes: each writer lane applies its share to an index of its"
                            + " own, so lanes share no memory (docs/BENCHMARKS.md section 2; needs --readers 0, not with --sink)")
    boolean privateIndexes;

    @Override
    public Integer call() throws Exception {
        validate();
        PrintStream err = System.err;
        ReplayOptions.Loaded loaded = replay.load(err);
        OpStream stream = loaded.stream();
        ReplayBench bench =
                new ReplayBench(stream, replay.writers, replay.readers, order.equals("trace"), loaded.config());
        if (privateIndexes) {
            bench.withPrivateIndexes();
        }
        Map<String, List<ReplayBench.Pass>> passes = run(bench, err);
        checkConsistent(passes);
        Map<String, Map<Double, long[]>> paced = bench.writeOnly() ? Map.of() : pacedLatencies(bench, passes, stream);
        BenchReport report = new BenchReport(
                stream,
                new BenchReport.Work(stream, bench.writeOnly()),
                replay.writers,
                replay.readers,
                order,
                repeat,
                warmup,
                bench.writeOnly()
                        ? (sink ? ", through an EventSink)" : privateIndexes ? ", one index per lane)" : ")")
                        : null,
                sink);
        report.print(System.out, passes, paced);
        return 0;
    }

    private void validate() {
        if (!order.equals("free") && !order.equals("trace")) {
            throw new IllegalArgumentException("--order must be free or trace, got " + order);
        }
        Check.atLeast("--repeat", repeat, 1);
        Check.atLeast("--warmup", warmup, 0);
        if (sink && replay.readers != 0) {
            throw new IllegalArgumentException("--sink times the write path alone: give --readers 0");
        }
        if (privateIndexes && (sink || replay.readers != 0)) {
            throw new IllegalArgumentException(
                    "--private-indexes times the write path alone: give --readers 0, no --sink");
        }
        fractions();
        replay.checkImpls();
    }

    /** The warm-up and timed passes of every implementation, interleaved; the timed ones by implementation. */
    private Map<String, List<ReplayBench.Pass>> run(ReplayBench bench, PrintStream err) throws InterruptedException {
        List<String> impls = replay.impls;
        Map<String, List<ReplayBench.Pass>> passes = new LinkedHashMap<>();
        for (String impl : impls) {
            passes.put(impl, new ArrayList<>());
        }
        int total = (warmup + repeat) * impls.size();
        int done = 0;
        Progress progress = new Progress("bench", total, err);
        for (int round = 0; round < warmup + repeat; round++) {
            for (String impl : impls) { // interleaved, so drift on a noisy machine hits every implementation alike
                ReplayBench.Pass p = sink ? bench.runSink(impl) : bench.run(impl);
                if (round >= warmup) {
                    passes.get(impl).add(p);
                }
                progress.update(++done);
            }
        }
        progress.finish();
        return passes;
    }

    /** Paced passes at the --latency-at fractions of each implementation's best saturation. */
    private Map<String, Map<Double, long[]>> pacedLatencies(
            ReplayBench bench, Map<String, List<ReplayBench.Pass>> passes, OpStream stream)
            throws InterruptedException {
        Map<String, Map<Double, long[]>> out = new LinkedHashMap<>();
        for (var e : passes.entrySet()) {
            BenchReport.Summary s = BenchReport.summarize(e.getValue(), new BenchReport.Work(stream, false));
            Map<Double, long[]> byFraction = new LinkedHashMap<>();
            for (double frac : fractions()) {
                long window = (long) (stream.blockOps() / (frac * s.bestBlockOps()) * 1e9);
                ReplayBench.Pass p = bench.runPaced(e.getKey(), window);
                long[] lat = p.latencies().clone();
                Arrays.sort(lat);
                byFraction.put(frac, new long[] {
                    BenchReport.quantile(lat, 0.5),
                    BenchReport.quantile(lat, 0.99),
                    BenchReport.quantile(lat, 0.999),
                    (long) (stream.blockOps() / (p.wallNanos() / 1e9))
                });
            }
            out.put(e.getKey(), byFraction);
        }
        return out;
    }

    /** The --latency-at fractions, each in (0, 1]; none for 'none'. */
    private List<Double> fractions() {
        if (latencyAt.size() == 1 && latencyAt.get(0).equals("none")) {
            return List.of();
        }
        List<Double> out = new ArrayList<>();
        for (String f : latencyAt) {
            double frac = Check.parseDouble("--latency-at", f);
            if (!(frac > 0 && frac <= 1)) {
                throw new IllegalArgumentException("--latency-at: fractions must be in (0, 1], got " + f);
            }
            out.add(frac);
        }
        return out;
    }

    /** Every implementation must report the same statuses and final pairs in every pass. */
    private static void checkConsistent(Map<String, List<ReplayBench.Pass>> passes) {
        ReplayBench.Pass ref = null;
        for (var e : passes.entrySet()) {
            for (ReplayBench.Pass p : e.getValue()) {
                if (ref == null) {
                    ref = p;
                    continue;
                }
                if (!ref.statuses().equals(p.statuses())
                        || ref.finalPairs() != p.finalPairs()
                        || ref.finalWorkers() != p.finalWorkers()) {
                    throw new IllegalStateException("implementations disagree, no figures reported: " + ref.impl()
                            + " statuses " + ref.statuses() + ", pairs " + ref.finalPairs() + "; " + p.impl()
                            + " statuses "
                            + p.statuses() + ", pairs " + p.finalPairs());
                }
            }
        }
    }
}
