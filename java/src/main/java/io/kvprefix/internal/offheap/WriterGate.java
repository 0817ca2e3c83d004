package io.kvprefix.internal.offheap;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Lets writers of different workers apply events side by side and holds them all out while the
 * child table is rebuilt. A writer registers on a counter striped by thread (so two writers rarely
 * share a cache line) and then checks the exclusive flag; the rebuilder sets the flag and then waits
 * for every counter to drain (Dekker style: each side writes, then reads the other's word).
 *
 * <p>Locks: this is the writer gate; {@link #exclusively} holds its monitor while it holds the
 * writers out.
 *
 * <p>Thread-safety: {@link #enter}/{@link #exit} from any number of threads; {@link #exclusively} is
 * serialised and must not be called by a thread that has entered.
 */
final class WriterGate {
    private static final int STRIPES = 16; // power of two
    private static final int PAD = 8; // longs per cache line
    private final AtomicLongArray counts = new AtomicLongArray(STRIPES * PAD);
    private volatile boolean exclusive;

    /** Registers a writer; returns the token to pass to {@link #exit}. */
    int enter() {
        long id = Thread.currentThread().threadId();
        int i = (int) ((id ^ (id >>> 5)) & (STRIPES - 1)) * PAD;
        while (true) {
            counts.getAndIncrement(i);
            if (!exclusive) {
                return i;
            }
            counts.getAndDecrement(i);
            int spins = 0;
            while (exclusive) {
                if (++spins < 64) {
                    Thread.onSpinWait();
                } else {
                    LockSupport.parkNanos(10_000);
                }
            }
        }
    }

    void exit(int token) {
        counts.getAndDecrement(token);
    }

    /** Runs {@code body} with every writer held out; returns what it returns. */
    synchronized boolean exclusively(BooleanSupplier body) {
        exclusive = true;
        try {
            int spins = 0;
            while (writers() != 0) {
                if (++spins < 64) {
                    Thread.onSpinWait();
                } else {
                    LockSupport.parkNanos(10_000);
                }
            }
            return body.getAsBoolean();
        } finally {
            exclusive = false;
        }
    }

    private long writers() {
        long n = 0;
        for (int s = 0; s < STRIPES; s++) {
            n += counts.get(s * PAD);
        }
        return n;
    }
}
