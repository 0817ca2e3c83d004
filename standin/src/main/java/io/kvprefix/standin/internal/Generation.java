package io.kvprefix.standin.internal;

/**
 * What the HTTP side needs from an engine: start a generation, abort it, read the engine's counters.
 * The engine calls the {@link Listener} from its own thread, in order: {@link Listener#admitted} once,
 * {@link Listener#token} for each output token as it is decoded (the first at the end of the prefill),
 * then {@link Listener#finished}; after {@link Handle#abort} it calls nothing more.
 *
 * <p>Thread-safety: a namespace of interfaces; see each.
 */
public final class Generation {
    private Generation() {}

    /**
     * One request to an engine: its prompt, how many tokens to generate, and the seed of its output
     * tokens.
     */
    public record Request(int[] prompt, int maxTokens, long outputSeed) {}

    /** Callbacks from the engine thread. Thread-safety: called from one engine thread at a time. */
    public interface Listener {
        /** The engine scheduled the request: {@code cachedTokens} of its prompt were found in the prefix cache. */
        void admitted(int cachedTokens);

        /** Output token number {@code index} (from 0) is out. */
        void token(int index, int tokenId);

        /** The last output token is out; the request's blocks are released. */
        void finished();
    }

    /** A running request. Thread-safety: {@link #abort} may be called from any thread, any number of times. */
    public interface Handle {
        /** Stops the request and frees what it holds in the engine (vLLM aborts a request whose client went away). */
        void abort();
    }

    /** An engine. Thread-safety: every method may be called from any thread. */
    public interface Engine {
        /** Queues {@code request} at the engine; {@code listener} hears of it from the engine thread. */
        Handle submit(Request request, Listener listener);

        /** The engine's counters now. */
        EngineStats stats();

        /**
         * Drops every cached block if no request is running or waiting (an {@code AllBlocksCleared} event);
         * otherwise does nothing, as vLLM's {@code reset_prefix_cache} refuses while blocks are in use.
         */
        void resetPrefixCache();
    }

    /**
     * An engine's counters, vLLM's scheduler stats: requests running and waiting, the fraction of KV-cache
     * blocks in use, prefix-cache queries and hits (in tokens), prompt and generation tokens, requests
     * finished and aborted.
     */
    public record EngineStats(
            int running,
            int waiting,
            double kvCacheUsage,
            long prefixQueries,
            long prefixHits,
            long promptTokens,
            long generationTokens,
            long finished,
            long aborted) {}
}
