package io.kvprefix.internal.offheap;

/**
 * The child runs of every run, as doubly linked lists indexed by run id: which runs hang from a
 * block of run {@code r} ({@link #first}, then {@link #next}). Kept apart from the run records
 * because a record can move to a bigger one under its own lock while a sibling's links change
 * under the parent's lock: here nothing moves, so no update is lost, and unlinking a dying run
 * is O(1) however many siblings it has.
 *
 * <p>Storage is chunked ({@value #CHUNK} runs a chunk) so growth adds chunks and never copies what
 * writers may be changing. Readers never use this: matches find runs through the child table.
 *
 * <p>Locks: its monitor, only to add chunks; the links of run {@code r}'s children change under
 * {@code r}'s run lock.
 *
 * <p>Thread-safety: the links of the children of run {@code r} change only under {@code r}'s lock;
 * adding chunks is synchronised.
 */
final class RunLinks {
    private static final int CHUNK = 4096;
    /**
     * Per chunk, four ints a run: first child + 1, next sibling + 1, previous sibling + 1, and one
     * more than the deepest offset any child hangs from (never lowered: a bound, not a count).
     */
    private volatile int[][] chunks = new int[0][];

    private int[] chunk(int run) {
        int c = run / CHUNK;
        int[][] cs = chunks;
        if (c >= cs.length) {
            cs = grow(c);
        }
        return cs[c];
    }

    private synchronized int[][] grow(int c) {
        int[][] cs = chunks;
        if (c < cs.length) {
            return cs;
        }
        int[][] more = java.util.Arrays.copyOf(cs, Math.max(c + 1, cs.length * 2));
        for (int i = cs.length; i < more.length; i++) {
            more[i] = new int[4 * CHUNK];
        }
        chunks = more;
        return more;
    }

    private int get(int run, int field) {
        return chunk(run)[4 * (run % CHUNK) + field] - 1;
    }

    private void set(int run, int field, int value) {
        chunk(run)[4 * (run % CHUNK) + field] = value + 1;
    }

    /** The first run hanging from run {@code run}, or -1. */
    int first(int run) {
        return get(run, 0);
    }

    /** The next run hanging from the same parent run, or -1. */
    int next(int run) {
        return get(run, 1);
    }

    /**
     * No child of run {@code run} hangs from an offset at or past this: one more than the deepest
     * offset a child was linked at (0 if it never had one).
     */
    int attachBound(int run) {
        return get(run, 3) + 1;
    }

    /** Adds {@code child}, hanging from offset {@code at} of {@code parent}, to its children (under the parent's lock). */
    void link(int parent, int child, int at) {
        if (at >= attachBound(parent)) {
            set(parent, 3, at);
        }
        int head = first(parent);
        set(child, 1, head);
        set(child, 2, -1);
        if (head >= 0) {
            set(head, 2, child);
        }
        set(parent, 0, child);
    }

    /** Removes {@code child} from the children of {@code parent} (under the parent's lock). */
    void unlink(int parent, int child) {
        int prev = get(child, 2);
        int next = next(child);
        if (prev >= 0) {
            set(prev, 1, next);
        } else {
            set(parent, 0, next);
        }
        if (next >= 0) {
            set(next, 2, prev);
        }
        set(child, 1, -1);
        set(child, 2, -1);
    }

    /** A restore: run {@code run}'s links as they were saved (ids, -1 for none; the attach bound as {@link #attachBound} gives it). */
    void restore(int run, int first, int next, int prev, int attachBound) {
        set(run, 0, first);
        set(run, 1, next);
        set(run, 2, prev);
        set(run, 3, attachBound - 1);
    }

    /** Forgets run {@code run}'s links (its id is being reused; it has no children left). */
    void reset(int run) {
        set(run, 0, -1);
        set(run, 1, -1);
        set(run, 2, -1);
        set(run, 3, -1);
    }

    /** Heap bytes held. */
    long bytes() {
        return (long) chunks.length * 16 * CHUNK;
    }
}
