package io.kvprefix.internal.offheap;

import io.kvprefix.IndexConfig;
import java.util.Collection;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The table's generations and their lifetime: the current {@link PositionalTable}, the writers'
 * lock (shared for applying events, exclusive for a rebuild or close), rebuilds that grow, widen or
 * shrink the table by copying its live entries, and the {@link ReadGate} that lets a generation be
 * freed only after every reader that could be on it has left.
 *
 * <p>Live entries are the blocks some worker holds and their ancestors. A held block has its bit set
 * unless it is in its worker's unreachable set, and bits are prefix-closed, so one sequential pass
 * over the bits finds all but the unreachable blocks and their ancestors, which a walk up from each
 * adds; entries nobody holds are dropped. Slot numbers in every worker's holdings are then
 * renumbered, the new generation is published, and the old one freed after the readers have left.
 *
 * <p>Thread-safety: {@link #current} and the reader gate from any thread; writers hold the shared
 * lock while they apply; {@link #grow}, {@link #maybeShrink} and {@link #close} take it exclusively.
 */
final class Generations {
    private final MemoryPool pool;
    private final boolean nativeView;
    private final ReadGate gate = new ReadGate();
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private final AtomicLong rebuilds = new AtomicLong();
    private volatile PositionalTable table;
    private volatile boolean closed;
    /** Held pairs when a shrink last found nothing to gain (live entries, kept ancestors included, still filled the table). */
    private volatile long futileShrinkPairs = Long.MAX_VALUE;

    Generations(IndexConfig config, MemoryPool pool, boolean nativeView) {
        this.pool = pool;
        this.nativeView = nativeView;
        PositionalTable t =
                PositionalTable.allocate(pool, PositionalTable.initialCapacity(config.expectedBlocks()), 1, nativeView);
        if (t == null && config.expectedBlocks() > 0) { // the hint did not fit the budget
            t = PositionalTable.allocate(pool, PositionalTable.MIN_CAPACITY, 1, nativeView);
        }
        if (t == null) {
            throw new IllegalArgumentException("memory budget " + config.memoryBudgetBytes()
                    + " bytes is too small for an empty table of "
                    + PositionalTable.bytesFor(PositionalTable.MIN_CAPACITY, 1) + " bytes");
        }
        this.table = t;
    }

    static IllegalStateException closedException() {
        return new IllegalStateException("index closed");
    }

    /** The current generation. */
    PositionalTable current() {
        return table;
    }

    boolean closed() {
        return closed;
    }

    long rebuilds() {
        return rebuilds.get();
    }

    /** Takes the writers' lock in shared mode (one event's application). */
    void lockShared() {
        lock.readLock().lock();
    }

    void unlockShared() {
        lock.readLock().unlock();
    }

    /** Registers a reader; pass the token to {@link #exitRead}. */
    int enterRead() {
        return gate.enter();
    }

    void exitRead(int token) {
        gate.exit(token);
    }

    /** Waits until every reader that entered before this call has left. */
    void synchronizeReaders() {
        gate.synchronize();
    }

    /**
     * Rebuilds with room for {@code needSlots} more entries and at least {@code needWords} bitset
     * words, dropping entries nobody holds; false if the budget does not allow it.
     */
    boolean grow(int needSlots, int needWords, Collection<WorkerHoldings> workers) {
        PositionalTable old;
        var exclusive = lock.writeLock();
        exclusive.lock();
        try {
            if (closed) {
                throw closedException();
            }
            old = table;
            if (old.occupied.get() + needSlots <= old.maxOccupied && needWords <= old.words) {
                return true; // another writer rebuilt meanwhile
            }
            PositionalTable fresh =
                    copyLive(old, needSlots, Math.max(old.words, needWords), Integer.MAX_VALUE, workers);
            if (fresh == null) {
                return false;
            }
            table = fresh;
            rebuilds.incrementAndGet();
        } finally {
            exclusive.unlock();
        }
        gate.synchronize();
        old.free();
        return true;
    }

    /** Shrinks the table after large removals, when {@code pairs} held pairs fill under 4% of it. */
    void maybeShrink(long pairs, Collection<WorkerHoldings> workers) {
        PositionalTable t = table;
        if (t.capacity <= PositionalTable.MIN_CAPACITY
                || pairs * 100 >= (long) t.capacity * 4
                || pairs >= futileShrinkPairs / 2) {
            return;
        }
        var exclusive = lock.writeLock();
        exclusive.lock();
        try {
            if (closed || table != t) {
                return;
            }
            PositionalTable fresh = copyLive(t, 0, t.words, t.capacity, workers);
            if (fresh == null) {
                // Entries nobody names but that are ancestors of held ones (engines evicting prefixes
                // and keeping tails) still need the room: do not try again until pairs halve.
                futileShrinkPairs = pairs;
                return;
            }
            futileShrinkPairs = Long.MAX_VALUE;
            table = fresh;
            rebuilds.incrementAndGet();
        } finally {
            exclusive.unlock();
        }
        gate.synchronize();
        t.free();
    }

    /**
     * Copies the live entries of {@code old} into a new generation (every writer is held out); null if
     * the budget does not allow it or its capacity would not be below {@code capacityBelow}.
     */
    private PositionalTable copyLive(
            PositionalTable old, int extra, int words, int capacityBelow, Collection<WorkerHoldings> workers) {
        int[] map = old.newSlotMap();
        long live = old.markReached(map);
        for (WorkerHoldings h : workers) {
            live += h.markUnreachable(old, map);
        }
        int cap = PositionalTable.capacityFor(live + extra);
        if (cap < 0 || cap >= capacityBelow) {
            return null;
        }
        PositionalTable fresh = PositionalTable.allocate(pool, cap, words, nativeView);
        if (fresh == null) {
            return null;
        }
        fresh.copyFrom(old, map);
        for (WorkerHoldings h : workers) {
            h.remap(map);
        }
        fresh.occupied.set(live);
        return fresh;
    }

    /**
     * Closes: later writers and readers see {@code closed}; waits for the readers in flight, then
     * frees the table and every worker's names. False if it was already closed.
     */
    boolean close(Collection<WorkerHoldings> workers) {
        var exclusive = lock.writeLock();
        exclusive.lock();
        try {
            if (closed) {
                return false;
            }
            closed = true;
        } finally {
            exclusive.unlock();
        }
        gate.synchronize();
        table.free();
        for (WorkerHoldings h : workers) {
            h.names.free();
        }
        return true;
    }
}
