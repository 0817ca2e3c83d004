package io.kvprefix.cli;

import io.kvprefix.bench.OpStream;
import io.kvprefix.bench.ReplayBench;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What {@code kvprefix bench} prints: two header lines, one table row per implementation (with its
 * paced latencies), the lanes of a split, and one JSON object per implementation as the last lines
 * (docs/BENCHMARKS.md section 2).
 *
 * <p>Thread-safety: immutable; used by the command's thread.
 *
 * @param writeOnlyNote the end of the header's "(write-only: matches not run" note, or null for passes
 *     with readers
 */
record BenchReport(
        OpStream stream,
        BenchReport.Work work,
        int writers,
        int readers,
        String order,
        int repeat,
        int warmup,
        String writeOnlyNote,
        boolean sink) {

    /** Prints the report of {@code passes} (and the {@code paced} latencies) to {@code out}. */
    void print(PrintStream out, Map<String, List<ReplayBench.Pass>> passes, Map<String, Map<Double, long[]>> paced) {
        header(out);
        List<String> json = new ArrayList<>();
        List<String> lanes = new ArrayList<>();
        double first = -1;
        for (var e : passes.entrySet()) {
            Summary s = summarize(e.getValue(), work);
            if (first < 0) {
                first = s.bestBlockOps;
            }
            row(out, e.getKey(), s, first);
            json.add(json(e.getKey(), s));
            if (writers > 1) {
                lanes.add(String.format("# %s, best pass: %s", e.getKey(), s.lanes.describe()));
            }
            if (!s.contention.isEmpty()) {
                lanes.add(contention(e.getKey(), s.contention));
            }
            for (var f : paced.getOrDefault(e.getKey(), Map.of()).entrySet()) {
                json.set(json.size() - 1, paced(out, e.getKey(), s, f.getKey(), f.getValue(), json.getLast()));
            }
        }
        lanes.forEach(out::println);
        json.forEach(out::println);
        out.flush();
    }

    /**
     * One line of the best pass's contention counters, each also per event (docs/BENCHMARKS.md
     * section 2); the process-wide run-lock count is the pass's own only in a process running one pass at a time.
     */
    private String contention(String impl, Map<String, Long> c) {
        StringBuilder b = new StringBuilder("# " + impl + ", best pass, contention:");
        double events = Math.max(1, work.events());
        c.forEach((k, v) -> b.append(String.format(Locale.ROOT, " %s %d (%.4f/event)", k, v, v / events)));
        return b.toString();
    }

    private void header(PrintStream out) {
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
                writeOnlyNote == null ? "" : " (write-only: matches not run" + writeOnlyNote);
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
    }

    private static void row(PrintStream out, String impl, Summary s, double first) {
        out.printf(
                Locale.ROOT,
                "%-16s %14.0f %14.0f %14.0f %7.2fx %12.0f %12.0f %12.0f %9.2f %9.2f %9.2f %8d %8d %8d %8.1f%n",
                impl,
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
    }

    /** The implementation's JSON object: its figures, then the stream's and the pass's shape. */
    private String json(String impl, Summary s) {
        String figures = String.format(
                Locale.ROOT,
                "{\"impl\":\"%s\",\"block_ops_per_s\":%.0f,\"ops_per_s\":%.0f,"
                        + "\"events_per_s\":%.0f,\"matches_per_s\":%.0f,\"wall_s\":%.6f,\"p50_ns\":%d,\"p99_ns\":%d,"
                        + "\"p999_ns\":%d,\"passes\":%d,\"median_block_ops_per_s\":%.0f,\"writers\":%d,\"readers\":%d,",
                impl,
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
                readers);
        return figures
                + String.format(
                        Locale.ROOT,
                        "\"order\":\"%s\",\"stream\":\"%s\",\"block_ops\":%d,\"ops\":%d,\"matches\":%d,\"events\":%d,"
                                + "\"writers_done_s\":%.6f,\"readers_done_s\":%.6f,\"block_ops_per_s_dynamo2\":%.0f,"
                                + "\"median_block_ops_per_s_dynamo2\":%.0f,\"block_ops_dynamo2\":%d,\"removed_blocks\":%d,"
                                + "\"bytes_per_pair\":%.1f,\"final_pairs\":%d,\"write_only\":%b,\"sink\":%b,"
                                + "\"lane_blocks\":%s,\"lane_done_s\":%s,\"lane_cpu_s\":%s}",
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
                        writeOnlyNote != null,
                        sink,
                        Arrays.toString(s.lanes.blocks()).replace(" ", ""),
                        seconds(s.lanes.doneNanos()),
                        seconds(s.lanes.cpuNanos()));
    }

    /** Prints the paced pass at {@code fraction} of saturation; {@code json} with its latencies added. */
    private static String paced(PrintStream out, String impl, Summary s, double fraction, long[] pl, String json) {
        out.printf(
                Locale.ROOT,
                "%-16s   paced at %.0f%% of its saturation (%.0f block ops/s): p50 %d ns, p99 %d ns, p999 %d ns, achieved %.0f block ops/s%n",
                impl,
                fraction * 100,
                fraction * s.bestBlockOps,
                pl[0],
                pl[1],
                pl[2],
                (double) pl[3]);
        String key = String.format(Locale.ROOT, "%.0f", fraction * 100);
        return json.substring(0, json.length() - 1)
                + String.format(
                        Locale.ROOT, ",\"p99_ns_at_%s_pct\":%d,\"p50_ns_at_%s_pct\":%d}", key, pl[1], key, pl[0]);
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
            ReplayBench.Lanes lanes,
            Map<String, Long> contention) {}

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
                bestPass.lanes(),
                bestPass.contention());
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
