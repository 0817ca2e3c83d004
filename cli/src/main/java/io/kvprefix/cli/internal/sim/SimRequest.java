package io.kvprefix.cli.internal.sim;

import io.kvprefix.KvEvent;
import io.kvprefix.RoutingDecision;
import io.kvprefix.workload.TraceRequest;
import java.util.List;

/**
 * One request in flight in a simulation: the trace request, where it went, and its progress.
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
    /** The router's decision (KV-aware policies only). */
    RoutingDecision decision;
    /** Events of its admission, sent to the index when its prefill is done. */
    List<KvEvent> pendingEvents;

    SimRequest(TraceRequest trace, long arrivalNs) {
        this.trace = trace;
        this.arrivalNs = arrivalNs;
    }

    /** The worker it was routed to. */
    public int worker() {
        return worker;
    }
}
