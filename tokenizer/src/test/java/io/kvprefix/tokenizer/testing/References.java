package io.kvprefix.tokenizer.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs the two references over a whole corpus file, one process each (never one per request):
 * HuggingFace's JavaScript tokenizers with Node ({@code reference/hf_tokenize.mjs}) and Python's Jinja2
 * ({@code reference/render_jinja.py}), both in the test resources.
 *
 * <p>Thread-safety: stateless.
 */
public final class References {
    private References() {}

    private static final ObjectMapper JSON = new ObjectMapper();

    /** HuggingFace's JavaScript ids for each line of {@code input}: one {@code {"ids"}} or {@code {"error"}} per line. */
    public static List<JsonNode> huggingFaceJs(Path model, Path input) throws Exception {
        Path script = resource("reference/hf_tokenize.mjs", input.getParent());
        return run(
                input.getParent(),
                TokenizerData.node(),
                script.toString(),
                TokenizerData.reference().toString(),
                model.toString(),
                input.toString());
    }

    /** Python Jinja's rendering of each line of {@code input}: one {@code {"text"}} or {@code {"error"}} per line. */
    public static List<JsonNode> pythonJinja(Path input) throws Exception {
        Path script = resource("reference/render_jinja.py", input.getParent());
        return run(input.getParent(), TokenizerData.python(), script.toString(), input.toString());
    }

    private static Path resource(String name, Path dir) throws IOException {
        Path out = dir.resolve(Path.of(name).getFileName());
        try (InputStream in = References.class.getClassLoader().getResourceAsStream(name)) {
            if (in == null) {
                throw new IOException("test resource " + name + " missing");
            }
            Files.copy(in, out, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
        return out;
    }

    private static List<JsonNode> run(Path dir, String... command) throws Exception {
        Path stdout = dir.resolve("reference-" + System.nanoTime() + ".out");
        Path stderr = dir.resolve("reference-" + System.nanoTime() + ".err");
        Process p = new ProcessBuilder(command)
                .redirectOutput(stdout.toFile())
                .redirectError(stderr.toFile())
                .start();
        if (!p.waitFor(15, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new IllegalStateException(String.join(" ", command) + " did not finish in 15 minutes");
        }
        if (p.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " exited with " + p.exitValue() + ": "
                    + Files.readString(stderr, StandardCharsets.UTF_8));
        }
        List<JsonNode> out = new ArrayList<>();
        for (String line : Files.readAllLines(stdout, StandardCharsets.UTF_8)) {
            if (!line.isBlank()) {
                out.add(JSON.readTree(line));
            }
        }
        return out;
    }
}
