package io.kvprefix.internal.offheap;

import io.kvprefix.internal.event.DecodedEvent;
import it.unimi.dsi.fastutil.ints.Int2IntOpenHashMap;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import java.util.ArrayList;
import java.util.List;

/**
 * One writing thread's buffers: grown as needed, never shrunk below their first size, so the write
 * path allocates nothing in steady state.
 *
 * <p>Thread-safety: not thread-safe; one instance per writing thread.
 */
final class WriteScratch {
    final DecodedEvent decoded = new DecodedEvent();
    /** Two-element buffer for one chain step. */
    final long[] pair = new long[2];

    final IntArrayList stack = new IntArrayList();
    final IntArrayList order = new IntArrayList();
    /** Net change of each block's name count during a store. */
    final Int2IntOpenHashMap delta = new Int2IntOpenHashMap(64);
    /** Blocks a store gave their first name, with their name count. */
    final Int2IntOpenHashMap gained = new Int2IntOpenHashMap(64);

    private int[] slots = new int[64];
    /** For each block of a store, the block its name meant before (-1 if none). */
    private int[] olds = new int[64];
    /** Sort keys for {@link PositionalTable#sortDeepestFirst}. */
    private long[] keys = new long[64];
    /** Workers removed by remove_worker whose slots wait for the readers to leave. */
    final List<WorkerHoldings> pendingRelease = new ArrayList<>();
    /** Table slots the current store inserted. */
    int inserted;
    /** Change of the held (worker, block) pairs during the current event, published once at its end. */
    long heldDelta;
    /** Keeps prefetching loads alive (their values are never used). */
    long sink;
    /** Why a store asked for a rebuild: slots needed, and bitset words needed. */
    int needSlots;

    int needWords;

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
