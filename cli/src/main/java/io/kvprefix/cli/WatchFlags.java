package io.kvprefix.cli;

import picocli.CommandLine.Mixin;

/**
 * The options that end the lists of the commands that subscribe to engines and serve a metrics
 * endpoint of their own ({@code listen}, {@code relay}): {@link RunFlags} (metrics port, duration,
 * quiet), {@link AbsentEnginesFlag} and {@link MetricsHostFlag}, in that order (docs/METRICS.md
 * section 2).
 *
 * <p>Thread-safety: a picocli mixin, used once by one thread.
 */
final class WatchFlags {
    @Mixin
    RunFlags run = new RunFlags();

    @Mixin
    AbsentEnginesFlag absent = new AbsentEnginesFlag();

    @Mixin
    MetricsHostFlag host = new MetricsHostFlag();
}
