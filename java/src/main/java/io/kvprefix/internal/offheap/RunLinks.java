package io.kvprefix.internal.offheap;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.LongAdder;

/**
 * The child runs of every run, as doubly linked lists indexed by run id: which runs hang from a
 * block of run {@code r} ({@link #first}, then {@link #next}). Kept apart from the run records
 * because a record can move to a bigger one under its own lock while its children change: here
 * nothing moves, so no update is lost, and unlinking a dying run is O(1) however many siblings it has.
 *
 * <p>A child is pushed at the head without the parent's lock (a CAS on the head, then the old
 * head's back link); a dying child is unlinked under the parent's lock, and waits for a push that
 * has moved the head past it but not yet written its back link. The protocol's rows are in this
 * package's {@code package-info.java} (the protocol of a branch); {@code RunLinksRaceTest} checks it.
 *
 * <p>Locks: its monitor, only to add chunks; an unlink holds the parent's run lock, a push none.
 *
 * <p>Thread-safety: pushes from any writer thread at once; unlinks of one parent's children one at a
 * time (under its lock); a child is never unlinked while its own push is in progress (its creator pins it).
 */
final class RunLinks {
    private static final int CHUNK = 4096;
    private static final int FIRST = 0;
    private static final int NEXT = 1;
    private static final int PREV = 2;
    private static final int BOUND = 3;
    private static final VarHandle INTS = MethodHandles.arrayElementVarHandle(int[].class);
    /**
     * Per chunk, four ints a run: first child + 1, next sibling + 1, previous sibling + 1, and one
     * more than the deepest offset any child hangs from (never lowered: a bound, not a count).
     */
    private volatile int[][] chunks = new int[0][];
    /**
     * The rules of the protocol, each of which a test removes to see its race go wrong (the
     * negative controls of {@code RunLinksRaceTest}).
     */
    enum Rule {
        /** A push claims the head by CAS (else a plain write: a concurrent push is lost). */
        CAS_HEAD,
        /** The attach bound is raised by CAS (else a plain write: a deeper raise is lost). */
        CAS_BOUND,
        /** An unlink of the head clears the next run's back link by CAS (else it erases a push's). */
        CAS_BACK_LINK,
        /** An unlink waits for a push that moved the head past it (else the unlink is lost). */
        WAIT_FOR_PUSH
    }

    /** The rule left out (null: none; only tests leave one out). */
    private final Rule dropped;
    /** Pushes that lost the head's CAS to another and tried again (a contention counter). */
    private final LongAdder pushRetries = new LongAdder();

    RunLinks() {
        this(null);
    }

    /** Links that follow every rule but {@code dropped} (a negative control's; null for none). */
    RunLinks(Rule dropped) {
        this.dropped = dropped;
    }

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
        return (int) INTS.getAcquire(chunk(run), 4 * (run % CHUNK) + field) - 1;
    }

    private void set(int run, int field, int value) {
        INTS.setRelease(chunk(run), 4 * (run % CHUNK) + field, value + 1);
    }

    private boolean cas(int run, int field, int expect, int value) {
        return INTS.compareAndSet(chunk(run), 4 * (run % CHUNK) + field, expect + 1, value + 1);
    }

    /** A CAS, or where a negative control drops {@code rule}, a plain write that always succeeds. */
    private boolean casUnless(Rule rule, int run, int field, int expect, int value) {
        if (dropped == rule) {
            set(run, field, value);
            return true;
        }
        return cas(run, field, expect, value);
    }

    /** The first run hanging from run {@code run}, or -1. */
    int first(int run) {
        return get(run, FIRST);
    }

    /** The next run hanging from the same parent run, or -1. */
    int next(int run) {
        return get(run, NEXT);
    }

    /** The previous run hanging from the same parent run, or -1 (the first). */
    int previous(int run) {
        return get(run, PREV);
    }

    /**
     * No child of run {@code run} hangs from an offset at or past this: one more than the deepest
     * offset a child was linked at (0 if it never had one).
     */
    int attachBound(int run) {
        return get(run, BOUND) + 1;
    }

    /** Pushes that retried the head's CAS since the index was made. */
    long pushRetries() {
        return pushRetries.sum();
    }

    /**
     * Adds {@code child}, hanging from offset {@code at} of {@code parent}, to its children: the bound
     * raised first, then the child pushed at the head by CAS, then the old head's back link. Takes
     * no lock; the child must not be findable in the child table yet.
     */
    void link(int parent, int child, int at) {
        int b;
        while ((b = get(parent, BOUND)) < at && !casUnless(Rule.CAS_BOUND, parent, BOUND, b, at)) {
            pushRetries.increment();
        }
        set(child, PREV, -1);
        int head = first(parent);
        set(child, NEXT, head);
        while (!casUnless(Rule.CAS_HEAD, parent, FIRST, head, child)) {
            pushRetries.increment();
            head = first(parent);
            set(child, NEXT, head);
        }
        if (head >= 0) {
            set(head, PREV, child); // nobody else writes it now: it had no predecessor until this push
        }
    }

    /** Removes {@code child} from the children of {@code parent} (under the parent's lock; no push of {@code child} in progress). */
    void unlink(int parent, int child) {
        int spins = 0;
        while (true) {
            int prev = get(child, PREV);
            int next = next(child);
            if (prev < 0) {
                if (cas(parent, FIRST, child, next)) {
                    if (next >= 0) {
                        casUnless(Rule.CAS_BACK_LINK, next, PREV, child, -1); // unless a push onto next wrote it
                    }
                    break;
                }
                if (dropped == Rule.WAIT_FOR_PUSH) {
                    break; // the negative control: the unlink is lost
                }
                // a push moved the head past child and has not yet written child's back link
                if (++spins > 64) {
                    Thread.yield();
                } else {
                    Thread.onSpinWait();
                }
                continue;
            }
            set(prev, NEXT, next);
            if (next >= 0) {
                set(next, PREV, prev);
            }
            break;
        }
        set(child, NEXT, -1);
        set(child, PREV, -1);
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
