/**
 * The {@code local} mode (docs/TOKENIZER.md section 3): the model folder's files, HuggingFace's
 * tokenizer through DJL with its usage ping and downloads off, vLLM's normalisation of chat messages
 * and tools, and the segment cache with the proof, run when a tokenizer is loaded, that decides
 * whether it is exact for that tokenizer (section 6). The chat template itself is rendered by
 * {@code io.kvprefix.tokenizer.internal.template}.
 */
package io.kvprefix.tokenizer.internal.local;
