package io.kvprefix.internal.heap;

import io.kvprefix.Worker;
import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;
import it.unimi.dsi.fastutil.objects.Object2IntOpenHashMap;
import it.unimi.dsi.fastutil.objects.ObjectOpenHashSet;

/**
 * One worker of the heap index: its names (engine hash to entry), the entries it holds with how
 * many names each, and the held entries that are unreachable (an ancestor is not held).
 *
 * <p>Thread-safety: not thread-safe; guarded by the index's lock.
 */
final class HeapWorker {
    final Worker worker;
    final int slot;
    final Long2ObjectOpenHashMap<HeapEntry> names;
    final Object2IntOpenHashMap<HeapEntry> held;
    // presized: fastutil shrinks on removal down to the initial size, so a small set would
    // shrink and regrow (allocating) on every hole cycle
    final ObjectOpenHashSet<HeapEntry> unreachable = new ObjectOpenHashSet<>(256);

    HeapWorker(Worker worker, int slot, int expectedNames) {
        this.names = new Long2ObjectOpenHashMap<>(expectedNames);
        this.held = new Object2IntOpenHashMap<>(expectedNames);
        this.worker = worker;
        this.slot = slot;
        held.defaultReturnValue(0);
    }
}
