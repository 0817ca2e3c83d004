package io.kvprefix;

/**
 * Sees every decision a {@link Router} makes, right after it is made ({@link Router#addObserver}):
 * how metrics count decisions per worker, cached blocks per decision and decisions below the minimum
 * match without the router knowing about them. A router without observers pays one volatile read
 * per decision for the hook.
 *
 * <p>Thread-safety: implementations must be thread-safe: the router calls them on the routing
 * threads, from several at once. They should return quickly and must not throw (an exception reaches
 * the caller of {@link Router#route}, after the decision was made and charged).
 */
@FunctionalInterface
public interface RoutingObserver {
    /** Called once per decision, on the thread that routed, after the chosen worker was charged. */
    void decided(RoutingDecision decision);
}
