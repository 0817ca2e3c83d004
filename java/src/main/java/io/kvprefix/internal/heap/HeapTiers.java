package io.kvprefix.internal.heap;

import io.kvprefix.EventStatus;
import io.kvprefix.Medium;
import io.kvprefix.Worker;
import it.unimi.dsi.fastutil.longs.LongArrayList;

/**
 * Storage tiers on the heap index (docs/SPEC.md section 3.1), the same design as the off-heap
 * index's {@code TierViews}: a worker with lower tiers gets an any-tier view, a second
 * {@link WorkerState} with a slot of its own whose names are every name the worker holds on some
 * tier, each with its tiers; the matcher pairs the two slots into the worker's two depths.
 *
 * <p>Thread-safety: called under the index's write lock only.
 */
final class HeapTiers {
    private static final int GPU = Medium.GPU.bit();

    private final HeapPrefixIndex ix;
    /** Live any-tier views. */
    int views;

    HeapTiers(HeapPrefixIndex ix) {
        this.ix = ix;
    }

    /** After a GPU store bound {@code names} to {@code chain} on {@code g}: the same on its view, tiered GPU. */
    void mirrorStore(WorkerState g, long[] names, HeapEntry[] chain, int n) {
        WorkerState a = g.anyTier;
        for (int i = 0; i < n; i++) {
            HeapEntry old = a.names.get(names[i]);
            int t = old == chain[i] ? a.tags.get(names[i]) : 0;
            ix.bindName(a, names[i], chain[i]);
            a.tags.put(names[i], (t | GPU));
        }
    }

    /** A store on lower tier {@code m}; {@code g} is null for a new worker. */
    EventStatus storeLower(
            WorkerState g,
            Worker worker,
            Medium m,
            boolean hasParent,
            long parentHash,
            long[] names,
            long[] locals,
            int n) {
        WorkerState lookup = g == null ? null : g.anyTier != null ? g.anyTier : g;
        HeapEntry prev = null;
        if (hasParent) {
            prev = lookup == null ? null : lookup.names.get(parentHash);
            if (prev == null) {
                return EventStatus.PARENT_BLOCK_NOT_FOUND;
            }
        }
        int need = (g == null ? 1 : 0) + (n > 0 && (g == null || g.anyTier == null) ? 1 : 0);
        if (ix.freeSlots() < need || !ix.budgetAllows(n)) {
            return EventStatus.CAPACITY_EXCEEDED;
        }
        if (g == null) {
            g = ix.newWorker(worker);
        }
        if (n == 0) {
            return EventStatus.OK;
        }
        WorkerState a = ensure(g);
        int tier = m.bit();
        for (int i = 0; i < n; i++) {
            HeapEntry known = a.names.get(names[i]);
            if (known != null) { // a name the worker holds keeps its block and gains the tier
                a.tags.put(names[i], (a.tags.get(names[i]) | tier));
                prev = known;
                continue;
            }
            HeapEntry e = ix.place(prev == null ? 0 : prev.pos + 1, locals[i], prev);
            ix.bindName(a, names[i], e);
            a.tags.put(names[i], tier);
            prev = e;
        }
        return EventStatus.OK;
    }

    /** Names the worker holds gain lower tier {@code m}; BLOCK_NOT_FOUND if one is unknown. */
    EventStatus copy(WorkerState g, Medium m, long[] names) {
        WorkerState lookup = g == null ? null : g.anyTier != null ? g.anyTier : g;
        int known = 0;
        for (long e : names) {
            known += lookup != null && lookup.names.containsKey(e) ? 1 : 0;
        }
        if (known == 0) {
            return names.length == 0 ? EventStatus.OK : EventStatus.BLOCK_NOT_FOUND;
        }
        if (g.anyTier == null && ix.freeSlots() < 1) {
            return EventStatus.CAPACITY_EXCEEDED;
        }
        WorkerState a = ensure(g);
        for (long e : names) {
            if (a.names.containsKey(e)) {
                a.tags.put(e, (a.tags.get(e) | m.bit()));
            }
        }
        return known == names.length ? EventStatus.OK : EventStatus.BLOCK_NOT_FOUND;
    }

    /** A removal from lower tier {@code m}; BLOCK_NOT_FOUND if a name was not held there. */
    EventStatus removeLower(WorkerState g, Medium m, long[] names) {
        if (g == null || g.anyTier == null) {
            return names.length == 0 ? EventStatus.OK : EventStatus.BLOCK_NOT_FOUND;
        }
        return takeTier(g.anyTier, m.bit(), names) ? EventStatus.BLOCK_NOT_FOUND : EventStatus.OK;
    }

    /** Takes {@code tier} off each name of view {@code a} that has it; names on no tier leave it. True if one lacked it. */
    boolean takeTier(WorkerState a, int tier, long[] names) {
        boolean unknown = false;
        LongArrayList gone = new LongArrayList();
        for (long e : names) {
            int t = a.tags.get(e);
            if ((t & tier) == 0) {
                unknown = true;
                continue;
            }
            a.tags.put(e, t & ~tier); // 0 until removed below: a repeated name is unknown the second time
            if ((t & ~tier) == 0) {
                gone.add(e);
            }
        }
        if (!gone.isEmpty()) {
            ix.removeNames(a, gone.toLongArray());
            for (int i = 0; i < gone.size(); i++) {
                a.tags.remove(gone.getLong(i));
            }
        }
        return unknown;
    }

    /** Drops {@code g}'s view (cleared or removed): its holdings and its slot. */
    void drop(WorkerState g) {
        WorkerState a = g.anyTier;
        if (a == null) {
            return;
        }
        ix.clear(a);
        ix.freeSlot(a.slot);
        g.anyTier = null;
        views--;
    }

    /** {@code g}'s view, made now as a copy of the GPU view if it has none (the caller checked a slot is free). */
    private WorkerState ensure(WorkerState g) {
        if (g.anyTier != null) {
            return g.anyTier;
        }
        WorkerState a = new WorkerState(g.worker, ix.claimSlot(g.worker, g.slot), g.names.size(), true);
        a.names.putAll(g.names);
        a.held.putAll(g.held);
        a.unreachable.addAll(g.unreachable);
        for (HeapEntry e : g.held.keySet()) {
            e.holders++;
            if (e.reaches(g.slot)) {
                e.setReach(a.slot);
            }
        }
        for (long name : g.names.keySet()) {
            a.tags.put(name, GPU);
        }
        g.anyTier = a;
        views++;
        return a;
    }
}
