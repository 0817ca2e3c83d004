/**
 * The one front door every event goes through, whatever the index (docs/SPEC.md section 3).
 *
 * <p>{@link io.kvprefix.internal.event.EventDecoder} turns a {@code KvEvent} into one of four writes
 * ({@link io.kvprefix.internal.event.DecodedEvent}) or rejects it: it checks the structure
 * ({@code invalid_input}), applies rule 1 (an engine hash twice, or the parent among the blocks:
 * {@code invalid_block_sequence}) and computes a token-form store's local hashes with the index's
 * seeds and the event's LoRA / namespace salt. Rules 2 to 5 need an index's state: each index
 * implements {@link io.kvprefix.internal.event.IndexWriter}. Decoding once also means a store that
 * must be retried after the index grows is not hashed twice.
 *
 * <p>The test oracle does not use this package: it is the reference the indexes are compared with,
 * and shares no code with them.
 */
package io.kvprefix.internal.event;
