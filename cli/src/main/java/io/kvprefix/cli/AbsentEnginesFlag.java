package io.kvprefix.cli;

import picocli.CommandLine.Option;

/**
 * {@code --ready-with-absent-engines}, the one declaration for every command that subscribes to
 * engines and serves a readiness check ({@code listen}, {@code relay}, and through {@link RouterFlags}
 * {@code serve} and {@code epp}): the rule it relaxes is docs/METRICS.md section 2.
 *
 * <p>Thread-safety: a picocli mixin, used once by one thread.
 */
final class AbsentEnginesFlag {
    @Option(
            names = "--ready-with-absent-engines",
            description = {
                "let the readiness check say ready while an engine is declared absent (nothing applied",
                "and its start-up replay given up); without it such an engine keeps the process not",
                "ready (docs/METRICS.md section 2)"
            })
    boolean readyWithAbsentEngines;
}
