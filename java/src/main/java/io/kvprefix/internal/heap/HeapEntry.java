package io.kvprefix.internal.heap;

import java.util.Arrays;

/**
 * One block of the heap index: a position, its local hash, the chain hash of the prefix ending in
 * it, its tree links and its reach bits (workers holding it and every ancestor).
 *
 * <p>Thread-safety: not thread-safe; guarded by the index's lock.
 */
final class HeapEntry {
    private static final long[] EMPTY_BITS = new long[0];

    final int pos;
    final long local;
    final long chain;
    final HeapEntry parent;
    HeapEntry nextSameKey; // other entries under the same (pos, local) table key
    HeapEntry firstChild; // children: entries at pos + 1 whose parent is this one
    HeapEntry prevSibling;
    HeapEntry nextSibling;
    int childCount;
    int holders; // workers holding this block, reachable or not
    boolean collected; // dropped from the table by collect(); never collected twice
    long[] reach = EMPTY_BITS; // workers holding this block and all its ancestors

    HeapEntry(int pos, long local, long chain, HeapEntry parent) {
        this.pos = pos;
        this.local = local;
        this.chain = chain;
        this.parent = parent;
    }

    boolean reaches(int slot) {
        int w = slot >>> 6;
        return w < reach.length && (reach[w] & (1L << slot)) != 0;
    }

    void setReach(int slot) {
        int w = slot >>> 6;
        if (w >= reach.length) {
            reach = Arrays.copyOf(reach, w + 1);
        }
        reach[w] |= 1L << slot;
    }

    void clearReach(int slot) {
        int w = slot >>> 6;
        if (w < reach.length) {
            reach[w] &= ~(1L << slot);
        }
    }
}
