package io.kvprefix.tokenizer;

import io.kvprefix.tokenizer.internal.TokenIdsOnly;

/**
 * Opens a {@link PromptTokenizer} from a spec string (docs/TOKENIZER.md section 1):
 *
 * <ul>
 *   <li>{@code local:DIR}: in process, from {@code DIR/tokenizer.json} and {@code
 *       DIR/tokenizer_config.json} (its {@code chat_template}); never from the network;
 *   <li>{@code render:http://HOST:PORT}: the engine's renderer (vLLM's {@code /v1/chat/completions/render}
 *       and {@code /v1/completions/render}, falling back to {@code /tokenize});
 *   <li>{@code tokens}: bodies that already carry token ids; text is refused with reason
 *       {@link TokenizeException#NEEDS_TOKEN_IDS}.
 * </ul>
 *
 * <p>Thread-safety: stateless; {@link #open} may be called from any thread.
 */
public final class Tokenizers {
    private Tokenizers() {}

    /**
     * The tokenizer {@code spec} describes.
     *
     * @throws IllegalArgumentException with a one-line message naming what is wrong, for a spec of
     *     none of the three forms or a tokenizer that cannot be loaded (a missing or unreadable file,
     *     a chat template the template engine cannot render)
     */
    public static PromptTokenizer open(String spec) {
        if (spec == null) {
            throw new IllegalArgumentException("no tokenizer spec: " + FORMS);
        }
        if (spec.equals("tokens")) {
            return new TokenIdsOnly();
        }
        if (spec.startsWith("local:") && spec.length() > "local:".length()) {
            throw new UnsupportedOperationException("tokenizer spec '" + spec + "': local mode is not built yet");
        }
        if (spec.startsWith("render:") && spec.length() > "render:".length()) {
            throw new UnsupportedOperationException("tokenizer spec '" + spec + "': render mode is not built yet");
        }
        throw new IllegalArgumentException("tokenizer spec '" + spec + "' is none of " + FORMS);
    }

    private static final String FORMS = "local:DIR, render:http://HOST:PORT, tokens";
}
