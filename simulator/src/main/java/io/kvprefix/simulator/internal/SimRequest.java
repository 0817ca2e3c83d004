package io.kvprefix.simulator.internal;

import io.kvprefix.RoutingDecision;
import io.kvprefix.simulator.EngineRequest;
import io.kvprefix.workload.TraceRequest;

/**
 * One request in flight in a simulation: the trace request, when it arrived, where it went, and the
 * router's decision for it (its progress through its engine is the {@link EngineRequest}'s).
 *
 * <p>Thread-safety: not thread-safe; owned by the simulation thread.
 */
public final class SimRequest extends EngineRequest {
    private final long arrivalNs;
    private int worker = -1;
    private RoutingDecision decision;

    /** A request of {@code trace} arriving at simulated time {@code arrivalNs}. */
    public SimRequest(TraceRequest trace, long arrivalNs) {
        super(trace);
        this.arrivalNs = arrivalNs;
    }

    /** Arrival, simulated nanoseconds. */
    public long arrivalNs() {
        return arrivalNs;
    }

    /** The worker it was routed to (-1 before). */
    public int worker() {
        return worker;
    }

    /** It goes to {@code w}. */
    public void routedTo(int w) {
        worker = w;
    }

    /** The router's decision (the Router-backed policies only; null otherwise and once finished). */
    RoutingDecision decision() {
        return decision;
    }

    void decision(RoutingDecision d) {
        decision = d;
    }
}
