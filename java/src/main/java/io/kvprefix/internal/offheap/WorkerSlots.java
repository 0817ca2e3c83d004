package io.kvprefix.internal.offheap;

import io.kvprefix.Worker;
import java.util.BitSet;

/**
 * Dense worker slots: the number each worker's holder entries carry. A slot is taken by a
 * worker's first store and given back after {@code remove_worker}, but only once every reader that
 *  might still read the old worker's entries has left (the caller waits on the {@link ReadGate}).
 *
 * <p>Locks: its monitor, for claims, restores and releases (never under a run lock).
 *
 * <p>Thread-safety: claims and releases are synchronised; {@link #worker} may be read from any
 * thread without a lock (a slot's worker is written before its first entry and kept until the slot
 * is reused).
 */
final class WorkerSlots {
    /** {@link #claim}: every slot is taken. */
    static final int FULL = -1;

    private final Worker[] workers;
    /** For the slot of a worker's any-tier view, the slot of its GPU view; -1 for a GPU view. */
    private final int[] gpuSlot;

    private final BitSet used = new BitSet();

    WorkerSlots(int maxWorkers) {
        this.workers = new Worker[maxWorkers];
        this.gpuSlot = new int[maxWorkers];
        java.util.Arrays.fill(gpuSlot, -1);
    }

    /** A free slot for {@code worker}'s GPU view (recorded as taken), or {@link #FULL}. */
    synchronized int claim(Worker worker) {
        return claim(worker, -1);
    }

    /**
     * A free slot (recorded as taken) for {@code worker}'s GPU view ({@code gpu} = -1) or for the
     * any-tier view of the worker whose GPU view has slot {@code gpu}; {@link #FULL} if none is free.
     */
    synchronized int claim(Worker worker, int gpu) {
        int slot = used.nextClearBit(0);
        if (slot >= workers.length) {
            return FULL;
        }
        used.set(slot);
        workers[slot] = worker;
        gpuSlot[slot] = gpu;
        return slot;
    }

    /**
     * A restore: {@code slot} is {@code worker}'s, as it was in the snapshot: its GPU view's
     * ({@code gpu} = -1) or the any-tier view of the worker whose GPU view has slot {@code gpu}.
     */
    synchronized void restore(int slot, Worker worker, int gpu) {
        used.set(slot);
        workers[slot] = worker;
        gpuSlot[slot] = gpu;
    }

    /** Slots not taken. */
    synchronized int free() {
        return workers.length - used.cardinality();
    }

    /** For an any-tier view's slot, its worker's GPU slot; -1 for a GPU view's slot. */
    int gpuSlotOf(int slot) {
        return gpuSlot[slot];
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
