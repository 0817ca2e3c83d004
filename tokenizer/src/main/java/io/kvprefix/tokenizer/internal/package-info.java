/**
 * The implementations behind {@link io.kvprefix.tokenizer.Tokenizers}: one class per mode, the
 * reading of request bodies they share ({@code Prompts}), and the parts of {@code local} mode
 * (docs/TOKENIZER.md).
 */
package io.kvprefix.tokenizer.internal;
