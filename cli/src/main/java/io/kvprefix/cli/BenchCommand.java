package io.kvprefix.cli;

import io.kvprefix.IndexConfig;
import io.kvprefix.bench.OpStream;
import io.kvprefix.bench.ReplayBench;
import java.io.PrintStream;
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
        PrintStream err = System.err;
        ReplayOptions.Loaded loaded = replay.load(err);
        OpStream stream = loaded.stream();
        IndexConfig config = loaded.config();
        int writers = replay.writers, readers = replay.readers;
        List<String> impls = replay.impls;
        ReplayBench bench = new ReplayBench(stream, writers, readers, order.equals("trace"), config);
        if (privateIndexes) {
            bench.withPrivateIndexes();
        }

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
        checkConsistent(passes);
        Map<String, Map<Double, long[]>> paced = bench.writeOnly() ? Map.of() : pacedLatencies(bench, passes, stream);
        Work work = new Work(stream, bench.writeOnly());

        PrintStream out = System.out;
        out.printf(
                Locale.ROOT,
                "# %s: %d matches (%d blocks), %d events (%d stored, %d removed blocks); block ops %d (Dynamo's corrected: %d), ops %d%s%n",
                stream.name(),
                stream.matchCount(),
                stream.matchBlocks(),
                stream.eventCount(),
                stream.storedBlocks(),
                stream.removedBlocks(),
                work.blockOps,
                work.blockOpsDynamo2,
                work.ops,
                bench.writeOnly()
                        ? " (write-only: matches not run"
                                + (sink ? ", through an EventSink)" : privateIndexes ? ", one index per lane)" : ")")
                        : "");
        out.printf(
                Locale.ROOT,
                "# %d writer(s), %d reader(s), %s order, best and median of %d passes after %d warm-up; %d cores, %s%n",
                writers,
                readers,
                order,
                repeat,
                warmup,
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.vm.version"));
        out.printf(
                Locale.ROOT,
                "%-16s %14s %14s %14s %8s %12s %12s %12s %9s %9s %9s %8s %8s %8s %8s%n",
                "impl",
                "block_ops/s",
                "median",
                "dynamo2/s",
                "ratio",
                "ops/s",
                "events/s",
                "matches/s",
                "wall_ms",
                "writer_ms",
                "reader_ms",
                "p50_ns",
                "p99_ns",
                "p999_ns",
                "B/pair");
        List<String> json = new ArrayList<>();
        List<String> lanes = new ArrayList<>();
        double first = -1;
        for (var e : passes.entrySet()) {
            Summary s = summarize(e.getValue(), work);
            if (first < 0) {
                first = s.bestBlockOps;
            }
            out.printf(
                    Locale.ROOT,
                    "%-16s %14.0f %14.0f %14.0f %7.2fx %12.0f %12.0f %12.0f %9.2f %9.2f %9.2f %8d %8d %8d %8.1f%n",
                    e.getKey(),
                    s.bestBlockOps,
                    s.medianBlockOps,
                    s.bestDynamo2,
                    s.bestBlockOps / first,
                    s.ops,
                    s.events,
                    s.matches,
                    s.wallS * 1e3,
                    s.writersS * 1e3,
                    s.readersS * 1e3,
                    s.p50,
                    s.p99,
                    s.p999,
                    s.bytesPerPair);
            json.add(String.format(
                    Locale.ROOT,
                    "{\"impl\":\"%s\",\"block_ops_per_s\":%.0f,\"ops_per_s\":%.0f,"
                            + "\"events_per_s\":%.0f,\"matches_per_s\":%.0f,\"wall_s\":%.6f,\"p50_ns\":%d,\"p99_ns\":%d,"
                            + "\"p999_ns\":%d,\"passes\":%d,\"median_block_ops_per_s\":%.0f,\"writers\":%d,\"readers\":%d,"
                            + "\"order\":\"%s\",\"stream\":\"%s\",\"block_ops\":%d,\"ops\":%d,\"matches\":%d,\"events\":%d,"
                            + "\"writers_done_s\":%.6f,\"readers_done_s\":%.6f,\"block_ops_per_s_dynamo2\":%.0f,"
                            + "\"median_block_ops_per_s_dynamo2\":%.0f,\"block_ops_dynamo2\":%d,\"removed_blocks\":%d,"
                            + "\"bytes_per_pair\":%.1f,\"final_pairs\":%d,\"write_only\":%b,\"sink\":%b,"
                            + "\"lane_blocks\":%s,\"lane_done_s\":%s,\"lane_cpu_s\":%s}",
                    e.getKey(),
                    s.bestBlockOps,
                    s.ops,
                    s.events,
                    s.matches,
                    s.wallS,
                    s.p50,
                    s.p99,
                    s.p999,
                    repeat,
                    s.medianBlockOps,
                    writers,
                    readers,
                    order,
                    jsonEscape(stream.name()),
                    work.blockOps,
                    work.ops,
                    work.matches,
                    stream.eventCount(),
                    s.writersS,
                    s.readersS,
                    s.bestDynamo2,
                    s.medianDynamo2,
                    work.blockOpsDynamo2,
                    stream.removedBlocks(),
                    s.bytesPerPair,
                    s.finalPairs,
                    bench.writeOnly(),
                    sink,
                    Arrays.toString(s.lanes.blocks()).replace(" ", ""),
                    seconds(s.lanes.doneNanos()),
                    seconds(s.lanes.cpuNanos())));
            if (writers > 1) {
                lanes.add(String.format("# %s, best pass: %s", e.getKey(), s.lanes.describe()));
            }
            for (var f : paced.getOrDefault(e.getKey(), Map.of()).entrySet()) {
                long[] pl = f.getValue();
                out.printf(
                        Locale.ROOT,
                        "%-16s   paced at %.0f%% of its saturation (%.0f block ops/s): p50 %d ns, p99 %d ns, p999 %d ns, achieved %.0f block ops/s%n",
                        e.getKey(),
                        f.getKey() * 100,
                        f.getKey() * s.bestBlockOps,
                        pl[0],
                        pl[1],
                        pl[2],
                        (double) pl[3]);
                String key = String.format(Locale.ROOT, "%.0f", f.getKey() * 100);
                int at = json.size() - 1;
                json.set(
                        at,
                        json.get(at).substring(0, json.get(at).length() - 1)
                                + String.format(
                                        Locale.ROOT,
                                        ",\"p99_ns_at_%s_pct\":%d,\"p50_ns_at_%s_pct\":%d}",
                                        key,
                                        pl[1],
                                        key,
                                        pl[0]));
            }
        }
        lanes.forEach(out::println);
        json.forEach(out::println);
        out.flush();
        return 0;
    }

    /** Paced passes at the --latency-at fractions of each implementation's best saturation. */
    private Map<String, Map<Double, long[]>> pacedLatencies(
            ReplayBench bench, Map<String, List<ReplayBench.Pass>> passes, OpStream stream)
            throws InterruptedException {
        Map<String, Map<Double, long[]>> out = new LinkedHashMap<>();
        for (var e : passes.entrySet()) {
            Summary s = summarize(e.getValue(), new Work(stream, false));
            Map<Double, long[]> byFraction = new LinkedHashMap<>();
            for (double frac : fractions()) {
                long window = (long) (stream.blockOps() / (frac * s.bestBlockOps) * 1e9);
                ReplayBench.Pass p = bench.runPaced(e.getKey(), window);
                long[] lat = p.latencies().clone();
                Arrays.sort(lat);
                byFraction.put(frac, new long[] {
                    quantile(lat, 0.5),
                    quantile(lat, 0.99),
                    quantile(lat, 0.999),
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

    /**
     * Figures of one implementation; {@code writersS} and {@code readersS} are when the last writer
     * and the last reader of the best pass finished (the larger one is its wall time).
     */
    record Summary(
            double bestBlockOps,
            double medianBlockOps,
            double bestDynamo2,
            double medianDynamo2,
            double bytesPerPair,
            long finalPairs,
            double ops,
            double events,
            double matches,
            double wallS,
            double writersS,
            double readersS,
            long p50,
            long p99,
            long p999,
            ReplayBench.Lanes lanes) {}

    /**
     * The work one pass does: everything in the stream, or only its events when no reader runs the
     * matches (then matches count for nothing).
     */
    record Work(long blockOps, long blockOpsDynamo2, long ops, long matches, long events) {
        Work(OpStream s, boolean writeOnly) {
            this(
                    writeOnly ? s.storedBlocks() : s.blockOps(),
                    writeOnly ? s.storedBlocks() + s.removedBlocks() : s.blockOpsDynamo2(),
                    writeOnly ? s.eventCount() : s.ops(),
                    writeOnly ? 0 : s.matchCount(),
                    s.eventCount());
        }
    }

    static Summary summarize(List<ReplayBench.Pass> ps, Work s) {
        double[] walls =
                ps.stream().mapToDouble(p -> p.wallNanos() / 1e9).sorted().toArray();
        ReplayBench.Pass bestPass = ps.stream()
                .min(java.util.Comparator.comparingLong(ReplayBench.Pass::wallNanos))
                .orElseThrow();
        double best = walls[0];
        double median = walls.length % 2 == 1
                ? walls[walls.length / 2]
                : (walls[walls.length / 2 - 1] + walls[walls.length / 2]) / 2;
        long[] lat = ps.stream()
                .flatMapToLong(p -> Arrays.stream(p.latencies()))
                .sorted()
                .toArray();
        return new Summary(
                s.blockOps() / best,
                s.blockOps() / median,
                s.blockOpsDynamo2() / best,
                s.blockOpsDynamo2() / median,
                bestPass.finalPairs() == 0 ? 0 : bestPass.finalBytes() / (double) bestPass.finalPairs(),
                bestPass.finalPairs(),
                s.ops() / best,
                s.events() / best,
                s.matches() / best,
                best,
                bestPass.writersNanos() / 1e9,
                bestPass.readersNanos() / 1e9,
                quantile(lat, 0.50),
                quantile(lat, 0.99),
                quantile(lat, 0.999),
                bestPass.lanes());
    }

    static long quantile(long[] sorted, double q) {
        if (sorted.length == 0) {
            return 0;
        }
        return sorted[(int) Math.min(sorted.length - 1, (long) (sorted.length * q))];
    }

    /** A JSON array of nanoseconds as seconds. */
    private static String seconds(long[] nanos) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < nanos.length; i++) {
            b.append(i == 0 ? "" : ",").append(String.format(Locale.ROOT, "%.6f", nanos[i] / 1e9));
        }
        return b.append(']').toString();
    }

    static String jsonEscape(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"");
    }
}
