package io.kvprefix.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * Data that tests read from outside the repository: the Mooncake traces in {@code ../shared/traces}
 * (read there, never copied in). When the data is absent a test is skipped, saying loudly what it
 * needs and why (on standard error and as the skip's reason, which {@code ./kvprefix test} lists);
 * with {@code CI=true} in the environment it fails instead, so a CI run cannot pass with the tests
 * that need the data silently not run.
 *
 * <p>Thread-safety: stateless.
 */
public final class SharedData {
    private SharedData() {}

    /** The folder of the shared Mooncake traces, beside the repository root. */
    public static Path tracesDir() {
        return RepoPaths.root().resolve("../shared/traces").normalize();
    }

    /** The shared trace {@code name} (for example {@code conversation_trace.jsonl}), or a loud skip (a failure under CI). */
    public static Path trace(String name) {
        Path p = tracesDir().resolve(name);
        if (!Files.isRegularFile(p)) {
            unavailable("needs the Mooncake trace " + p + " (../shared/traces/" + name
                    + " beside the repository), which is absent");
        }
        return p;
    }

    /** True if the environment says this is a CI run ({@code CI=true}, as GitHub Actions and GitLab set it). */
    public static boolean isCi() {
        String ci = System.getenv("CI");
        return ci != null && (ci.equalsIgnoreCase("true") || ci.equals("1"));
    }

    private static void unavailable(String why) {
        if (isCi()) {
            Assertions.fail(why + "; CI=true, so this is a failure, not a skip");
        }
        System.err.println("SKIPPED: " + why);
        Assumptions.abort(why + " (provide it, or run with CI=true to make this a failure)");
    }
}
