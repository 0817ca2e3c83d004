package io.kvprefix.tokenizer;

import io.kvprefix.tokenizer.internal.TokenIdsOnly;
import io.kvprefix.tokenizer.internal.local.LocalTokenizer;
import io.kvprefix.tokenizer.internal.render.RenderTokenizer;
import java.nio.file.Path;

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
        return open(spec, TokenizerOptions.defaults());
    }

    /**
     * The tokenizer {@code spec} describes, with these options.
     *
     * @throws IllegalArgumentException as {@link #open(String)} does
     */
    public static PromptTokenizer open(String spec, TokenizerOptions options) {
        if (spec == null) {
            throw new IllegalArgumentException("no tokenizer spec: " + FORMS);
        }
        if (spec.equals("tokens")) {
            return new TokenIdsOnly();
        }
        if (spec.startsWith("local:") && spec.length() > "local:".length()) {
            return LocalTokenizer.open(Path.of(spec.substring("local:".length())), options);
        }
        if (spec.startsWith("render:") && spec.length() > "render:".length()) {
            return RenderTokenizer.open(spec.substring("render:".length()), options);
        }
        throw new IllegalArgumentException("tokenizer spec '" + spec + "' is none of " + FORMS);
    }

    private static final String FORMS = "local:DIR, render:http://HOST:PORT, tokens";
}
