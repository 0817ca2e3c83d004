package io.kvprefix.internal.router;

/**
 * A prefill the router sent and has not heard finish: how many uncached tokens it charged and when
 * it was routed, as a node of its worker's list of pending prefills (oldest first), which the
 * kvprefix-ttft policy reads to estimate each worker's backlog.
 *
 * <p>Thread-safety: not thread-safe; read and written only under its {@link LoadTable}'s lock.
 */
public final class PendingPrefill {
    final long tokens;
    final long routedAt;
    PendingPrefill older;
    PendingPrefill younger;
    boolean linked;

    PendingPrefill(long tokens, long routedAt) {
        this.tokens = tokens;
        this.routedAt = routedAt;
    }
}
