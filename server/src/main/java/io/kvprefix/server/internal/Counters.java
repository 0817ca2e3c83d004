package io.kvprefix.server.internal;

import java.util.concurrent.atomic.AtomicLong;

/**
 * What the front door has open now: client connections, connections to engines, and exchanges
 * (proxied requests between their arrival and their end), so tests can see every one return to 0 and
 * the proxy benchmark can divide memory by open streams.
 *
 * <p>Thread-safety: thread-safe (atomic counters, changed on the event loops).
 */
public final class Counters {
    public final AtomicLong clientConnections = new AtomicLong();
    public final AtomicLong engineConnections = new AtomicLong();
    public final AtomicLong exchanges = new AtomicLong();
    public final AtomicLong requests = new AtomicLong();
}
