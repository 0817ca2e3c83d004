package io.kvprefix.internal.router;

import io.kvprefix.RoutingDecision;
import io.kvprefix.RoutingObserver;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * The router's decision observers: a copy-on-write array, so notifying (on every decision) is one
 * volatile read and a loop, and adding or removing (rare) copies the array under this object's lock.
 *
 * <p>Thread-safety: thread-safe.
 */
public final class Observers {
    private volatile RoutingObserver[] all = new RoutingObserver[0];

    /** Adds {@code o}; one added twice is called twice. */
    public synchronized void add(RoutingObserver o) {
        Objects.requireNonNull(o, "observer");
        RoutingObserver[] a = Arrays.copyOf(all, all.length + 1);
        a[a.length - 1] = o;
        all = a;
    }

    /** Removes one registration of {@code o}; false if it was not added. */
    public synchronized boolean remove(RoutingObserver o) {
        List<RoutingObserver> a = new ArrayList<>(List.of(all));
        boolean removed = a.remove(o);
        all = a.toArray(new RoutingObserver[0]);
        return removed;
    }

    /** Tells every observer of {@code d}. */
    public void decided(RoutingDecision d) {
        for (RoutingObserver o : all) {
            o.decided(d);
        }
    }
}
