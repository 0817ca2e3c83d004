/**
 * The implementations behind {@link io.kvprefix.tokenizer.Tokenizers}: the {@code tokens} mode and
 * the reading of completion prompts every mode shares ({@code Prompts}) here; {@code local} mode in
 * {@code internal.local} with its templates in {@code internal.template}; {@code render} mode in
 * {@code internal.render} (docs/TOKENIZER.md).
 */
package io.kvprefix.tokenizer.internal;
