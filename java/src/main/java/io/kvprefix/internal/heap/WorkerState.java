package io.kvprefix.internal.heap;

import io.kvprefix.Worker;
import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;
import it.unimi.dsi.fastutil.objects.Object2IntOpenHashMap;
import it.unimi.dsi.fastutil.objects.ObjectOpenHashSet;

/**
 * The heap index's state of one view: a worker's GPU view, or its any-tier view (docs/SPEC.md section
 * 3.1, {@link HeapTiers}): its names, the entries it holds (with how many names each) and the held
 * entries it cannot reach.
 *
 * <p>Thread-safety: not thread-safe; the index's write lock guards it.
 */
final class WorkerState {
    final Worker worker;
    final int slot;
    /** True for an any-tier view: its holdings count as holders of entries but not as pairs. */
    final boolean view;
    /** A GPU view's any-tier view, or null. */
    WorkerState anyTier;
    /** A view's tiers per name (bits of {@code Medium.bit()}); null for a GPU view. */
    final it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap tags;

    final Long2ObjectOpenHashMap<HeapEntry> names;
    final Object2IntOpenHashMap<HeapEntry> held;
    // presized: fastutil shrinks on removal down to the initial size, so a small set would
    // shrink and regrow (allocating) on every hole cycle
    final ObjectOpenHashSet<HeapEntry> unreachable = new ObjectOpenHashSet<>(256);

    WorkerState(Worker worker, int slot, int expectedNames, boolean view) {
        this.names = new Long2ObjectOpenHashMap<>(expectedNames);
        this.held = new Object2IntOpenHashMap<>(expectedNames);
        this.worker = worker;
        this.slot = slot;
        this.view = view;
        this.tags = view ? new it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap() : null;
        held.defaultReturnValue(0);
    }
}
