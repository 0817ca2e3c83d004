/**
 * The engine's own token ids for an OpenAI request body, per model (docs/TOKENIZER.md).
 *
 * <p>KV-aware routing is only as good as its tokens: block hashes of ids that differ from the
 * engine's by one id match nothing, silently. A {@link io.kvprefix.tokenizer.PromptTokenizer} gives,
 * for one model, the ids its engine computes from a chat or completion body, in one of three modes
 * opened by {@link io.kvprefix.tokenizer.Tokenizers#open}: {@code render} (ask the engine's renderer
 * over HTTP), {@code local} (the model's HuggingFace tokenizer and its chat template, in process) and
 * {@code tokens} (bodies that already carry ids). A body that cannot be tokenized raises a
 * {@link io.kvprefix.tokenizer.TokenizeException} with a stable snake_case reason, which a router
 * counts and reports in a header before it routes that request by load.
 *
 * <p>The calls block and are thread-safe: front doors call them off their event loops (virtual
 * threads or a worker pool). Token-id bodies of other APIs (vLLM's {@code /inference/v1/generate},
 * SGLang's {@code /generate} {@code input_ids}) need no tokenizer; the router reads them directly.
 * Everything but the four public types is under {@code io.kvprefix.tokenizer.internal}.
 */
package io.kvprefix.tokenizer;
