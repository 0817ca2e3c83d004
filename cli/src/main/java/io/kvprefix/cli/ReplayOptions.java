package io.kvprefix.cli;

import io.kvprefix.IndexConfig;
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

    /** Throws a usage error for an unknown implementation name, or for threads that cannot run. */
    void checkImpls() {
        Check.implementations("--impl", impls);
        Check.inRange("--writers", writers, 1, 1024);
        Check.inRange("--readers", readers, 0, 1024);
    }

    /** The stream with the index configuration for it; the load is logged to {@code err}. */
    record Loaded(OpStream stream, IndexConfig config) {}

    /**
     * Loads the stream and sizes every implementation for the deployment up front, with the same
     * hints for all: the mock engines' total cache (or for an op file the blocks it stores) and the
     * stream's workers.
     */
    Loaded load(PrintStream err) throws Exception {
        IndexConfig base;
        try {
            base = IndexConfig.builder().jumpSize(jumpSize).build();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--jump-size: " + e.getMessage(), e);
        }
        try {
            base = base.toBuilder().maxWorkers(maxWorkers).build();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--max-workers: " + e.getMessage(), e);
        }
        boolean heapIndex = impls.contains("heap");
        boolean offHeapIndex = impls.stream().anyMatch(i -> !i.equals("heap"));
        Sized sized = ops != null ? loadOps(err, base) : loadWorkload(err, heapIndex, offHeapIndex);
        OpStream stream = sized.stream();
        long expected = sized.expected();
        if (stream.blockOps() == 0) {
            throw new IllegalArgumentException((ops != null ? "--ops '" + ops + "'" : workload.describe())
                    + ": nothing to time, the stream has no stored block and no match block");
        }
        return new Loaded(
                stream,
                base.toBuilder()
                        .expectedBlocks(Math.min(expected, 1L << 29))
                        .expectedWorkers(Math.min(stream.workerIds(), IndexConfig.MAX_WORKER_SLOTS))
                        .build());
    }

    /** A stream and the most (worker, block) pairs its index is expected to hold at once. */
    private record Sized(OpStream stream, long expected) {}

    /** The stream of {@code --ops}: its peak of live blocks is the expectation (not the stored total: caches turn over). */
    private Sized loadOps(PrintStream err, IndexConfig base) throws Exception {
        if (workload.hasTrace()) {
            throw new IllegalArgumentException("give --ops or --trace, not both");
        }
        Check.opStream("--ops", ops);
        double bytes = java.nio.file.Files.size(ops);
        Memory.check("--ops " + ops, bytes * Memory.HEAP_BYTES_PER_OPS_BYTE, 0);
        int[] invalid = new int[1];
        OpStream stream = ReplayBench.loadOps(ops, base, invalid);
        if (invalid[0] > 0) {
            err.printf("%s: %d invalid line(s) skipped%n", ops, invalid[0]);
        }
        return new Sized(stream, stream.peakLiveBlocks());
    }

    /** The stream of the workload replayed against mock engines, whose total cache is the expectation. */
    private Sized loadWorkload(PrintStream err, boolean heapIndex, boolean offHeapIndex) throws Exception {
        long expected = Math.min((long) workload.workers() * workload.cacheBlocks(), 1L << 29);
        workload.check(Memory.HEAP_BYTES_PER_BLOCK_LOADED);
        // Each pass builds a fresh index, sized up front for the mock engines' total cache, holding up
        // to that many pairs (or the workload's blocks, if fewer).
        double pairs = Math.min(expected, workload.estimatedBlocks());
        Memory.check(
                workload.describe() + " --workers " + workload.workers() + " --cache-blocks " + workload.cacheBlocks(),
                workload.estimatedBlocks() * Memory.HEAP_BYTES_PER_BLOCK_LOADED
                        + (heapIndex
                                ? pairs * Memory.HEAP_INDEX_BYTES_PER_PAIR
                                        + expected * Memory.HEAP_INDEX_PRESIZE_BYTES_PER_BLOCK
                                : 0),
                offHeapIndex
                        ? pairs * Memory.OFF_HEAP_BYTES_PER_PAIR + expected * Memory.OFF_HEAP_PRESIZE_BYTES_PER_BLOCK
                        : 0);
        long t0 = System.nanoTime();
        Trace trace = workload.load(Memory.HEAP_BYTES_PER_BLOCK_LOADED);
        Workload w = Workload.load(trace, workload.engines());
        err.printf(
                Locale.ROOT,
                "%s, %d workers x %d blocks: %s (%.1f s to simulate)%n",
                trace.source(),
                workload.workers(),
                workload.cacheBlocks(),
                w.totals(),
                (System.nanoTime() - t0) / 1e9);
        OpStream stream = OpStream.of(
                w,
                Path.of(trace.source()).getFileName() + " (" + trace.tokensPerBlock() + " tokens/block, "
                        + workload.workers() + " workers x " + workload.cacheBlocks() + " blocks)");
        return new Sized(stream, expected);
    }
}
