package io.kvprefix.tokenizer;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * One model's way from an OpenAI request body to the token ids its engine will compute: the chat
 * template applied, special tokens added as the engine adds them, then the tokenizer. Opened by
 * {@link Tokenizers#open}; the modes are described in docs/TOKENIZER.md section 1.
 *
 * <p>A completion body whose {@code prompt} is already token ids ({@code [1, 2, 3]}) gives those ids
 * unchanged in every mode, as the engine takes them.
 *
 * <p>Thread-safety: thread-safe; the calls block (a renderer round trip, or tokenizing in process)
 * and are meant to be called off an event loop. {@link #close()} may be called once, after which the
 * other calls fail.
 */
public interface PromptTokenizer extends AutoCloseable {
    /** The mode: {@code "local"}, {@code "render"} or {@code "tokens"}. */
    String mode();

    /**
     * The token ids of an OpenAI chat completion body ({@code messages}, optional {@code tools},
     * {@code add_generation_prompt} (default true), {@code chat_template_kwargs}).
     *
     * @throws TokenizeException with a {@link TokenizeException#reason() reason} when the body cannot
     *     be tokenized (the router then routes the request by load)
     */
    TokenizedPrompt chat(ObjectNode body) throws TokenizeException;

    /**
     * The token ids of an OpenAI completion body: its {@code prompt}, a string (tokenized with the
     * special tokens the engine adds, such as a BOS token) or token ids (returned as they are).
     *
     * @throws TokenizeException with a {@link TokenizeException#reason() reason} when the body cannot
     *     be tokenized
     */
    TokenizedPrompt completion(ObjectNode body) throws TokenizeException;

    /** Releases what the tokenizer holds (native tokenizer memory, pooled connections). */
    @Override
    void close();
}
