package io.kvprefix.internal.offheap;

import io.kvprefix.Worker;
import it.unimi.dsi.fastutil.ints.Int2IntOpenHashMap;
import it.unimi.dsi.fastutil.ints.IntOpenHashSet;

/**
 * What one worker holds: its names (engine hash to block id, off-heap in a {@link NameMap}), the
 * blocks it holds under more than one name, and the blocks it holds without holding an ancestor.
 * Its reach in each run is the cutoff of its holder entry there ({@link ChainLayout}).
 *
 * <p><b>The invariant.</b> A worker's cutoff in a run covers a block if and only if the worker
 * holds that block <em>and every ancestor of it</em>: reach is prefix-closed at every moment. A
 * held block its cutoff does not cover is in {@link #unreachable} and counted in its entry. The
 * writers ({@link Stores}, {@link Removals}) keep the invariant after every single entry change: cutoffs grow
 * parents first and shrink deepest first, which is what lets a concurrent match trust a cutoff
 * without checking the ancestors (docs/SPEC.md section 4).
 *
 * <p>Locks: none; only its worker's writer changes it (a snapshot and explain read it with every
 * writer held out).
 *
 * <p>Thread-safety: not thread-safe. Only the thread applying this worker's events touches it.
 */
final class WorkerHoldings {
    /**
     * Initial (and smallest) size of the side sets: fastutil shrinks a set on removal down to its
     * initial size, so a small one would shrink and regrow (allocating) on every hole cycle.
     */
    private static final int SIDE_SET_SIZE = 256;

    final Worker worker;
    /** The worker's slot: its entry in every run it holds something of carries {@code slot + 1}. */
    final int slot;

    NameMap names;
    /** Blocks held under more than one name: block id to (names - 1). */
    private Int2IntOpenHashMap extraNames;
    /** Held blocks whose ancestors are not all held (their entry's cutoff does not cover them). */
    private IntOpenHashSet unreachable;
    /** Distinct blocks held. */
    long distinct;
    /**
     * For a GPU view: the worker's any-tier view (docs/SPEC.md section 3.1), or null while it has no
     * lower-tier holdings; its name map is tagged with the tiers of each name. Null for a view itself.
     */
    WorkerHoldings anyTier;

    WorkerHoldings(Worker worker, int slot, NameMap names) {
        this.worker = worker;
        this.slot = slot;
        this.names = names;
    }

    /**
     * A new worker's GPU view: a slot from {@code slots} and a name map sized for {@code expected}
     * names (the worker's share, if the budget allows) with room for {@code names0[0..n)} (none for a
     * lower tier's first store); null, and nothing taken, if there is no slot or memory for either.
     */
    static WorkerHoldings open(Worker worker, WorkerSlots slots, MemoryPool pool, long expected, long[] names0, int n) {
        int slot = slots.claim(worker);
        if (slot == WorkerSlots.FULL) {
            return null;
        }
        NameMap names = NameMap.create(pool, (int) Math.min(1 << 26, expected));
        if (names == null) {
            names = NameMap.create(pool, 0); // the share does not fit the budget: start small
        }
        if (names != null && !names.ensureRoomFor(names0, n)) {
            names.free();
            names = null;
        }
        if (names == null) {
            slots.releaseUnused(slot);
            return null;
        }
        return new WorkerHoldings(worker, slot, names);
    }

    boolean hasUnreachable() {
        return unreachable != null && !unreachable.isEmpty();
    }

    boolean isUnreachable(int block) {
        return unreachable != null && unreachable.contains(block);
    }

    void addUnreachable(int block) {
        if (unreachable == null) {
            unreachable = new IntOpenHashSet(SIDE_SET_SIZE);
        }
        unreachable.add(block);
    }

    boolean removeUnreachable(int block) {
        return unreachable != null && unreachable.remove(block);
    }

    /** Extra names of {@code block}: how many names beyond the first mean it. */
    int extraNames(int block) {
        return extraNames == null ? 0 : extraNames.get(block);
    }

    void setExtraNames(int block, int extra) {
        if (extra > 0) {
            if (extraNames == null) {
                extraNames = new Int2IntOpenHashMap(SIDE_SET_SIZE);
            }
            extraNames.put(block, extra);
        } else if (extraNames != null) {
            extraNames.remove(block);
        }
    }

    /** Blocks held under more than one name, with their extra names (null or empty if none); for a snapshot. */
    Int2IntOpenHashMap extraNamesMap() {
        return extraNames;
    }

    /** Held blocks whose ancestors are not all held (null or empty if none); for a snapshot. */
    IntOpenHashSet unreachableSet() {
        return unreachable;
    }

    /** Takes copies of {@code g}'s side sets and count (a new any-tier view that starts as the GPU view). */
    void copySideSetsFrom(WorkerHoldings g) {
        extraNames = g.extraNames == null ? null : new Int2IntOpenHashMap(g.extraNames);
        unreachable = g.unreachable == null ? null : new IntOpenHashSet(g.unreachable);
        distinct = g.distinct;
    }

    /** Forgets both side sets (the worker was cleared). */
    void clearSideSets() {
        extraNames = null;
        unreachable = null;
    }

    /** A rough count of the heap bytes of the side sets. */
    long heapBytes() {
        return 64
                + (extraNames == null ? 0 : 16L * extraNames.size())
                + (unreachable == null ? 0 : 8L * unreachable.size());
    }
}
