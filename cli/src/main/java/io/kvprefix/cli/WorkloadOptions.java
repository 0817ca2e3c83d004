package io.kvprefix.cli;

import io.kvprefix.IndexConfig;
import io.kvprefix.workload.MockEngine;
import io.kvprefix.workload.MooncakeTraceReader;
import io.kvprefix.workload.SyntheticTrace;
import io.kvprefix.workload.Trace;
import io.kvprefix.workload.TraceFormatException;
import io.kvprefix.workload.Workload;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * The workload options shared by {@code gen-ops}, {@code bench}, {@code sweep} and {@code simulate}
 * (a picocli mixin): a Mooncake trace or the built-in workload, its transforms, and the mock-engine
 * deployment it is replayed against.
 *
 * <p>Thread-safety: filled by picocli, then read by one command thread.
 */
public final class WorkloadOptions {
    @Option(
            names = "--trace",
            paramLabel = "FILE",
            description =
                    "Mooncake trace, JSON Lines {timestamp, input_length, output_length, hash_ids}; 512 tokens per id")
    Path trace;

    @Option(
            names = "--requests",
            paramLabel = "N",
            description = "requests of the built-in workload when there is no --trace (default: "
                    + SyntheticTrace.DEFAULT_REQUESTS + ")")
    Integer requests;

    @Option(
            names = "--workers",
            paramLabel = "N",
            defaultValue = "16",
            description = "workers (default: ${DEFAULT-VALUE})")
    int workers;

    @Option(
            names = "--cache-blocks",
            paramLabel = "N",
            defaultValue = "" + MockEngine.DEFAULT_CAPACITY,
            description = "blocks per mock engine's prefix cache (default: ${DEFAULT-VALUE})")
    int cacheBlocks;

    @Option(
            names = "--split",
            paramLabel = "K",
            defaultValue = "1",
            description =
                    "split every id into K sub-blocks of 512/K tokens (Dynamo's --trace-length-factor; default: ${DEFAULT-VALUE})")
    int split;

    @Option(
            names = "--duplicate",
            paramLabel = "D",
            defaultValue = "1",
            description =
                    "follow every request by D-1 copies under fresh ids (Dynamo's --trace-duplication-factor; default: ${DEFAULT-VALUE})")
    int duplicate;

    @Option(
            names = "--truncate",
            paramLabel = "N",
            description = "keep the first N requests (after --split and --duplicate)")
    Integer truncate;

    @Option(
            names = "--seed",
            paramLabel = "S",
            defaultValue = "42",
            description =
                    "seed of the request-to-worker spread and of the built-in workload (default: ${DEFAULT-VALUE})")
    long seed;

    /** True if a trace file was given. */
    public boolean hasTrace() {
        return trace != null;
    }

    /**
     * Blocks of 512 tokens per request of the built-in workload, on average: its prompts are 10,502
     * tokens long on average ({@link SyntheticTrace}).
     */
    static final double BUILT_IN_BLOCKS_PER_REQUEST = 21;
    /** Bytes of a Mooncake trace file per hash id, about: 9.3 and 10.5 in the two traces of its README. */
    static final double TRACE_BYTES_PER_BLOCK = 8;

    /**
     * The trace or the built-in workload, with --split, --duplicate and --truncate applied, after
     * {@link #check}.
     */
    public Trace load(long heapPerBlock) throws IOException {
        check(heapPerBlock);
        Trace loaded;
        try {
            loaded = trace != null
                    ? MooncakeTraceReader.read(trace)
                    : SyntheticTrace.generate(requests == null ? SyntheticTrace.DEFAULT_REQUESTS : requests, seed);
        } catch (TraceFormatException e) {
            throw new IllegalArgumentException("--trace " + e.getMessage(), e);
        }
        loaded = loaded.split(split).duplicate(duplicate);
        return truncate == null ? loaded : loaded.truncate(truncate);
    }

    /**
     * Checks every option and the trace file before anything is loaded, and that the workload fits
     * in the Java heap at {@code heapPerBlock} bytes per block of it (what the command keeps of a
     * block: its trace, its events, its matches).
     */
    void check(long heapPerBlock) throws IOException {
        if (requests != null) {
            Check.atLeast("--requests", requests, 1);
        }
        if (trace != null) {
            if (requests != null) {
                throw new IllegalArgumentException(
                        "--requests is for the built-in workload; with --trace use --truncate");
            }
            Check.inputFile("--trace", trace);
        }
        Check.inRange("--workers", workers, 1, IndexConfig.MAX_WORKER_SLOTS);
        Check.atLeast("--cache-blocks", cacheBlocks, 1);
        if (split < 1 || Trace.MOONCAKE_BLOCK_TOKENS % split != 0) {
            throw new IllegalArgumentException("--split must be a divisor of " + Trace.MOONCAKE_BLOCK_TOKENS
                    + " (the tokens per hash id), got " + split);
        }
        Check.atLeast("--duplicate", duplicate, 1);
        if (truncate != null) {
            Check.atLeast("--truncate", truncate, 1);
        }
        Memory.check(describe(), estimatedBlocks() * heapPerBlock, 0);
    }

    /** About how many blocks the workload has, before it is loaded (for {@link Memory#check}). */
    double estimatedBlocks() throws IOException {
        double blocks = trace != null
                ? Files.size(trace) / TRACE_BYTES_PER_BLOCK
                : (requests == null ? SyntheticTrace.DEFAULT_REQUESTS : requests) * BUILT_IN_BLOCKS_PER_REQUEST;
        return blocks * split * duplicate;
    }

    /** The options that size the workload, as given: {@code --requests 2000000000 --split 4}. */
    String describe() {
        String base = trace != null
                ? "--trace " + trace
                : "--requests " + (requests == null ? SyntheticTrace.DEFAULT_REQUESTS : requests);
        return base + (split > 1 ? " --split " + split : "") + (duplicate > 1 ? " --duplicate " + duplicate : "");
    }

    /** The mock-engine deployment: --workers, --cache-blocks, --seed. */
    public Workload.Options engines() {
        return new Workload.Options(workers, cacheBlocks, seed);
    }

    public int workers() {
        return workers;
    }

    public int cacheBlocks() {
        return cacheBlocks;
    }
}
