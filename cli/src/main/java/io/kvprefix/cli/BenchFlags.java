package io.kvprefix.cli;

import io.kvprefix.RoutingPolicy;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * What the front doors' benchmarks ({@code epp-bench}, {@code proxy-bench}) share: the stand-in
 * engines' count, and the checks of their other common options, the routing policy and the
 * concurrency levels, made before anything starts (docs/BENCHMARKS.md sections 7 and 8).
 *
 * <p>Thread-safety: a picocli mixin, used once by one thread; the checks are stateless.
 */
final class BenchFlags {
    @Option(
            names = "--engines",
            paramLabel = "N",
            defaultValue = "8",
            description = "stand-in engines (default: ${DEFAULT-VALUE})")
    int engines;

    /** Checks {@code --engines}: at least 1. */
    int engines() {
        return Check.atLeast("--engines", engines, 1);
    }

    /** Checks {@code --engines}: 1 to {@code max}. */
    int engines(int max) {
        return Check.inRange("--engines", engines, 1, max);
    }

    /** {@code --policy}'s canonical name; a usage error names the option. */
    static String policy(String name) {
        try {
            return RoutingPolicy.of(name).policyName();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--policy: " + e.getMessage(), e);
        }
    }

    /** Checks {@code --concurrency}: at least one level, each 1..4096. */
    static List<Integer> concurrency(List<Integer> levels) {
        if (levels.isEmpty()) {
            throw new IllegalArgumentException("--concurrency names no level");
        }
        levels.forEach(c -> Check.inRange("--concurrency", c, 1, 4096));
        return List.copyOf(levels);
    }
}
