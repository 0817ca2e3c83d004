package io.kvprefix.standin.internal;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvprefix.tokenizer.PromptTokenizer;
import io.kvprefix.tokenizer.TokenizeException;
import io.kvprefix.tokenizer.Tokenizers;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * {@code --tokenizer DIR}: the tokenizer module's {@code local} mode over the directory for prompts
 * and chat messages (the chat template applied as vLLM applies it, docs/TOKENIZER.md), and
 * HuggingFace's tokenizer of {@code DIR/tokenizer.json} (through DJL, offline, no usage ping) for the
 * output text. Output tokens are drawn from the model's base vocabulary ({@code model.vocab} of
 * {@code tokenizer.json}), so no special token is produced; a request's text is decoded incrementally
 * ({@link #detokenizer()}), so a character split across tokens comes out whole.
 *
 * <p>Thread-safety: thread-safe (the tokenizers are); each detokenizer belongs to one request.
 */
public final class LocalTokens implements PromptSource {
    private final PromptTokenizer prompts;
    private final HuggingFaceTokenizer decoder;
    private final int vocab;

    private LocalTokens(PromptTokenizer prompts, HuggingFaceTokenizer decoder, int vocab) {
        this.prompts = prompts;
        this.decoder = decoder;
        this.vocab = vocab;
    }

    /**
     * Opens {@code dir}.
     *
     * @throws IllegalArgumentException naming {@code --tokenizer} and what is wrong with the directory
     */
    public static LocalTokens open(Path dir) {
        Path json = dir.resolve("tokenizer.json");
        PromptTokenizer prompts;
        try {
            prompts = Tokenizers.open("local:" + dir);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--tokenizer " + dir + ": " + e.getMessage());
        }
        try {
            quietDjl();
            HuggingFaceTokenizer decoder = HuggingFaceTokenizer.newInstance(
                    json, Map.of("truncation", "false", "padding", "false", "addSpecialTokens", "false"));
            return new LocalTokens(prompts, decoder, baseVocabulary(json));
        } catch (IOException | RuntimeException e) {
            prompts.close();
            throw new IllegalArgumentException("--tokenizer " + dir + ": cannot load " + json + ": " + e.getMessage());
        }
    }

    /** DJL's switches, unless set already: no usage ping, nothing from the network. */
    private static void quietDjl() {
        if (System.getenv("OPT_OUT_TRACKING") == null && System.getProperty("OPT_OUT_TRACKING") == null) {
            System.setProperty("OPT_OUT_TRACKING", "true");
        }
        if (System.getenv("DJL_OFFLINE") == null && System.getProperty("ai.djl.offline") == null) {
            System.setProperty("ai.djl.offline", "true");
        }
    }

    /** The size of {@code model.vocab} (an object for BPE and WordPiece, a list for Unigram). */
    static int baseVocabulary(Path json) throws IOException {
        JsonNode vocab =
                new ObjectMapper().readTree(json.toFile()).path("model").path("vocab");
        if (vocab.size() < 2) {
            throw new IOException("no model.vocab with at least two entries");
        }
        return vocab.size();
    }

    @Override
    public int[] completion(ObjectNode body) throws ApiError {
        try {
            return prompts.completion(body).tokens();
        } catch (TokenizeException e) {
            throw ApiError.badRequest(e.getMessage(), "prompt");
        }
    }

    @Override
    public int[] chat(ObjectNode body) throws ApiError {
        try {
            return prompts.chat(body).tokens();
        } catch (TokenizeException e) {
            if (e.reason().equals("no_chat_template")) {
                // vLLM's words for a tokenizer without a template
                throw ApiError.badRequest("As of transformers v4.44, default chat template is no longer allowed, so"
                        + " you must provide a chat template if the tokenizer does not define one.");
            }
            throw ApiError.badRequest(e.getMessage());
        }
    }

    @Override
    public String decode(int token) {
        return decoder.decode(new long[] {token}, false);
    }

    /**
     * Incremental detokenizing with a prefix offset and a read offset: the text of the tokens after the
     * read offset is the difference between decoding from the prefix offset to the end and to the read
     * offset, released (and both offsets moved up) once it is longer and does not end in U+FFFD. Decoding
     * from a few tokens back keeps the leading spaces a tokenizer drops at the start of a sequence.
     */
    @Override
    public IntFunction<String> detokenizer() {
        return new IntFunction<>() {
            private long[] ids = new long[16];
            private int n;
            private int prefix;
            private int read;

            @Override
            public String apply(int token) {
                if (n == ids.length) {
                    ids = Arrays.copyOf(ids, 2 * n);
                }
                ids[n++] = token;
                String before = read > prefix ? decoder.decode(Arrays.copyOfRange(ids, prefix, read), true) : "";
                String after = decoder.decode(Arrays.copyOfRange(ids, prefix, n), true);
                if (after.length() <= before.length() || after.endsWith("\uFFFD")) {
                    return "";
                }
                prefix = read;
                read = n;
                return after.substring(before.length());
            }
        };
    }

    @Override
    public int vocabSize() {
        return vocab;
    }

    @Override
    public void close() {
        prompts.close();
        decoder.close();
    }
}
