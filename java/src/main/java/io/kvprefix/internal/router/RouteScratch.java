package io.kvprefix.internal.router;

import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;

/**
 * One routing thread's buffers, so a decision allocates nothing but itself (and, with in-flight
 * prefills counted, its credit's new trie nodes): the two match results, the choice, the request's
 * local and chain hashes, and the path of the in-flight credit being checked (docs/SPEC.md section 6.7).
 *
 * <p>Thread-safety: not thread-safe; one instance per routing thread.
 */
public final class RouteScratch {
    /** The event-fed index's answer. */
    public final MatchResult first = new MatchResult();
    /** The predicted index's answer, or the coverage check's. */
    public final MatchResult second = new MatchResult();
    /** The decision being made. */
    public final LoadTable.Choice choice = new LoadTable.Choice();
    /** The request's local hashes. */
    public long[] locals = new long[64];
    /** The request's chain hashes (predicted mode). */
    public long[] chains = new long[64];
    /** The path of the in-flight credit whose coverage is checked. */
    public long[] check = new long[64];

    /** Room for a request of {@code blocks} blocks. */
    public void ensure(int blocks) {
        if (locals.length < blocks) {
            int n = Math.max(blocks, locals.length * 2);
            locals = new long[n];
            chains = new long[n];
        }
    }

    /** Room for a checked path of {@code blocks} blocks. */
    public void ensureCheck(int blocks) {
        if (check.length < blocks) {
            check = new long[Math.max(blocks, check.length * 2)];
        }
    }

    /**
     * Checks the oldest in-flight credit whose prefill has finished against {@code events} (one match
     * of its local hashes, no hashing; docs/SPEC.md section 6.7) and takes it back if the index holds
     * all its blocks on its worker. Uses {@link #second}.
     */
    public void checkCovered(InflightBlocks inflight, PrefixIndex events) {
        InflightPrefill p = inflight.nextToCheck();
        if (p != null) {
            ensureCheck(p.blocks());
            InflightBlocks.path(p, check);
            events.match(check, 0, p.blocks(), second);
            if (second.depthOf(p.load().worker()) >= p.blocks()) {
                inflight.covered(p);
            }
        }
    }
}
