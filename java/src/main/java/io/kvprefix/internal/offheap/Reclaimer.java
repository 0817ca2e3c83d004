package io.kvprefix.internal.offheap;

import it.unimi.dsi.fastutil.longs.LongArrayList;
import java.util.ArrayList;
import java.util.List;

/**
 * Memory that readers may still be on, given back once they have left: the writers hand over what
 * they made unreachable (a freed run, an entry chunk, an old table), and {@link #flush} waits on the
 * {@link ReadGate} once for the whole batch, then recycles it.
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

    /** Waits for every reader that could see what is pending, then recycles it. */
    void flush() {
        List<MemoryPool.Block> b;
        LongArrayList r;
        LongArrayList c;
        LongArrayList m;
        synchronized (this) {
            if (blocks.isEmpty() && runs.isEmpty() && chunks.isEmpty() && records.isEmpty()) {
                return;
            }
            m = records;
            records = new LongArrayList();
            b = blocks;
            r = runs;
            c = chunks;
            blocks = new ArrayList<>();
            runs = new LongArrayList();
            chunks = new LongArrayList();
            pending = 0;
        }
        gate.synchronize();
        for (MemoryPool.Block block : b) {
            block.free();
        }
        for (int i = 0; i < r.size(); i += 2) {
            arena.recycleRun((int) r.getLong(i), r.getLong(i + 1));
        }
        for (int i = 0; i < c.size(); i++) {
            arena.recycleChunk(c.getLong(i));
        }
        for (int i = 0; i < m.size(); i++) {
            arena.recycleRecord(m.getLong(i));
        }
    }
}
