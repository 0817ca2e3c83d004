package io.kvprefix.internal.offheap;

import it.unimi.dsi.fastutil.longs.LongArrayList;
import java.util.ArrayList;
import java.util.List;

/**
 * Memory that readers may still be on, given back once they have left: the writers hand over what
 * they made unreachable (a freed run, an entry chunk, an old table), and {@link #flush} waits on the
 * {@link ReadGate} once for the whole batch, then recycles it.
 *
 * <p>Locks: its monitor for hand-overs (taken under a run lock or the {@link RunArena} monitor);
 * a flush holds its flush lock, not the monitor, while it waits on the {@link ReadGate}, and so is
 * called only from outside the gates.
 *
 * <p>Thread-safety: thread-safe; hand-overs are synchronised, and a flush waits outside the lock.
 */
final class Reclaimer {
    /** Pending items that make a writer flush after its event. */
    static final int FLUSH_AT = 256;

    private final ReadGate gate;
    private RunArena arena;
    private List<MemoryPool.Block> blocks = new ArrayList<>();
    /** Pairs: run id, then its record's address. */
    private LongArrayList runs = new LongArrayList();

    private LongArrayList chunks = new LongArrayList();
    private LongArrayList records = new LongArrayList();
    /**
     * Items handed over since the last flush, readable without the lock: {@link #maybeFlush} runs
     * after every event, and taking the monitor there made the writers' cores pass its cache line
     * back and forth on every event although hand-overs are rare.
     */
    private volatile int pending;

    /** Held by the one flush that may run at a time; guards the spare lists. */
    private final Object flushing = new Object();
    /** Capacity the spare lists keep between flushes. */
    private static final int KEEP = 4 * FLUSH_AT;

    private List<MemoryPool.Block> spareBlocks = new ArrayList<>();
    private LongArrayList spareRuns = new LongArrayList();
    private LongArrayList spareChunks = new LongArrayList();
    private LongArrayList spareRecords = new LongArrayList();

    Reclaimer(ReadGate gate) {
        this.gate = gate;
    }

    void attach(RunArena a) {
        this.arena = a;
    }

    synchronized void freeLater(MemoryPool.Block b) {
        blocks.add(b);
        pending++;
    }

    /** Run {@code run} at {@code address} is unreachable for new readers: recycle it after the current ones leave. */
    synchronized void recycleRunLater(int run, long address) {
        runs.add(run);
        runs.add(address);
        pending++;
    }

    synchronized void recycleChunkLater(long address) {
        chunks.add(address);
        pending++;
    }

    /** A record a run moved out of; recycled after the current readers leave. */
    synchronized void recycleRecordLater(long address) {
        records.add(address);
        pending++;
    }

    int pending() {
        return pending;
    }

    /** Flushes if enough is pending; called by writers after an event, outside every lock. */
    void maybeFlush() {
        if (pending >= FLUSH_AT) {
            flush();
        }
    }

    /**
     * Waits for every reader that could see what is pending, then recycles it. One flush runs at a
     * time, on lists kept from the last one (swapped with the pending ones, emptied afterwards), so a
     * writer's steady state allocates nothing here.
     */
    void flush() {
        synchronized (flushing) {
            synchronized (this) {
                if (blocks.isEmpty() && runs.isEmpty() && chunks.isEmpty() && records.isEmpty()) {
                    return;
                }
                List<MemoryPool.Block> b = blocks;
                blocks = spareBlocks;
                spareBlocks = b;
                LongArrayList r = runs;
                runs = spareRuns;
                spareRuns = r;
                LongArrayList c = chunks;
                chunks = spareChunks;
                spareChunks = c;
                LongArrayList m = records;
                records = spareRecords;
                spareRecords = m;
                pending = 0;
            }
            gate.synchronize();
            recycleSpares();
        }
    }

    /**
     * Recycles what the spare lists hold and empties them (caller holds {@code flushing}); emptied even
     * if a recycle throws, so nothing is ever recycled twice.
     */
    private void recycleSpares() {
        try {
            for (int i = 0; i < spareBlocks.size(); i++) {
                spareBlocks.get(i).free();
            }
            if (!spareRuns.isEmpty() || !spareChunks.isEmpty() || !spareRecords.isEmpty()) {
                arena.recycleAll(spareRuns, spareChunks, spareRecords); // one monitor for the batch, not one per item
            }
        } finally {
            spareBlocks = spareBlocks.size() > KEEP ? new ArrayList<>() : spareBlocks;
            spareBlocks.clear();
            emptied(spareRuns);
            emptied(spareChunks);
            emptied(spareRecords);
        }
    }

    private static void emptied(LongArrayList l) {
        l.clear();
        l.trim(KEEP); // a burst (a cleared worker) does not keep its lists' memory
    }
}
