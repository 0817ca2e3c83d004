package io.kvprefix.standin.internal;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Where the tokens of a text prompt or of chat messages come from: the model's tokenizer and chat
 * template ({@code --tokenizer DIR}), or nothing, in which case such requests are refused as vLLM
 * refuses text it cannot tokenize. Token-id prompts never need one.
 *
 * <p>Thread-safety: implementations are safe to call from any thread.
 */
public interface PromptSource extends AutoCloseable {
    /** The tokens of a completion body's string {@code prompt}. */
    int[] completion(ObjectNode body) throws ApiError;

    /** The tokens of a chat body's {@code messages}, through the model's chat template. */
    int[] chat(ObjectNode body) throws ApiError;

    /** The text of one token on its own (the token strings of {@code /tokenize}). */
    String decode(int token);

    /**
     * A detokenizer for one request's output: each call takes the next output token and returns the
     * text it completes (possibly empty, when the token ends inside a character that the next ones
     * finish).
     */
    default java.util.function.IntFunction<String> detokenizer() {
        return this::decode;
    }

    /** How many token ids the model has (output tokens are drawn below it). */
    int vocabSize();

    /** Whether its calls block (a real tokenizer): the server then calls it off the event loop. */
    default boolean blocks() {
        return true;
    }

    @Override
    void close();

    /** No tokenizer: text prompts and chat messages are refused (400), output text is a placeholder per token. */
    static PromptSource none() {
        return new PromptSource() {
            @Override
            public int[] completion(ObjectNode body) throws ApiError {
                throw ApiError.badRequest(
                        "this stand-in engine has no tokenizer (start it with --tokenizer DIR): send the prompt as token ids",
                        "prompt");
            }

            @Override
            public int[] chat(ObjectNode body) throws ApiError {
                throw ApiError.badRequest(
                        "this stand-in engine has no tokenizer and chat template (start it with --tokenizer DIR):"
                                + " chat messages cannot be tokenized",
                        "messages");
            }

            @Override
            public String decode(int token) {
                return " t" + token;
            }

            @Override
            public int vocabSize() {
                return 32_000;
            }

            @Override
            public boolean blocks() {
                return false;
            }

            @Override
            public void close() {}
        };
    }
}
