package io.kvprefix.internal.offheap;

import io.kvprefix.BlockHasher;
import io.kvprefix.internal.hash.PortableHashKernel;
import net.openhft.hashing.LongHashFunction;

/**
 * The match kernel in Java: jump search with set inclusion at jump targets and lazy chain hashing
 * (a chain hash is computed only where a probed key exists). The home slots of the next few jump
 * targets are touched ahead of the search, a sliding window, so their cache misses overlap.
 *
 * <p>Thread-safety: immutable; shared by every reading thread.
 */
final class JavaMatchKernel implements MatchKernel {
    /** Jump targets whose home slots are touched ahead of the search. */
    private static final int PREFETCH_AHEAD = 8;

    private final int jump;
    private final LongHashFunction chainFn;

    JavaMatchKernel(int jump, long seed, long chainSeed) {
        this.jump = jump;
        this.chainFn = new PortableHashKernel(seed, chainSeed).chainFunction();
    }

    @Override
    public boolean isNative() {
        return false;
    }

    @Override
    public int matchTokens(PositionalTable t, int[] tokens, int off, int len, BlockHasher h, ReadScratch s) {
        int blocks = h.localHashes(tokens, off, len, s.locals, 0);
        return matchHashes(t, s.locals, 0, blocks, s);
    }

    @Override
    public int matchHashes(PositionalTable t, long[] q, int off, int len, ReadScratch s) {
        long[] chain = s.chain;
        long[] active = s.active;
        int words = t.words;
        chain[0] = q[off];
        int computed = 0; // chain[0..computed] are valid
        int touched = 0; // jump targets up to here have been touched
        long sink = 0;
        for (int p = jump; p < len && p <= PREFETCH_AHEAD * jump; p += jump) {
            sink += t.touch(Math.min(p, len - 1), q[off + Math.min(p, len - 1)]);
            touched = p;
        }
        int e0 = t.probe(0, q[off], q[off]);
        if (e0 < 0) {
            return 0;
        }
        boolean any = false;
        for (int w = 0; w < words; w++) {
            active[w] = t.bits(e0, w);
            any |= active[w] != 0;
        }
        int count = 0;
        int cur = 0;
        while (any && cur < len - 1) {
            int nxt = Math.min(cur + jump, len - 1);
            if (touched < len - 1) {
                touched += jump;
                int p = Math.min(touched, len - 1);
                sink += t.touch(p, q[off + p]);
            }
            // Probe the jump target; its chain hash is computed only if its key exists.
            int slot = probeLazy(t, nxt, q, off, chain, computed, s);
            computed = Math.max(computed, s.computedAfterProbe);
            if (slot >= 0 && t.covers(slot, active)) {
                cur = nxt;
                continue;
            }
            for (int p = cur + 1; p <= nxt && any; p++) { // someone drops out in (cur, nxt]: walk it
                int e = probeLazy(t, p, q, off, chain, computed, s);
                computed = Math.max(computed, s.computedAfterProbe);
                any = false;
                for (int w = 0; w < words; w++) {
                    long held = e < 0 ? 0L : t.bits(e, w);
                    count = emit(active[w] & ~held, w, p, count, s);
                    active[w] &= held;
                    any |= active[w] != 0;
                }
            }
            cur = nxt;
        }
        for (int w = 0; w < words; w++) {
            count = emit(active[w], w, len, count, s);
        }
        s.sink += sink;
        return count;
    }

    private static int emit(long bits, int word, int depth, int count, ReadScratch s) {
        while (bits != 0) {
            int bit = Long.numberOfTrailingZeros(bits);
            bits &= bits - 1;
            s.outSlots[count] = (word << 6) + bit;
            s.outDepths[count] = depth;
            count++;
        }
        return count;
    }

    /**
     * The slot of {@code (pos, q[pos], chain[pos])} or -1, extending the request's chain hashes up to
     * {@code pos} only when an entry with that position and local hash exists. Leaves the new number
     * of valid chain hashes in {@code s.computedAfterProbe}.
     */
    private int probeLazy(PositionalTable t, int pos, long[] q, int off, long[] chain, int computed, ReadScratch s) {
        long local = q[off + pos];
        int want = pos + 1;
        int mask = t.mask;
        int i = t.home(pos, local);
        s.computedAfterProbe = computed;
        for (int n = 0; n <= mask; n++) {
            int st = t.state(i);
            if (st == TableLayout.STATE_EMPTY) {
                return -1;
            }
            if (st == want && t.local(i) == local) {
                if (s.computedAfterProbe < pos) {
                    for (int k = s.computedAfterProbe + 1; k <= pos; k++) {
                        chain[k] = PortableHashKernel.chainStep(chainFn, chain[k - 1], q[off + k], s.pair);
                    }
                    s.computedAfterProbe = pos;
                }
                if (t.chain(i) == chain[pos]) {
                    return i;
                }
            }
            i = (i + 1) & mask;
        }
        return -1;
    }
}
