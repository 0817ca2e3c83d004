package io.kvprefix.cli;

import io.kvprefix.IndexConfig;
import io.kvprefix.opstream.Implementations;
import picocli.CommandLine.Option;

/**
 * The index a command builds and feeds (a picocli mixin of {@code replay} and {@code listen}): its
 * implementation and its worker slots.
 *
 * <p>Thread-safety: filled by picocli, then read by one command thread.
 */
final class IndexOptions {
    @Option(
            names = "--impl",
            paramLabel = "NAME",
            defaultValue = Implementations.DEFAULT,
            completionCandidates = Implementations.Names.class,
            description = "index implementation: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE})")
    String impl;

    @Option(
            names = "--max-workers",
            paramLabel = "N",
            defaultValue = "1024",
            description =
                    "worker slots of the index (default: ${DEFAULT-VALUE}); a store for one worker too many is capacity_exceeded")
    int maxWorkers;

    /** A configuration builder with the worker slots set, once --impl and --max-workers are checked. */
    IndexConfig.Builder config() {
        Check.implementation("--impl", impl);
        IndexConfig.Builder b = IndexConfig.builder();
        try {
            b.maxWorkers(maxWorkers);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--max-workers: " + e.getMessage(), e);
        }
        return b;
    }
}
