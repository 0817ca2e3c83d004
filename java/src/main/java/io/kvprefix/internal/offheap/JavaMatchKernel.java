package io.kvprefix.internal.offheap;

import static io.kvprefix.internal.offheap.ChainLayout.CHUNK_ENTRIES;
import static io.kvprefix.internal.offheap.ChainLayout.CHUNK_NEXT;
import static io.kvprefix.internal.offheap.ChainLayout.INLINE_ENTRIES;
import static io.kvprefix.internal.offheap.ChainLayout.RUN_CHUNKS;
import static io.kvprefix.internal.offheap.ChainLayout.RUN_ENTRY0;

import io.kvprefix.BlockHasher;

/**
 * The match kernel in Java. From the run that starts the request's chain it compares the request's
 * local hashes with each run's blocks, one after another in memory, and credits every holder of the
 * run with the blocks its cutoff covers; where the request leaves a run it looks up the run hanging
 * from that block (one child-table probe per run, not per block). A worker's depth is what the
 * deepest run it holds credits it with: reach is prefix-closed, so holding there means holding
 * everything before. The walk stops where no holder reaches the end of the matched part.
 *
 * <p>Locks: takes none; its caller is inside the reader gate.
 *
 * <p>Thread-safety: immutable; shared by every reading thread.
 */
final class JavaMatchKernel implements MatchKernel {

    @Override
    public boolean isNative() {
        return false;
    }

    @Override
    public int matchTokens(
            ChildTable children, RunArena.RunTable runs, int[] tokens, int off, int len, BlockHasher h, ReadScratch s) {
        int blocks = h.localHashes(tokens, off, len, s.locals, 0);
        return matchHashes(children, runs, s.locals, 0, blocks, s);
    }

    @Override
    public int matchTokensAll(
            ChildTable children,
            RunArena.RunTable runs,
            int[] tokens,
            int off,
            int len,
            BlockHasher h,
            long[] out,
            ReadScratch s) {
        int blocks = h.localHashes(tokens, off, len, out, 0);
        return matchHashes(children, runs, out, 0, blocks, s);
    }

    @Override
    public int matchHashes(ChildTable children, RunArena.RunTable runs, long[] q, int off, int len, ReadScratch s) {
        int run = children.find(-1, q[off]);
        int pos = 0; // position of the run's block 0
        int count = 0;
        while (run >= 0 && run < runs.capacity()) {
            long a = runs.address(run);
            if (a == 0) {
                break;
            }
            int length = Runs.length(a);
            int m = 1 + Runs.matching(a, 1, length, q, off + pos + 1, len - pos - 1);
            long need = (long) m << 32;
            boolean onward = false;
            int n = Runs.entryCount(a);
            int p = 0;
            for (; p < n && p < INLINE_ENTRIES; p++) {
                long e = Mem.getLongAcquire(a + RUN_ENTRY0 + 8L * p);
                count = credit(e, pos, m, count, s);
                onward |= (e & 0xFF00000000L) >= need && (int) e != 0;
            }
            long chunk = Mem.getLongAcquire(a + RUN_CHUNKS);
            for (int k = 0; p < n; k++) {
                int cap = ChainLayout.chunkCapacity(k);
                for (int q2 = 0; q2 < cap && p < n; q2++, p++) {
                    long e = Mem.getLongAcquire(chunk + CHUNK_ENTRIES + 8L * q2);
                    count = credit(e, pos, m, count, s);
                    onward |= (e & 0xFF00000000L) >= need && (int) e != 0;
                }
                chunk = Mem.getLongAcquire(chunk + CHUNK_NEXT);
            }
            if (!onward || pos + m == len) {
                break;
            }
            run = children.find(ChainLayout.block(run, m - 1), q[off + pos + m]);
            pos += m;
        }
        for (int i = 0; i < count; i++) {
            s.indexOf[s.outSlots[i]] = 0;
        }
        return count;
    }

    /** Credits the holder of entry {@code e} with the blocks of this run its cutoff covers (a deeper run's credit replaces a shallower one's). */
    private static int credit(long e, int pos, int m, int count, ReadScratch s) {
        int slot = ChainLayout.entrySlot(e);
        int cutoff = ChainLayout.entryCutoff(e);
        if (slot < 0 || cutoff == 0) {
            return count;
        }
        int depth = pos + Math.min(cutoff, m);
        int at = s.indexOf[slot];
        if (at == 0) {
            s.outSlots[count] = slot;
            s.outDepths[count] = depth;
            s.indexOf[slot] = ++count;
        } else {
            s.outDepths[at - 1] = depth;
        }
        return count;
    }
}
