package io.kvprefix.service.internal;

import io.kvprefix.service.RoutedRequest;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The open decisions of the JSON route API (docs/SERVE.md section 3): each has an id, and its load
 * stays charged until its {@code first-token} call (the prefill load), its {@code done} call (all of
 * it) or its expiry (all of it, counted as expired), whichever comes first. At most {@code max} are
 * open at once.
 *
 * <p>Thread-safety: thread-safe (a concurrent map; {@link #sweep} runs on the service's timer).
 */
public final class DecisionBook {
    private record Open(RoutedRequest request, long expiresAt) {}

    private final ConcurrentHashMap<String, Open> open = new ConcurrentHashMap<>();
    private final SecureRandom random = new SecureRandom();
    private final long ttlNanos;
    private final int max;

    public DecisionBook(long ttlNanos, int max) {
        this.ttlNanos = ttlNanos;
        this.max = max;
    }

    /** Records {@code r} and returns its id, or null if {@code max} decisions are open. */
    public String open(RoutedRequest r) {
        if (open.size() >= max) {
            return null;
        }
        byte[] b = new byte[12];
        random.nextBytes(b);
        String id = "kvp-" + HexFormat.of().formatHex(b);
        open.put(id, new Open(r, System.nanoTime() + ttlNanos));
        return id;
    }

    /** The open decision {@code id}, or null (unknown, done or expired). */
    public RoutedRequest get(String id) {
        Open o = open.get(id);
        return o == null ? null : o.request();
    }

    /** Removes and returns the open decision {@code id}, or null. */
    public RoutedRequest remove(String id) {
        Open o = open.remove(id);
        return o == null ? null : o.request();
    }

    /** Ends every decision whose time is up ({@link RoutedRequest#expired()}); returns how many. */
    public int sweep() {
        long now = System.nanoTime();
        int n = 0;
        for (Iterator<Map.Entry<String, Open>> it = open.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Open> e = it.next();
            if (now - e.getValue().expiresAt() >= 0 && open.remove(e.getKey(), e.getValue())) {
                e.getValue().request().expired();
                n++;
            }
        }
        return n;
    }

    /** Decisions open now. */
    public int size() {
        return open.size();
    }

    /** The time to live of a decision, in milliseconds. */
    public long ttlMillis() {
        return ttlNanos / 1_000_000;
    }

    /** Ends every open decision (the service is closing). */
    public void clear() {
        for (String id : open.keySet()) {
            RoutedRequest r = remove(id);
            if (r != null) {
                r.expired();
            }
        }
    }
}
