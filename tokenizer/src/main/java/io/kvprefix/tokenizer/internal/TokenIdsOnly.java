package io.kvprefix.tokenizer.internal;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvprefix.tokenizer.PromptTokenizer;
import io.kvprefix.tokenizer.TokenizeException;
import io.kvprefix.tokenizer.TokenizedPrompt;

/**
 * The {@code tokens} mode: bodies that already carry token ids; text of any kind is refused with
 * {@link TokenizeException#NEEDS_TOKEN_IDS} (docs/TOKENIZER.md section 1).
 *
 * <p>Thread-safety: stateless, thread-safe.
 */
public final class TokenIdsOnly implements PromptTokenizer {
    @Override
    public String mode() {
        return "tokens";
    }

    @Override
    public TokenizedPrompt chat(ObjectNode body) throws TokenizeException {
        throw new TokenizeException(
                TokenizeException.NEEDS_TOKEN_IDS,
                "tokens mode takes token ids only, and a chat body is text: open this model with local:DIR or render:URL");
    }

    @Override
    public TokenizedPrompt completion(ObjectNode body) throws TokenizeException {
        Prompts.Prompt p = Prompts.completionPrompt(body);
        if (p.ids() == null) {
            throw new TokenizeException(
                    TokenizeException.NEEDS_TOKEN_IDS,
                    "tokens mode takes token ids only, and \"prompt\" is text: send \"prompt\": [ids], or open this model with local:DIR or render:URL");
        }
        return new TokenizedPrompt(p.ids());
    }

    @Override
    public void close() {}
}
