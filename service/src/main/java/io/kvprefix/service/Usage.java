package io.kvprefix.service;

/**
 * The usage block an engine reported for one request: {@code prompt_tokens} and
 * {@code completion_tokens} (or the Responses API's {@code input_tokens} and {@code output_tokens}),
 * and {@code prompt_tokens_details.cached_tokens} ({@code input_tokens_details.cached_tokens}) when the
 * engine reports it (vLLM with {@code --enable-prompt-tokens-details}, SGLang with
 * {@code --enable-cache-report}).
 *
 * <p>Thread-safety: immutable.
 *
 * @param promptTokens the prompt's tokens as the engine counted them
 * @param completionTokens the tokens generated
 * @param cachedTokens the prompt tokens the engine found in its prefix cache, or -1 if it did not say
 */
public record Usage(long promptTokens, long completionTokens, long cachedTokens) {
    /** True if the engine reported its cached tokens. */
    public boolean hasCachedTokens() {
        return cachedTokens >= 0;
    }
}
