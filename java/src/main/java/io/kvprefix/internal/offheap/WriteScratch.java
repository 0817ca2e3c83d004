package io.kvprefix.internal.offheap;

import io.kvprefix.internal.event.DecodedEvent;
import io.kvprefix.internal.event.IndexWriter;
import it.unimi.dsi.fastutil.ints.Int2IntOpenHashMap;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import java.util.ArrayList;
import java.util.List;

/**
 * One writing thread's buffers: grown as needed, never shrunk below their first size, so the write
 * path allocates nothing in steady state.
 *
 * <p>Locks: none.
 *
 * <p>Thread-safety: not thread-safe; one instance per writing thread.
 */
final class WriteScratch {
    final DecodedEvent decoded = new DecodedEvent();
    final IntArrayList stack = new IntArrayList();
    final IntArrayList order = new IntArrayList();
    /** Blocks the current store gained (~block for one more name of a block held already), for an undo. */
    final IntArrayList gained = new IntArrayList();
    /** Runs the current store pinned. */
    final IntArrayList pinned = new IntArrayList();
    /** Runs the current store created whose creation pin is still held. */
    final IntArrayList created = new IntArrayList();
    /** Runs to make reachable once the current run is unlocked. */
    final IntArrayList revisit = new IntArrayList();
    /** Net change of each block's name count during a store. */
    final Int2IntOpenHashMap delta = new Int2IntOpenHashMap(64);
    /** Blocks a store gave their first name, with their name count. */
    final Int2IntOpenHashMap renamed = new Int2IntOpenHashMap(64);
    /** A group of blocks of one run being dropped: cutoff, unreachable count. */
    final int[] tx = new int[2];

    private int[] slots = new int[64];
    private int[] olds = new int[64];
    private long[] records = new long[64];
    private long[] keys = new long[64];
    /** Workers removed by remove_worker whose slots wait for the readers to leave. */
    final List<WorkerHoldings> pendingRelease = new ArrayList<>();
    /** Child records the current store added. */
    int childRecords;
    /** Change of the held (worker, block) pairs during the current event, published once at its end. */
    long heldDelta;
    /** Keeps prefetching loads alive (their values are never used). */
    long sink;
    /** Child records a store asked the table to make room for (0 if it did not). */
    int needChildRecords;
    /** Records this thread has reserved in {@link #creditTable} and not used yet ({@link ChildTable#reserve}). */
    int childCredit;
    /** The generation {@link #childCredit} was reserved in; a credit in an older one is void. */
    ChildTable creditTable;

    /**
     * The facade's writer bound to this scratch (made by the facade on the thread's first event): an
     * event's stores and removals run on this scratch without a second thread-local lookup.
     */
    IndexWriter writer;

    int[] slots(int n) {
        if (slots.length < n) {
            slots = new int[Math.max(n, slots.length * 2)];
        }
        return slots;
    }

    int[] olds(int n) {
        if (olds.length < n) {
            olds = new int[Math.max(n, olds.length * 2)];
        }
        return olds;
    }

    /** Name-map records a store claimed (their addresses). */
    long[] records(int n) {
        if (records.length < n) {
            records = new long[Math.max(n, records.length * 2)];
        }
        return records;
    }

    long[] keys(int n) {
        if (keys.length < n) {
            keys = new long[Math.max(n, keys.length * 2)];
        }
        return keys;
    }

    void clearDelta() {
        if (delta.size() > 4096) {
            delta.clear();
            delta.trim(64);
        } else {
            delta.clear();
        }
    }
}
