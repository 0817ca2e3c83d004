package io.kvprefix.cli;

import io.kvprefix.IndexConfig;
import io.kvprefix.bench.Implementations;
import io.kvprefix.bench.OpStream;
import io.kvprefix.bench.ReplayBench;
import io.kvprefix.workload.Trace;
import io.kvprefix.workload.Workload;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * What {@code bench} and {@code sweep} share (a picocli mixin): the implementations to compare, the
 * op stream (an op-stream file, or a trace or the built-in workload replayed against mock
 * engines), the writer and reader threads, and the index settings every implementation gets alike.
 *
 * <p>Thread-safety: filled by picocli, then used by one command thread.
 */
public final class ReplayOptions {
    @Option(
            names = "--impl",
            split = ",",
            paramLabel = "NAMES",
            description = "implementations, comma-separated (default: heap,offheap-java,offheap-native)")
    List<String> impls = List.of("heap", "offheap-java", "offheap-native");

    @Option(
            names = "--ops",
            paramLabel = "FILE",
            description = "an op-stream file (docs/SPEC.md section 5), for example from gen-ops")
    Path ops;

    @Mixin
    WorkloadOptions workload = new WorkloadOptions();

    @Option(
            names = "--writers",
            paramLabel = "N",
            defaultValue = "1",
            description = "writer threads (default: ${DEFAULT-VALUE})")
    int writers;

    @Option(
            names = "--readers",
            paramLabel = "M",
            defaultValue = "1",
            description = "reader threads (default: ${DEFAULT-VALUE})")
    int readers;

    @Option(
            names = "--jump-size",
            paramLabel = "J",
            description =
                    "jump size of the positional search (default: the index's, " + IndexConfig.DEFAULT_JUMP_SIZE + ")")
    int jumpSize = IndexConfig.DEFAULT_JUMP_SIZE;

    @Option(
            names = "--max-workers",
            paramLabel = "N",
            defaultValue = "1024",
            description = "worker slots (default: ${DEFAULT-VALUE})")
    int maxWorkers;

    /** Throws a usage error for an unknown implementation name. */
    void checkImpls() {
        for (String impl : impls) {
            if (!Implementations.isKnown(impl)) {
                throw new IllegalArgumentException("unknown implementation '" + impl + "': known implementations are "
                        + String.join(", ", Implementations.names()));
            }
        }
    }

    /** The stream with the index configuration for it; the load is logged to {@code err}. */
    record Loaded(OpStream stream, IndexConfig config) {}

    /**
     * Loads the stream and sizes every implementation for the deployment up front, with the same
     * hints for all: the mock engines' total cache (or for an op file the blocks it stores) and the
     * stream's workers.
     */
    Loaded load(PrintStream err) throws Exception {
        IndexConfig base =
                IndexConfig.builder().jumpSize(jumpSize).maxWorkers(maxWorkers).build();
        OpStream stream;
        long expected;
        if (ops != null) {
            if (workload.hasTrace()) {
                throw new IllegalArgumentException("give --ops or --trace, not both");
            }
            int[] invalid = new int[1];
            stream = ReplayBench.loadOps(ops, base, invalid);
            if (invalid[0] > 0) {
                err.printf("%s: %d invalid line(s) skipped%n", ops, invalid[0]);
            }
            expected = stream.storedBlocks();
        } else {
            long t0 = System.nanoTime();
            Trace trace = workload.load();
            Workload w = Workload.load(trace, workload.engines());
            err.printf(
                    Locale.ROOT,
                    "%s, %d workers x %d blocks: %s (%.1f s to simulate)%n",
                    trace.source(),
                    workload.workers(),
                    workload.cacheBlocks(),
                    w.totals(),
                    (System.nanoTime() - t0) / 1e9);
            stream = OpStream.of(
                    w,
                    Path.of(trace.source()).getFileName() + " (" + trace.tokensPerBlock() + " tokens/block, "
                            + workload.workers() + " workers x " + workload.cacheBlocks() + " blocks)");
            expected = (long) workload.workers() * workload.cacheBlocks();
        }
        return new Loaded(
                stream,
                base.toBuilder()
                        .expectedBlocks(Math.min(expected, 1L << 29))
                        .expectedWorkers(Math.min(stream.workerIds(), IndexConfig.MAX_WORKER_SLOTS))
                        .build());
    }
}
