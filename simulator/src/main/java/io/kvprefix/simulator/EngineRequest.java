package io.kvprefix.simulator;

import io.kvprefix.BlockHasher;
import io.kvprefix.KvEvent;
import io.kvprefix.workload.TraceRequest;
import java.util.List;
import java.util.Objects;

/**
 * One request given to an {@link Engine}: its prompt's blocks, its prompt and output lengths, and its
 * progress through the engine (what it found cached, how many output tokens are out). A driver may
 * extend it to keep its own state beside (the simulator keeps the routing decision).
 *
 * <p>The blocks are named as the engine's cache names them ({@link io.kvprefix.workload.MockEngine}):
 * by a trace's hash ids, or by their own local hashes ({@link #ofTokens}).
 *
 * <p>Thread-safety: not thread-safe; confined to the thread that drives its engine.
 */
public class EngineRequest {
    static final int NEW = 0;
    static final int WAITING = 1;
    static final int RUNNING = 2;
    static final int DONE = 3;

    private final TraceRequest trace;
    int state = NEW;

    /** Tokens found cached when the engine admitted it (on the GPU or loaded back from its CPU tier). */
    long cachedTokens;
    /** Leading blocks found on the GPU at admission. */
    int gpuCachedBlocks;
    /** Blocks after them loaded back from the CPU tier. */
    int loadedBlocks;
    /** Events of its admission not yet published. */
    List<KvEvent> admission;
    /** Stored blocks of the admission published so far (chunked engines). */
    int publishedBlocks;
    /** Whether the admission's evictions were published (chunked engines). */
    boolean removalsPublished;
    /** Prompt tokens computed or cached so far (chunked engines). */
    long computed;
    /** Prompt tokens still to compute (chunked engines). */
    long prefillLeft;
    /** Tokens it has in the current step (chunked engines). */
    int chunk;
    /** Output tokens still to decode (chunked engines). */
    int outputLeft;
    /** Output tokens out so far. */
    int outputSoFar;

    /**
     * A request of {@code trace}'s blocks and lengths; its {@link TraceRequest#index()} identifies it in
     * the engine's cache (one request of an index at a time per engine).
     */
    public EngineRequest(TraceRequest trace) {
        this.trace = Objects.requireNonNull(trace, "trace");
    }

    /**
     * A request of a prompt of real token ids {@code tokens}, for an engine whose cache names blocks by
     * their local hashes ({@link #tokenPrompt}).
     */
    public static EngineRequest ofTokens(int id, int[] tokens, int outputTokens, BlockHasher hasher) {
        return new EngineRequest(tokenPrompt(id, tokens, outputTokens, hasher));
    }

    /**
     * The blocks and lengths of a prompt of real token ids {@code tokens}: its full blocks (at the
     * hasher's block size) named by their local hashes (for a subclass's constructor).
     *
     * @param id the request's identity in the engine's cache, at least 0
     * @param outputTokens output tokens to decode
     */
    public static TraceRequest tokenPrompt(int id, int[] tokens, int outputTokens, BlockHasher hasher) {
        int full = tokens.length / hasher.blockSize();
        long[] local = hasher.localHashes(tokens, 0, full * hasher.blockSize());
        return new TraceRequest(id, 0, tokens.length, outputTokens, local, 0);
    }

    /** The blocks and lengths (a trace's request, or {@link #ofTokens}'s). */
    public final TraceRequest trace() {
        return trace;
    }

    /** The prompt's length, tokens. */
    public final int inputTokens() {
        return trace.inputLength();
    }

    /** Output tokens to decode. */
    public final int outputTokens() {
        return trace.outputLength();
    }

    /** Prompt tokens found cached at admission (on the GPU, or loaded back from the CPU tier); 0 before. */
    public final long cachedTokens() {
        return cachedTokens;
    }

    /** Leading full blocks found on the GPU at admission. */
    public final int gpuCachedBlocks() {
        return gpuCachedBlocks;
    }

    /** Full blocks after them loaded back from the CPU tier at admission. */
    public final int loadedBlocks() {
        return loadedBlocks;
    }

    /** Output tokens out so far (the first one included). */
    public final int outputSoFar() {
        return outputSoFar;
    }

    /** True once the engine admitted it (it has a cached prefix and holds blocks) and until it finishes. */
    public final boolean running() {
        return state == RUNNING;
    }

    /** True once it finished or was aborted. */
    public final boolean done() {
        return state == DONE;
    }
}
