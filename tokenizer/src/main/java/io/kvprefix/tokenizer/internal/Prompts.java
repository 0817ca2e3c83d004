package io.kvprefix.tokenizer.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvprefix.tokenizer.TokenizeException;

/**
 * Reads the parts of OpenAI request bodies every mode shares: a completion's {@code prompt} as text
 * or as token ids (docs/TOKENIZER.md section 2).
 *
 * <p>Thread-safety: stateless.
 */
public final class Prompts {
    private Prompts() {}

    /** A completion's prompt: exactly one of {@code text} and {@code ids} is non-null. */
    public record Prompt(String text, int[] ids) {}

    /**
     * The {@code prompt} of a completion body: a string, token ids, or a one-element array of either
     * (OpenAI's batch form with one prompt). A batch of several prompts is refused: one request is
     * routed to one engine, and its prompts would each need a route of their own.
     */
    public static Prompt completionPrompt(ObjectNode body) throws TokenizeException {
        JsonNode p = body == null ? null : body.get("prompt");
        if (p == null || p.isNull()) {
            throw bad("a completion body needs a \"prompt\"");
        }
        if (p.isTextual()) {
            return new Prompt(p.textValue(), null);
        }
        if (!p.isArray()) {
            throw bad("\"prompt\" is a string or an array of token ids, not " + p.getNodeType());
        }
        if (p.size() == 1 && (p.get(0).isTextual() || p.get(0).isArray())) {
            return p.get(0).isTextual() ? new Prompt(p.get(0).textValue(), null) : new Prompt(null, ids(p.get(0)));
        }
        if (!p.isEmpty() && !p.get(0).isNumber()) {
            throw bad("\"prompt\" holds " + p.size() + " prompts; a batch of several prompts is not routed");
        }
        return new Prompt(null, ids(p));
    }

    /** The token ids of a JSON array of non-negative integers. */
    public static int[] ids(JsonNode array) throws TokenizeException {
        if (array.isEmpty()) {
            throw bad("\"prompt\" is an empty array of token ids");
        }
        int[] out = new int[array.size()];
        for (int i = 0; i < out.length; i++) {
            JsonNode t = array.get(i);
            if (!t.isIntegralNumber() || !t.canConvertToInt() || t.intValue() < 0) {
                throw bad("\"prompt\"[" + i + "] is " + t + ", not a token id (a non-negative integer)");
            }
            out[i] = t.intValue();
        }
        return out;
    }

    /** A {@link TokenizeException#BAD_REQUEST} with this message. */
    public static TokenizeException bad(String message) {
        return new TokenizeException(TokenizeException.BAD_REQUEST, message);
    }
}
