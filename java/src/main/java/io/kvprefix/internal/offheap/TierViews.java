package io.kvprefix.internal.offheap;

import static io.kvprefix.internal.offheap.ChainLayout.entry;
import static io.kvprefix.internal.offheap.ChainLayout.entryCutoff;
import static io.kvprefix.internal.offheap.ChainLayout.entryUnreachable;
import static io.kvprefix.internal.offheap.ChainLayout.runOf;

import io.kvprefix.EventStatus;
import io.kvprefix.Medium;
import io.kvprefix.Worker;
import it.unimi.dsi.fastutil.longs.LongArrayList;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The tier room: lower-tier stores, copies and removals, and the mirroring of GPU events, on each
 * worker's any-tier view (docs/SPEC.md section 3.1): a second holdings with a slot of its own whose
 * tagged {@link NameMap} says on which tiers each name is held. The view starts as a copy of the GPU
 * view and follows every event through the store and removal rooms, so it holds a superset of the
 * GPU view's blocks; a clear, the worker's removal, or memory running out while a GPU event is
 * mirrored drops it (the any-tier depth falls back to the GPU depth, never above what is held). The
 * match kernel is unchanged: a match reports a depth per slot, and the read room pairs the two.
 *
 * <p>Locks: inside both gates (the caller's); the run locks {@link Stores} and {@link Removals}
 * take, and one run lock at a time while it copies a GPU view's entries.
 *
 * <p>Thread-safety: as the index's writes: each call works on one worker, whose events one thread
 * applies at a time.
 */
final class TierViews {
    private static final int GPU = Medium.GPU.bit();

    private final Stores stores;
    private final Removals removals;
    private final RunArena arena;
    private final WorkerSlots slots;
    private final MemoryPool pool;
    /** Live any-tier views ({@link ChainState#tierViews}). */
    private final AtomicInteger count;

    TierViews(ChainState state, Stores stores, Removals removals) {
        this.stores = stores;
        this.removals = removals;
        this.arena = state.arena;
        this.slots = state.slots;
        this.pool = state.pool;
        this.count = state.tierViews;
    }

    // ------------------------------------------------------------------ GPU events, mirrored

    /** A GPU store {@code g} took, stored on its view too; null to retry the event after the child table grew. */
    EventStatus mirrorStore(
            WorkerHoldings g, boolean hasParent, long parentHash, long[] names, long[] locals, int n, WriteScratch ws) {
        WorkerHoldings a = g.anyTier;
        int[] oldBlock = new int[n];
        int[] oldTag = new int[n];
        for (int i = 0; i < n; i++) {
            oldBlock[i] = a.names.get(names[i]);
            oldTag[i] = a.names.tag(names[i]);
        }
        int parent = hasParent ? a.names.get(parentHash) : -1;
        if (hasParent && parent < 0) { // cannot happen while the view holds what the GPU view holds
            drop(g, ws);
            return EventStatus.OK;
        }
        long saved = ws.heldDelta;
        EventStatus s = stores.storeAfter(a, a.worker, parent, names, locals, n, ws);
        ws.heldDelta = saved; // pairs count the GPU views only
        if (s == null) {
            return null;
        }
        if (s != EventStatus.OK) {
            drop(g, ws);
            return EventStatus.OK;
        }
        for (int i = 0; i < n; i++) {
            int now = a.names.get(names[i]);
            a.names.setTag(names[i], (now == oldBlock[i] ? oldTag[i] : 0) | GPU);
        }
        return EventStatus.OK;
    }

    /** After {@code g} removed {@code names} from the GPU: each name its view holds on the GPU loses it. */
    void mirrorRemove(WorkerHoldings g, long[] names, WriteScratch ws) {
        if (g.anyTier != null) {
            takeTier(g.anyTier, GPU, names, ws);
        }
    }

    // ------------------------------------------------------------------ lower tiers

    /**
     * A store on lower tier {@code m} (rules of section 3.1); {@code g} is the worker's GPU view or
     * null for a new worker. Null to retry after the child table grew.
     */
    EventStatus storeLower(
            WorkerHoldings g,
            Worker worker,
            Medium m,
            boolean hasParent,
            long parentHash,
            long[] names,
            long[] locals,
            int n,
            WriteScratch ws) {
        NameMap lookup = g == null ? null : g.anyTier != null ? g.anyTier.names : g.names;
        int parent = -1;
        if (hasParent) {
            parent = lookup == null ? -1 : lookup.get(parentHash);
            if (parent < 0) {
                return EventStatus.PARENT_BLOCK_NOT_FOUND;
            }
        }
        int need = (g == null ? 1 : 0) + (n > 0 && (g == null || g.anyTier == null) ? 1 : 0);
        if (need > 0 && slots.free() < need) {
            return EventStatus.CAPACITY_EXCEEDED;
        }
        if (g == null && (g = stores.newWorker(worker, null, 0)) == null) {
            return EventStatus.CAPACITY_EXCEEDED;
        }
        if (n == 0) {
            return EventStatus.OK;
        }
        WorkerHoldings a = ensure(g, ws);
        if (a == null) {
            return EventStatus.CAPACITY_EXCEEDED;
        }
        return placeLower(a, m.bit(), parent, names, locals, n, ws);
    }

    /** Names the view holds gain the tier; runs of unknown names are stored after the previous block. */
    private EventStatus placeLower(
            WorkerHoldings a, int tier, int parent, long[] names, long[] locals, int n, WriteScratch ws) {
        LongArrayList added = new LongArrayList();
        LongArrayList retagged = new LongArrayList(); // (name, old tag) pairs
        long saved = ws.heldDelta;
        int prev = parent;
        for (int i = 0; i < n; ) {
            int b = a.names.get(names[i]);
            if (b >= 0) {
                int t = a.names.tag(names[i]);
                retagged.add(names[i]);
                retagged.add(t);
                a.names.setTag(names[i], t | tier);
                prev = b;
                i++;
                continue;
            }
            int j = i;
            while (j < n && a.names.get(names[j]) < 0) {
                j++;
            }
            EventStatus s = stores.storeAfter(
                    a, a.worker, prev, Arrays.copyOfRange(names, i, j), Arrays.copyOfRange(locals, i, j), j - i, ws);
            if (s != EventStatus.OK) {
                undo(a, added, retagged, ws);
                ws.heldDelta = saved;
                return s;
            }
            for (int k = i; k < j; k++) {
                a.names.setTag(names[k], tier);
                added.add(names[k]);
            }
            prev = a.names.get(names[j - 1]);
            i = j;
        }
        ws.heldDelta = saved;
        return EventStatus.OK;
    }

    private void undo(WorkerHoldings a, LongArrayList added, LongArrayList retagged, WriteScratch ws) {
        if (!added.isEmpty()) {
            removals.remove(a, added.toLongArray(), ws);
        }
        for (int k = retagged.size() - 2; k >= 0; k -= 2) {
            a.names.setTag(retagged.getLong(k), (int) retagged.getLong(k + 1));
        }
    }

    /** {@code Copied}: names the worker holds gain lower tier {@code m}; BLOCK_NOT_FOUND if one is unknown. */
    EventStatus copy(WorkerHoldings g, Medium m, long[] names, WriteScratch ws) {
        NameMap lookup = g == null ? null : g.anyTier != null ? g.anyTier.names : g.names;
        int known = 0;
        for (long e : names) {
            known += lookup != null && lookup.get(e) >= 0 ? 1 : 0;
        }
        if (known == 0) {
            return names.length == 0 ? EventStatus.OK : EventStatus.BLOCK_NOT_FOUND;
        }
        WorkerHoldings a = ensure(g, ws);
        if (a == null) {
            return EventStatus.CAPACITY_EXCEEDED;
        }
        for (long e : names) {
            if (a.names.get(e) >= 0) {
                a.names.setTag(e, a.names.tag(e) | m.bit());
            }
        }
        return known == names.length ? EventStatus.OK : EventStatus.BLOCK_NOT_FOUND;
    }

    /** A removal from lower tier {@code m}; BLOCK_NOT_FOUND if a name was not held there. */
    EventStatus removeLower(WorkerHoldings g, Medium m, long[] names, WriteScratch ws) {
        if (g == null || g.anyTier == null) {
            return names.length == 0 ? EventStatus.OK : EventStatus.BLOCK_NOT_FOUND;
        }
        return takeTier(g.anyTier, m.bit(), names, ws) ? EventStatus.BLOCK_NOT_FOUND : EventStatus.OK;
    }

    /** Takes {@code tier} off each name that has it; names left on no tier leave the view. True if one lacked it. */
    private boolean takeTier(WorkerHoldings a, int tier, long[] names, WriteScratch ws) {
        boolean unknown = false;
        LongArrayList gone = new LongArrayList();
        for (long e : names) {
            int t = a.names.tag(e);
            if ((t & tier) == 0) {
                unknown = true;
                continue;
            }
            a.names.setTag(e, t & ~tier); // 0 until removed below: a repeated name is unknown the second time
            if ((t & ~tier) == 0) {
                gone.add(e);
            }
        }
        if (!gone.isEmpty()) {
            long saved = ws.heldDelta;
            removals.remove(a, gone.toLongArray(), ws);
            ws.heldDelta = saved;
        }
        return unknown;
    }

    // ------------------------------------------------------------------ the view itself

    /** Drops {@code g}'s view (cleared, removed, or out of memory): its slot and names go after the readers left. */
    void drop(WorkerHoldings g, WriteScratch ws) {
        WorkerHoldings a = g.anyTier;
        if (a == null) {
            return;
        }
        long saved = ws.heldDelta;
        removals.clear(a, ws);
        ws.heldDelta = saved;
        g.anyTier = null;
        count.decrementAndGet();
        ws.pendingRelease.add(a);
    }

    /** {@code g}'s view, made now as a copy of the GPU view if it has none; null if no slot or memory is left. */
    WorkerHoldings ensure(WorkerHoldings g, WriteScratch ws) {
        if (g.anyTier != null) {
            return g.anyTier;
        }
        int slot = slots.claim(g.worker, g.slot);
        if (slot == WorkerSlots.FULL) {
            return null;
        }
        NameMap names = NameMap.create(pool, g.names.size() + 16, true);
        if (names == null) {
            slots.releaseUnused(slot);
            return null;
        }
        WorkerHoldings a = new WorkerHoldings(g.worker, slot, names);
        g.names.forEach((name, block) -> {
            names.put(name, block);
            names.setTag(name, GPU);
        });
        if (!copyEntries(g, a)) {
            long saved = ws.heldDelta;
            removals.clear(a, ws);
            ws.heldDelta = saved;
            ws.pendingRelease.add(a);
            return null;
        }
        a.copySideSetsFrom(g);
        count.incrementAndGet();
        g.anyTier = a;
        return a;
    }

    /** Gives {@code a} an entry like {@code g}'s in every run {@code g} holds something in, parents first. */
    private boolean copyEntries(WorkerHoldings g, WorkerHoldings a) {
        int[] blocks = new int[g.names.size()];
        int k = g.names.blocks(blocks);
        long[] keys = new long[k];
        for (int i = 0; i < k; i++) {
            int run = runOf(blocks[i]);
            keys[i] = (long) Runs.start(arena.address(run)) << 32 | run;
        }
        Arrays.sort(keys);
        long prev = -1;
        for (long key : keys) {
            if (key == prev) {
                continue;
            }
            prev = key;
            int run = (int) key;
            long r = RunLock.lockCurrent(arena, run); // alive: g holds a block of it
            try {
                long ea = Runs.findEntry(r, g.slot);
                long e = ea == 0 ? 0 : Mem.getLong(ea);
                if ((entryCutoff(e) > 0 || entryUnreachable(e) > 0)
                        && Runs.addEntry(r, entry(a.slot, entryCutoff(e), entryUnreachable(e), 0), arena) == 0) {
                    return false;
                }
            } finally {
                RunLock.unlock(r);
            }
        }
        return true;
    }
}
