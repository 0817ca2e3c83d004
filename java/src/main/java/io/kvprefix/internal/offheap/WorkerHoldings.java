package io.kvprefix.internal.offheap;

import io.kvprefix.Worker;
import it.unimi.dsi.fastutil.ints.Int2IntOpenHashMap;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.ints.IntOpenHashSet;

/**
 * What one worker holds: its names (engine hash to table slot, off-heap in a {@link NameMap}), the
 * blocks it holds under more than one name, and the blocks it holds that are unreachable.
 *
 * <p><b>The invariant.</b> The worker's reach bit on a table entry is set if and only if the worker
 * holds that block <em>and every ancestor of it</em>. So its bits are prefix-closed at every moment:
 * a set bit's parent has the bit too. A held block whose bit is clear is in {@link #unreachable}.
 * Every method here keeps the invariant after each single bit change, in this order: bits are set
 * parents first ({@link #makeReachable}) and cleared deepest first ({@link #lose}, {@link #clearAll}),
 * which is what lets a concurrent match use set inclusion at jump targets (docs/SPEC.md section 4).
 *
 * <p>Thread-safety: not thread-safe. Only the thread applying this worker's events touches it (and
 * the rebuild, while it holds every writer out).
 */
final class WorkerHoldings {
    /**
     * Initial (and smallest) size of the side sets: fastutil shrinks a set on removal down to its
     * initial size, so a small one would shrink and regrow (allocating) on every hole cycle.
     */
    private static final int SIDE_SET_SIZE = 256;

    final Worker worker;
    /** The worker's bit in every entry's reach bits. */
    final int slot;

    NameMap names;
    /** Entries held under more than one name: slot to (names - 1). */
    private Int2IntOpenHashMap extraNames;
    /** Held entries whose ancestors are not all held (their bit is clear). */
    private IntOpenHashSet unreachable;
    /** Distinct blocks held. */
    long distinct;

    private final BitWatch watch;

    WorkerHoldings(Worker worker, int slot, NameMap names, BitWatch watch) {
        this.worker = worker;
        this.slot = slot;
        this.names = names;
        this.watch = watch;
    }

    private boolean hasUnreachable() {
        return unreachable != null && !unreachable.isEmpty();
    }

    /** True if the worker holds {@code entry}, reachable or not. */
    boolean holds(PositionalTable t, int entry) {
        return t.hasBit(entry, slot) || (hasUnreachable() && unreachable.contains(entry));
    }

    /** How many of the worker's names mean {@code entry} (0 if it does not hold it). */
    int nameCount(PositionalTable t, int entry) {
        if (!holds(t, entry)) {
            return 0;
        }
        return 1 + (extraNames == null ? 0 : extraNames.get(entry));
    }

    private void setExtraNames(int entry, int extra) {
        if (extra > 0) {
            if (extraNames == null) {
                extraNames = new Int2IntOpenHashMap(SIDE_SET_SIZE);
            }
            extraNames.put(entry, extra);
        } else if (extraNames != null) {
            extraNames.remove(entry);
        }
    }

    /** The worker now holds {@code entry} (it did not): its bit is set if its parent's is. */
    private void gain(PositionalTable t, int entry, WriteScratch scratch) {
        distinct++;
        scratch.heldDelta++;
        int parent = t.parent(entry);
        if (parent < 0 || t.hasBit(parent, slot)) {
            makeReachable(t, entry, scratch);
        } else {
            if (unreachable == null) {
                unreachable = new IntOpenHashSet(SIDE_SET_SIZE);
            }
            unreachable.add(entry);
        }
    }

    /** Sets the worker's bit on {@code entry}, then on its held-but-unreachable descendants, parents first. */
    private void makeReachable(PositionalTable t, int entry, WriteScratch scratch) {
        t.setBit(entry, slot);
        watch.changed();
        if (!hasUnreachable()) {
            return;
        }
        IntArrayList stack = scratch.stack;
        stack.clear();
        stack.add(entry);
        while (!stack.isEmpty()) {
            int p = stack.popInt();
            for (int c = t.firstChild(p); c >= 0; c = t.nextSibling(c)) {
                if (unreachable.remove(c)) {
                    t.setBit(c, slot);
                    watch.changed();
                    stack.add(c);
                }
            }
        }
    }

    /** One of the worker's names for {@code entry} is gone: the block is dropped if it was the last. */
    void dropName(PositionalTable t, int entry, WriteScratch scratch) {
        int n = nameCount(t, entry);
        if (n > 1) {
            setExtraNames(entry, n - 2);
        } else {
            lose(t, entry, scratch);
        }
    }

    /** The worker no longer holds {@code entry}; its held descendants become unreachable, deepest first. */
    private void lose(PositionalTable t, int entry, WriteScratch scratch) {
        distinct--;
        scratch.heldDelta--;
        setExtraNames(entry, 0);
        if (!t.hasBit(entry, slot)) {
            if (unreachable != null) {
                unreachable.remove(entry);
            }
            return;
        }
        IntArrayList stack = scratch.stack;
        IntArrayList order = scratch.order;
        stack.clear();
        order.clear();
        stack.add(entry);
        while (!stack.isEmpty()) { // pre-order; read back reversed it is deepest first
            int p = stack.popInt();
            order.add(p);
            for (int c = t.firstChild(p); c >= 0; c = t.nextSibling(c)) {
                if (t.hasBit(c, slot)) {
                    stack.add(c);
                }
            }
        }
        if (order.size() > 1 && unreachable == null) {
            unreachable = new IntOpenHashSet(SIDE_SET_SIZE);
        }
        for (int k = order.size() - 1; k >= 1; k--) {
            int d = order.getInt(k);
            t.clearBit(d, slot);
            watch.changed();
            unreachable.add(d);
        }
        t.clearBit(entry, slot);
        watch.changed();
    }

    /**
     * Applies a store's name changes: {@code entries[i]} is what name {@code i} means now,
     * {@code olds[i]} what it meant before (-1 if nothing). The bits move monotonically from the old
     * state to the new one, so every intermediate state gives a depth between the two: first every
     * block that lost its last name is dropped (its descendants' bits cleared deepest first), then
     * every block that gained its first name is added in the event's order (parents first). For a
     * store where some name moved from one block to another; {@link #addNames} is the common case.
     */
    void applyNameChanges(PositionalTable t, int[] entries, int[] olds, int n, WriteScratch scratch) {
        var delta = scratch.delta;
        for (int i = 0; i < n; i++) {
            if (olds[i] != entries[i]) {
                delta.addTo(entries[i], 1);
                if (olds[i] >= 0) {
                    delta.addTo(olds[i], -1);
                }
            }
        }
        var gained = scratch.gained;
        for (int i = 0; i < 2 * n; i++) { // every changed block once (remove() hands over its net change)
            int e = (i & 1) == 0 ? olds[i >> 1] : entries[i >> 1];
            int change = e < 0 ? 0 : delta.remove(e);
            if (change == 0) {
                continue;
            }
            int before = nameCount(t, e);
            int after = before + change;
            if (after == 0) {
                if (before > 0) {
                    lose(t, e, scratch);
                }
            } else if (before > 0) {
                setExtraNames(e, after - 1);
            } else {
                gained.put(e, after);
            }
        }
        scratch.clearDelta();
        for (int i = 0; i < n && !gained.isEmpty(); i++) {
            int count = gained.remove(entries[i]);
            if (count > 0) {
                setExtraNames(entries[i], count - 1);
                gain(t, entries[i], scratch);
            }
        }
        gained.clear();
    }

    /**
     * The common store: no name moved from one block to another, so every block either gains a name
     * or keeps the one it had, and bits are only set, parents first.
     */
    void addNames(PositionalTable t, int[] entries, int[] olds, int n, WriteScratch scratch) {
        for (int i = 0; i < n; i++) {
            int e = entries[i];
            if (olds[i] == e) {
                continue; // the name already meant this block
            }
            int before = nameCount(t, e);
            if (before > 0) {
                setExtraNames(e, before); // one more name for a block it holds
            } else {
                gain(t, e, scratch);
            }
        }
    }

    /**
     * Clears every bit of the worker, deepest position first (a concurrent match never jumps over a
     * cleared ancestor to a still set descendant), and forgets the side sets; returns how many
     * distinct blocks it held. The names are left to the caller.
     */
    long clearAll(PositionalTable t, WriteScratch scratch) {
        int[] entries = scratch.slots(names.size());
        int k = names.slots(entries);
        t.sortDeepestFirst(entries, k, scratch.keys(k));
        for (int i = 0; i < k; i++) {
            t.clearBit(entries[i], slot);
            watch.changed();
        }
        long held = distinct;
        distinct = 0;
        extraNames = null;
        unreachable = null;
        return held;
    }

    /** Marks the unreachable blocks and their ancestors live for a rebuild; returns how many it marked. */
    long markUnreachable(PositionalTable t, int[] map) {
        long count = 0;
        if (unreachable != null) {
            for (int e : unreachable) {
                count += t.markWithAncestors(e, map);
            }
        }
        return count;
    }

    /** Renumbers every slot this worker refers to after a rebuild ({@code map}: old slot to new). */
    void remap(int[] map) {
        names.remapValues(map);
        if (extraNames != null) {
            Int2IntOpenHashMap m = new Int2IntOpenHashMap(Math.max(SIDE_SET_SIZE, extraNames.size()));
            for (var e : extraNames.int2IntEntrySet()) {
                m.put(map[e.getIntKey()], e.getIntValue());
            }
            extraNames = m;
        }
        if (unreachable != null) {
            IntOpenHashSet u = new IntOpenHashSet(Math.max(SIDE_SET_SIZE, unreachable.size()));
            for (int e : unreachable) {
                u.add(map[e]);
            }
            unreachable = u;
        }
    }
}
