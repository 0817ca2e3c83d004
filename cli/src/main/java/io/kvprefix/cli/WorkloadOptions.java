package io.kvprefix.cli;

import io.kvprefix.workload.MockEngine;
import io.kvprefix.workload.MooncakeTraceReader;
import io.kvprefix.workload.SyntheticTrace;
import io.kvprefix.workload.Trace;
import io.kvprefix.workload.Workload;
import java.io.IOException;
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

    /** The trace or the built-in workload, with --split, --duplicate and --truncate applied. */
    public Trace load() throws IOException {
        if (truncate != null && truncate < 1) {
            throw new IllegalArgumentException("--truncate must be >= 1, got " + truncate);
        }
        Trace loaded;
        if (trace != null) {
            if (requests != null) {
                throw new IllegalArgumentException(
                        "--requests is for the built-in workload; with --trace use --truncate");
            }
            loaded = MooncakeTraceReader.read(trace);
        } else {
            loaded = SyntheticTrace.generate(requests == null ? SyntheticTrace.DEFAULT_REQUESTS : requests, seed);
        }
        loaded = loaded.split(split).duplicate(duplicate);
        return truncate == null ? loaded : loaded.truncate(truncate);
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
