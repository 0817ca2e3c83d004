package io.kvprefix.internal.offheap;

import io.kvprefix.Worker;
import java.util.BitSet;

/**
 * Dense worker slots: the number each worker's holder entries carry. A slot is taken by a
 * worker's first store and given back after {@code remove_worker}, but only once every reader that
 *  might still read the old worker's entries has left (the caller waits on the {@link ReadGate}).
 *
 * <p>Thread-safety: claims and releases are synchronised; {@link #worker} may be read from any
 * thread without a lock (a slot's worker is written before its first entry and kept until the slot
 * is reused).
 */
final class WorkerSlots {
    /** {@link #claim}: every slot is taken. */
    static final int FULL = -1;

    private final Worker[] workers;
    private final BitSet used = new BitSet();

    WorkerSlots(int maxWorkers) {
        this.workers = new Worker[maxWorkers];
    }

    /** A free slot for {@code worker} (recorded as taken), or {@link #FULL}. */
    synchronized int claim(Worker worker) {
        int slot = used.nextClearBit(0);
        if (slot >= workers.length) {
            return FULL;
        }
        used.set(slot);
        workers[slot] = worker;
        return slot;
    }

    /** A restore: {@code slot} is {@code worker}'s, as it was in the snapshot. */
    synchronized void restore(int slot, Worker worker) {
        used.set(slot);
        workers[slot] = worker;
    }

    /** Gives back a slot no entry was ever written for (so no reader can have seen it). */
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
