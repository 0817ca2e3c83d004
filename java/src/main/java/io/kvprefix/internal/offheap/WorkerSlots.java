package io.kvprefix.internal.offheap;

import io.kvprefix.Worker;
import java.util.BitSet;

/**
 * Dense worker slots: the bit each worker has in every entry's reach bits. A slot is taken by a
 * worker's first store and given back after {@code remove_worker}, but only once every reader that
 * might still read the old worker's bits has left (the caller waits on the {@link ReadGate}).
 *
 * <p>Thread-safety: claims and releases are synchronised; {@link #worker} may be read from any
 * thread without a lock (a slot's worker is written before its first bit is set and kept until the
 * slot is reused).
 */
final class WorkerSlots {
    /** {@link #claim}: every slot is taken. */
    static final int FULL = -1;
    /** {@link #claim}: the lowest free slot needs a wider bitset than the table has. */
    static final int NEEDS_WIDER = -2;

    private final Worker[] workers;
    private final BitSet used = new BitSet();

    WorkerSlots(int maxWorkers) {
        this.workers = new Worker[maxWorkers];
    }

    /** A free slot for {@code worker} (recorded as taken), {@link #FULL}, or {@link #NEEDS_WIDER} than {@code words}. */
    synchronized int claim(Worker worker, int words) {
        int slot = used.nextClearBit(0);
        if (slot >= workers.length) {
            return FULL;
        }
        if ((slot >>> 6) >= words) {
            return NEEDS_WIDER;
        }
        used.set(slot);
        workers[slot] = worker;
        return slot;
    }

    /** Bitset words the next claim needs. */
    synchronized int wordsForNextClaim() {
        return (used.nextClearBit(0) >>> 6) + 1;
    }

    /** Gives back a slot no bit was ever set for (so no reader can have seen it). */
    synchronized void releaseUnused(int slot) {
        used.clear(slot);
    }

    /** Gives back the slots of removed workers and frees their names; every reader that saw them has left. */
    synchronized void release(Iterable<WorkerHoldings> removed) {
        for (WorkerHoldings h : removed) {
            used.clear(h.slot);
            h.names.free();
        }
    }

    /** The worker of {@code slot}, or null if it never had one. */
    Worker worker(int slot) {
        return workers[slot];
    }
}
