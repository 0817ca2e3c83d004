package io.kvprefix.standin.internal;

/**
 * One KV event as the stand-in publishes it, before encoding: vLLM's {@code BlockStored},
 * {@code BlockRemoved} and {@code AllBlocksCleared} ({@code vllm/distributed/kv_events.py}, see the
 * package comment), on the GPU medium of KV-cache group 0.
 *
 * <p>Thread-safety: immutable records (the arrays are not copied: the producer hands them over).
 */
public sealed interface WireEvent {
    /**
     * Full blocks the engine stored: their engine hashes, the block before the first (absent at position 0),
     * and their tokens ({@code hashes.length * blockSize} of them).
     */
    record Stored(boolean hasParent, long parent, long[] hashes, int[] tokens, int blockSize) implements WireEvent {}

    /** Blocks the engine evicted, by engine hash, in eviction order. */
    record Removed(long[] hashes) implements WireEvent {}

    /** The engine dropped every cached block (a prefix-cache reset). */
    record Cleared() implements WireEvent {}
}
