package io.kvprefix.tokenizer;

import java.util.Arrays;

/**
 * The token ids of one request's prompt, as its engine computes them (docs/TOKENIZER.md section 1).
 * May grow fields (multimodal hashes), never lose one. Equal when the ids are.
 *
 * <p>Thread-safety: immutable by convention: a {@link PromptTokenizer} hands each call a fresh
 * array it keeps no reference to; whoever receives it must not change it while sharing it.
 *
 * @param tokens the token ids, in order
 */
public record TokenizedPrompt(int[] tokens) {
    /** A prompt of these ids (the array is taken, not copied). */
    public TokenizedPrompt {
        if (tokens == null) {
            throw new NullPointerException("tokens");
        }
    }

    /** The number of tokens. */
    public int length() {
        return tokens.length;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TokenizedPrompt p && Arrays.equals(tokens, p.tokens);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(tokens);
    }

    @Override
    public String toString() {
        return "TokenizedPrompt" + Arrays.toString(tokens);
    }
}
