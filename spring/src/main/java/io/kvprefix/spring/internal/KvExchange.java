package io.kvprefix.spring.internal;

import io.kvprefix.service.RoutedRequest;
import io.kvprefix.service.RouterService;

/**
 * One KV-aware exchange's state, shared by the route's filter, the routing step and the response
 * decorator through the exchange's attribute {@link #ATTRIBUTE}: the service, the current
 * {@link RoutedRequest} (the retry's after a retry), and whether the client went away.
 *
 * <p>Thread-safety: thread-safe; the fields are read and set from Reactor's threads, under this object's lock.
 */
public final class KvExchange {
    /** The exchange attribute that holds it; the routing step acts only on exchanges that have it. */
    public static final String ATTRIBUTE = KvExchange.class.getName();

    private final RouterService service;
    private RoutedRequest routed;
    private boolean gone;

    public KvExchange(RouterService service) {
        this.service = service;
    }

    RouterService service() {
        return service;
    }

    /** The current routed request, or null before routing (or when the router answered itself). */
    public synchronized RoutedRequest routed() {
        return routed;
    }

    /** Sets the routed request; if the client is already gone, it is cancelled at once and false returned. */
    synchronized boolean routed(RoutedRequest r) {
        this.routed = r;
        if (gone) {
            r.cancelled();
            return false;
        }
        return true;
    }

    synchronized boolean gone() {
        return gone;
    }

    /** The client went away (or the exchange was cancelled): the routed request, if any, is cancelled. */
    public void cancelled() {
        RoutedRequest r;
        synchronized (this) {
            gone = true;
            r = routed;
        }
        if (r != null) {
            r.cancelled();
        }
    }
}
