package io.kvprefix.service;

import java.util.Objects;
import java.util.Set;

/**
 * One engine as the service sees it now: up (routed to) or down with the reason, the models it
 * serves, and the requests it has in flight.
 *
 * <p>Thread-safety: immutable.
 *
 * @param spec the engine
 * @param up true if it is routed to
 * @param downReason why it is not routed to, or null when up
 * @param models the model ids its {@code /v1/models} listed when it was last checked
 * @param inFlight requests forwarded to it and not finished
 */
public record EngineStatus(EngineSpec spec, boolean up, String downReason, Set<String> models, long inFlight) {
    public EngineStatus {
        Objects.requireNonNull(spec, "spec");
        models = Set.copyOf(models);
    }
}
