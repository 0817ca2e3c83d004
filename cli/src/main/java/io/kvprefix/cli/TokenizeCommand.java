package io.kvprefix.cli;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvprefix.BlockHasher;
import io.kvprefix.tokenizer.PromptTokenizer;
import io.kvprefix.tokenizer.TokenizeException;
import io.kvprefix.tokenizer.Tokenizers;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code kvprefix tokenize}: the engine's token ids of OpenAI request bodies, one JSON object per
 * input line, one JSON array per output line (docs/TOKENIZER.md section 7).
 *
 * <p>Thread-safety: a command object, used once by one thread.
 */
@Command(
        name = "tokenize",
        mixinStandardHelpOptions = true,
        description = {
            "Print the engine's token ids of OpenAI request bodies, as a router hashes them.",
            "Reads one JSON object per line (a chat body with messages, or a completion body with prompt) and prints",
            "each one's token ids as a JSON array, one line per input line; --hash prints the block hashes instead",
            "(docs/TOKENIZER.md section 7)."
        })
final class TokenizeCommand implements Callable<Integer> {
    private static final Set<String> BAD_INPUT = Set.of(
            TokenizeException.BAD_REQUEST,
            TokenizeException.NEEDS_TOKEN_IDS,
            TokenizeException.NO_CHAT_TEMPLATE,
            TokenizeException.TEMPLATE_ERROR);

    @Option(
            names = "--tokenizer",
            required = true,
            paramLabel = "DIR|SPEC",
            description = "a model folder with tokenizer.json and tokenizer_config.json (local mode), or a spec:"
                    + " local:DIR, render:http://HOST:PORT, tokens")
    String tokenizer;

    @Option(names = "--hash", description = "print the chain hashes of the full blocks instead of the ids")
    boolean hash;

    @Option(names = "--block-size", paramLabel = "N", description = "tokens per block, with --hash (>= 1)")
    Integer blockSize;

    @Parameters(
            index = "0",
            paramLabel = "FILE",
            description = "the request bodies, one per line; - for standard input")
    String file;

    @Override
    public Integer call() throws IOException {
        BlockHasher hasher = hasher();
        BufferedReader in = open();
        String spec = tokenizer.startsWith("local:") || tokenizer.startsWith("render:") || tokenizer.equals("tokens")
                ? tokenizer
                : "local:" + tokenizer;
        PromptTokenizer t;
        try {
            t = Tokenizers.open(spec);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--tokenizer " + tokenizer + ": " + e.getMessage(), e);
        }
        ObjectMapper json = new ObjectMapper()
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
        PrintStream out = System.out;
        try (t;
                in) {
            String line;
            int n = 0;
            while ((line = in.readLine()) != null) {
                n++;
                int[] ids = tokens(t, json, line, n);
                out.println(hasher == null ? ids(ids) : hashes(hasher, ids));
            }
        } finally {
            out.flush();
        }
        return 0;
    }

    private BlockHasher hasher() {
        if (hash && blockSize == null) {
            throw new IllegalArgumentException("--hash needs --block-size N");
        }
        if (!hash && blockSize != null) {
            throw new IllegalArgumentException("--block-size is for --hash");
        }
        if (hash && blockSize < 1) {
            throw new IllegalArgumentException("--block-size must be >= 1, got " + blockSize);
        }
        return hash ? BlockHasher.of(blockSize) : null;
    }

    private BufferedReader open() throws IOException {
        if (file.equals("-")) {
            return new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        }
        Path p = Path.of(file);
        if (Files.isDirectory(p)) {
            throw new IllegalArgumentException(file + ": is a directory, not a file of request bodies");
        }
        if (!Files.isRegularFile(p)) {
            throw new IllegalArgumentException(file + ": no such file");
        }
        return Files.newBufferedReader(p, StandardCharsets.UTF_8);
    }

    private int[] tokens(PromptTokenizer t, ObjectMapper json, String line, int n) {
        String where = (file.equals("-") ? "standard input" : file) + " line " + n + ": ";
        JsonNode body;
        try {
            body = json.readTree(line);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalArgumentException(where + "not one JSON object (" + e.getOriginalMessage() + ")");
        }
        if (body == null || !body.isObject()) {
            throw new IllegalArgumentException(where + "not a JSON object");
        }
        try {
            if (body.has("messages")) {
                return t.chat((ObjectNode) body).tokens();
            }
            if (body.has("prompt")) {
                return t.completion((ObjectNode) body).tokens();
            }
        } catch (TokenizeException e) {
            String message = where + e.getMessage() + " (" + e.reason() + ")";
            if (BAD_INPUT.contains(e.reason())) {
                throw new IllegalArgumentException(message, e);
            }
            throw new IllegalStateException(message, e);
        }
        throw new IllegalArgumentException(
                where + "neither a chat body (\"messages\") nor a completion body (\"prompt\")");
    }

    private static String ids(int[] ids) {
        StringBuilder b = new StringBuilder(ids.length * 7 + 2).append('[');
        for (int i = 0; i < ids.length; i++) {
            b.append(i > 0 ? "," : "").append(ids[i]);
        }
        return b.append(']').toString();
    }

    private static String hashes(BlockHasher h, int[] ids) {
        int n = h.blockCount(ids.length);
        long[] local = new long[n];
        long[] chain = new long[n];
        h.hashBlocks(ids, 0, ids.length, local, chain);
        StringBuilder b = new StringBuilder(n * 21 + 2).append('[');
        for (int i = 0; i < n; i++) {
            b.append(i > 0 ? "," : "").append(Long.toUnsignedString(chain[i]));
        }
        return b.append(']').toString();
    }
}
