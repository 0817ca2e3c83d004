package io.kvprefix.internal.offheap;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * Tracks readers so memory and worker slots are recycled only after every reader that could still
 * see them has left: a two-phase, striped reader count in the style of sleepable RCU (the argument
 * for its correctness is in this package's {@code package-info.java}). A reader brackets its reads
 * with {@link #enter()} and {@link #exit(int)}; a writer that has made something unreachable for new
 * readers calls {@link #synchronize()}, which returns once every reader that entered before it has
 * left. Counters are striped by thread id and padded to a cache line each.
 *
 * <p>Locks: this is the reader gate; {@link #synchronize} holds its monitor while it waits, and is
 * never called from inside a gate.
 *
 * <p>Thread-safety: {@link #enter}/{@link #exit} from any number of threads; {@link #synchronize}
 * from any thread (calls are serialised internally).
 */
final class ReadGate {
    private static final int STRIPES = 64; // power of two
    private static final int PAD = 8; // longs per cache line
    private final AtomicLongArray counts = new AtomicLongArray(2 * STRIPES * PAD);
    private volatile long epoch;

    private static int stripe() {
        long id = Thread.currentThread().threadId();
        return (int) ((id ^ (id >>> 7)) & (STRIPES - 1));
    }

    private static int index(int parity, int stripe) {
        return (parity * STRIPES + stripe) * PAD;
    }

    /** Registers a reader; returns the token to pass to {@link #exit}. */
    int enter() {
        int s = stripe();
        while (true) {
            long e = epoch;
            int parity = (int) (e & 1);
            int i = index(parity, s);
            counts.getAndIncrement(i);
            if (epoch == e) {
                return i;
            }
            counts.getAndDecrement(i); // the epoch flipped under us: count under the new one
        }
    }

    /** Unregisters the reader that got {@code token} from {@link #enter}. */
    void exit(int token) {
        counts.getAndDecrement(token);
    }

    /** Waits until every reader that entered before this call has exited. */
    synchronized void synchronize() {
        // Two flips: readers of both parities that predate this call are drained.
        for (int round = 0; round < 2; round++) {
            long e = epoch;
            int parity = (int) (e & 1);
            epoch = e + 1;
            int spins = 0;
            while (sum(parity) != 0) {
                if (++spins < 64) {
                    Thread.onSpinWait();
                } else {
                    LockSupport.parkNanos(10_000);
                }
            }
        }
    }

    private long sum(int parity) {
        long total = 0;
        for (int s = 0; s < STRIPES; s++) {
            total += counts.get(index(parity, s));
        }
        return total;
    }
}
