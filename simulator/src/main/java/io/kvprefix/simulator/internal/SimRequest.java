package io.kvprefix.cli.internal.sim;

import io.kvprefix.KvEvent;
import io.kvprefix.RoutingDecision;
import io.kvprefix.workload.TraceRequest;
import java.util.List;

/**
 * One request in flight in a simulation: the trace request, where it went, and its progress through
 * its engine.
 *
 * <p>Thread-safety: not thread-safe; owned by the simulation thread.
 */
public final class SimRequest {
    /** The request from the trace. */
    public final TraceRequest trace;
    /** Arrival, simulated nanoseconds. */
    final long arrivalNs;
    /** The worker it was routed to. */
    int worker = -1;
    /** The router's decision (the Router-backed policies only). */
    RoutingDecision decision;
    /** Whatever else the policy keeps for this request. */
    Object policyState;

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

    SimRequest(TraceRequest trace, long arrivalNs) {
        this.trace = trace;
        this.arrivalNs = arrivalNs;
    }

    /** The worker it was routed to. */
    public int worker() {
        return worker;
    }
}
