package io.kvprefix.internal.offheap;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * Tracks readers so memory and worker slots are recycled only after every reader that could still
 * see them has left (a two-phase, striped reader count in the style of sleepable RCU).
 *
 * <p>A reader calls {@link #enter()}, reads shared structures, and calls {@link #exit(int)} with
 * the token it got. A writer that has made something unreachable for new readers (published a new
 * table, cleared a worker slot's bits) calls {@link #synchronize()}: it flips the epoch and waits
 * until the readers counted under the old epoch have all left. Readers that enter after the flip
 * count under the new epoch and are not waited for; they can only see the new state.
 *
 * <p>Correctness (Dekker style): a reader increments its counter (a full fence) and then re-reads
 * the epoch; the writer stores the new epoch (a full fence) and then reads the counters. Either the
 * writer sees the reader's increment and waits for it, or the reader sees the new epoch, backs out
 * and re-enters under it before reading anything shared.
 *
 * <p>Counters are striped by thread id and padded to a cache line each, so readers on different
 * threads rarely touch the same line.
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
