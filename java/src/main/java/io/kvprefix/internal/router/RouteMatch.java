package io.kvprefix.internal.router;

import io.kvprefix.BlockHasher;
import io.kvprefix.PrefixIndex;

/**
 * The hash-and-match step of one {@link io.kvprefix.Router} call, before the policy decides
 * (docs/SPEC.md section 6.5): a request's tokens hashed once and matched against the event-fed index
 * into {@link RouteScratch#first}, its local hashes handed back where the in-flight credit (docs/SPEC.md
 * section 6.7) or the caller needs them; in predicted mode its local and chain hashes into the scratch,
 * for the router to match against both indexes.
 *
 * <p>Thread-safety: stateless; each call uses the calling thread's scratch.
 */
public final class RouteMatch {
    private RouteMatch() {}

    /**
     * Event-fed: matches {@code tokens[offset .. offset+length)} hashed with {@code h} into
     * {@code s.first}; with {@code credit} (in-flight prefills counted) the choice gets the request's
     * local hashes, which also go to {@code out} if it is not null, all from the one call.
     */
    public static void tokens(
            PrefixIndex events,
            boolean credit,
            RouteScratch s,
            int[] tokens,
            int offset,
            int length,
            BlockHasher h,
            long[] out) {
        if (!credit && out == null) {
            events.match(tokens, offset, length, h, s.first);
            return;
        }
        long[] locals = out;
        if (locals == null) {
            s.ensure(h.blockCount(length));
            locals = s.locals;
        }
        int blocks = events.match(tokens, offset, length, h, s.first, locals);
        if (credit) { // the one call hands back the request's hashes for its credit
            s.choice.blocks = blocks;
            s.choice.locals = locals;
        }
    }

    /** Event-fed, a request given as its {@code n} local hashes: matches them into {@code s.first}. */
    public static void hashes(PrefixIndex events, boolean credit, RouteScratch s, long[] localHashes, int n) {
        if (credit) {
            s.choice.locals = localHashes;
            s.choice.blocks = n;
        }
        events.match(localHashes, 0, n, s.first);
    }

    /**
     * Predicted mode: the request's local and chain hashes into {@code s.locals} and {@code s.chains},
     * the local ones also into {@code out} if it is not null; returns the number of blocks.
     *
     * @throws IllegalArgumentException if {@code out} has room for fewer hashes than the request has blocks
     */
    public static int hashBoth(RouteScratch s, int[] tokens, int offset, int length, BlockHasher h, long[] out) {
        int blocks = h.blockCount(length);
        if (out != null && out.length < blocks) {
            throw new IllegalArgumentException(
                    "localHashesOut has room for " + out.length + " hashes, the request has " + blocks + " blocks");
        }
        s.ensure(blocks);
        h.hashBlocks(tokens, offset, length, s.locals, s.chains);
        if (out != null) {
            System.arraycopy(s.locals, 0, out, 0, blocks);
        }
        return blocks;
    }

    /** Predicted mode, a request given as its {@code n} local hashes: them and their chain hashes into the scratch. */
    public static void chains(RouteScratch s, BlockHasher h, long[] localHashes, int n) {
        s.ensure(n);
        System.arraycopy(localHashes, 0, s.locals, 0, n);
        h.chainHashes(localHashes, 0, n, false, 0L, s.chains, 0);
    }
}
