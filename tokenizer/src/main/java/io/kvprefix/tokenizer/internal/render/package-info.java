/**
 * The {@code render} mode (docs/TOKENIZER.md section 4): the engine's renderer (vLLM's render routes,
 * or {@code /tokenize} where they are absent) over one pooled HTTP/1.1 client, each failure a
 * {@link io.kvprefix.tokenizer.TokenizeException} with a reason a router reports.
 */
package io.kvprefix.tokenizer.internal.render;
