package io.kvprefix.cli;

import picocli.CommandLine.Option;

/**
 * {@code --metrics-host}, the one declaration for the commands whose metrics endpoint binds an address
 * of its own ({@code listen}, {@code relay}; {@code serve} and {@code epp} bind theirs on
 * {@code --host}): docs/METRICS.md section 2.
 *
 * <p>Thread-safety: a picocli mixin, used once by one thread.
 */
final class MetricsHostFlag {
    @Option(
            names = "--metrics-host",
            paramLabel = "HOST",
            defaultValue = "0.0.0.0",
            description = "address the metrics endpoint binds (default: ${DEFAULT-VALUE}, every interface)")
    String metricsHost;
}
