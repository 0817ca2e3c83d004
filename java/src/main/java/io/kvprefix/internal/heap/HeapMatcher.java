package io.kvprefix.internal.heap;

import io.kvprefix.MatchResult;
import io.kvprefix.Worker;
import io.kvprefix.internal.MatchResults;
import io.kvprefix.internal.hash.PortableHashKernel;
import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;
import net.openhft.hashing.LongHashFunction;

/**
 * The heap index's jump search (docs/SPEC.md section 4): probe every {@code jump}-th position,
 * advance when every still-active worker is in the target's reach bits (exact, since bits are
 * prefix-closed), walk position by position otherwise; chain hashes are computed only where a key
 * exists.
 *
 * <p>Thread-safety: immutable; the caller holds the index's lock (shared) and passes its own scratch.
 */
final class HeapMatcher {
    private static final MatchResults RESULTS = MatchResults.access();

    /** Per-thread buffers (no allocation once grown). */
    static final class Scratch {
        long[] chain = new long[64];
        long[] active = new long[1];
        long[] locals = new long[64];
        final long[] pair = new long[2];
        /** While tiered answers are paired (docs/SPEC.md section 3.1): the result entry (+1) of each GPU slot added. */
        int[] resultAt = new int[64];
        /** Any-tier view slots and their depths, merged at the end of a match. */
        int[] viewSlots = new int[16];

        int[] viewDepths = new int[16];
        int views;
        int[] gpuSlotOf;

        void ensureSlots(int n) {
            if (resultAt.length < n) {
                resultAt = new int[n];
            }
        }
    }

    private final int jump;
    private final LongHashFunction chainFn;

    HeapMatcher(int jump, LongHashFunction chainFn) {
        this.jump = jump;
        this.chainFn = chainFn;
    }

    /** The table key of {@code (pos, local)}. */
    static long key(int pos, long local) {
        return local + 0x9E3779B97F4A7C15L * (pos + 1L); // fastutil mixes the key again
    }

    /** The entry {@code (pos, local, chain)} among those under one table key, or null. */
    static HeapEntry inChain(HeapEntry head, int pos, long local, long chain) {
        for (HeapEntry e = head; e != null; e = e.nextSameKey) {
            if (e.pos == pos && e.local == local && e.chain == chain) {
                return e;
            }
        }
        return null;
    }

    /**
     * Matches {@code q[off .. off+len)} into {@code into}. {@code gpuSlotOf} is null while no worker
     * has an any-tier view; otherwise, per slot, the GPU slot of the worker whose view it is (-1 for a
     * GPU view), and each worker's two slots are paired into its two depths.
     */
    void match(
            Long2ObjectOpenHashMap<HeapEntry> table,
            int words,
            Worker[] slotWorkers,
            int[] gpuSlotOf,
            long[] q,
            int off,
            int len,
            MatchResult into,
            Scratch s) {
        RESULTS.reset(into, len);
        if (len == 0) {
            return;
        }
        s.gpuSlotOf = gpuSlotOf;
        s.views = 0;
        if (gpuSlotOf != null) {
            s.ensureSlots(gpuSlotOf.length);
        }
        try {
            matchInto(table, words, slotWorkers, q, off, len, into, s);
            if (gpuSlotOf != null) {
                pairViews(into, slotWorkers, s);
            }
        } finally {
            s.gpuSlotOf = null;
        }
    }

    /** Gives each view's depth to its worker's entry (or a new entry with GPU depth 0), then forgets where entries were. */
    private static void pairViews(MatchResult into, Worker[] slotWorkers, Scratch s) {
        for (int i = 0; i < s.views; i++) {
            int slot = s.viewSlots[i];
            int at = s.resultAt[s.gpuSlotOf[slot]];
            if (at > 0) {
                RESULTS.raiseAnyTier(into, at - 1, s.viewDepths[i]);
            } else {
                RESULTS.add(into, slotWorkers[slot], 0, s.viewDepths[i]);
            }
        }
        java.util.Arrays.fill(s.resultAt, 0);
    }

    private void matchInto(
            Long2ObjectOpenHashMap<HeapEntry> table,
            int words,
            Worker[] slotWorkers,
            long[] q,
            int off,
            int len,
            MatchResult into,
            Scratch s) {
        HeapEntry e0 = inChain(table.get(key(0, q[off])), 0, q[off], q[off]);
        if (e0 == null) {
            return;
        }
        if (s.active.length < words) {
            s.active = new long[words];
        }
        if (s.chain.length < len) {
            s.chain = new long[Math.max(len, s.chain.length * 2)];
        }
        long[] active = s.active;
        s.chain[0] = q[off];
        int computed = 0; // chain[0..computed] are valid
        boolean any = false;
        for (int w = 0; w < words; w++) {
            active[w] = w < e0.reach.length ? e0.reach[w] : 0L;
            any |= active[w] != 0;
        }
        int cur = 0;
        while (any && cur < len - 1) {
            int nxt = Math.min(cur + jump, len - 1);
            HeapEntry t = table.get(key(nxt, q[off + nxt]));
            if (t != null) { // only now is the chain hash at nxt needed
                computed = extendChain(q, off, s, computed, nxt);
                t = inChain(t, nxt, q[off + nxt], s.chain[nxt]);
            }
            if (t != null && covers(t.reach, active, words)) {
                cur = nxt;
                continue;
            }
            computed = walk(table, words, slotWorkers, q, off, cur, nxt, computed, into, s);
            any = anyActive(active, words);
            cur = nxt;
        }
        for (int w = 0; w < words; w++) {
            report(into, slotWorkers, active[w], w, len, s);
        }
    }

    /**
     * Someone drops out inside {@code (cur, nxt]}: walks it position by position, reporting each
     * worker at the position where it drops out; returns the new number of valid chain hashes.
     */
    private int walk(
            Long2ObjectOpenHashMap<HeapEntry> table,
            int words,
            Worker[] slotWorkers,
            long[] q,
            int off,
            int cur,
            int nxt,
            int computed,
            MatchResult into,
            Scratch s) {
        long[] active = s.active;
        boolean any = true;
        for (int p = cur + 1; p <= nxt && any; p++) {
            HeapEntry e = table.get(key(p, q[off + p]));
            if (e != null) {
                computed = extendChain(q, off, s, computed, p);
                e = inChain(e, p, q[off + p], s.chain[p]);
            }
            any = false;
            for (int w = 0; w < words; w++) {
                long held = e == null || w >= e.reach.length ? 0L : e.reach[w];
                report(into, slotWorkers, active[w] & ~held, w, p, s);
                active[w] &= held;
                any |= active[w] != 0;
            }
        }
        return computed;
    }

    private static boolean anyActive(long[] active, int words) {
        for (int w = 0; w < words; w++) {
            if (active[w] != 0) {
                return true;
            }
        }
        return false;
    }

    private static void report(MatchResult into, Worker[] slotWorkers, long bits, int word, int depth, Scratch s) {
        while (bits != 0) {
            int bit = Long.numberOfTrailingZeros(bits);
            bits &= bits - 1;
            int slot = (word << 6) + bit;
            if (s.gpuSlotOf == null) {
                RESULTS.add(into, slotWorkers[slot], depth);
            } else if (s.gpuSlotOf[slot] < 0) {
                RESULTS.add(into, slotWorkers[slot], depth, depth);
                s.resultAt[slot] = into.size();
            } else {
                if (s.views == s.viewSlots.length) {
                    s.viewSlots = java.util.Arrays.copyOf(s.viewSlots, s.views * 2);
                    s.viewDepths = java.util.Arrays.copyOf(s.viewDepths, s.views * 2);
                }
                s.viewSlots[s.views] = slot;
                s.viewDepths[s.views++] = depth;
            }
        }
    }

    /** True if every active worker is in {@code reach}. */
    private static boolean covers(long[] reach, long[] active, int words) {
        for (int w = 0; w < words; w++) {
            long r = w < reach.length ? reach[w] : 0L;
            if ((active[w] & ~r) != 0) {
                return false;
            }
        }
        return true;
    }

    private int extendChain(long[] q, int off, Scratch s, int computed, int upTo) {
        for (int i = computed + 1; i <= upTo; i++) {
            s.chain[i] = PortableHashKernel.chainStep(chainFn, s.chain[i - 1], q[off + i], s.pair);
        }
        return Math.max(computed, upTo);
    }
}
