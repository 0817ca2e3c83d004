package io.kvprefix.internal.offheap;

import static io.kvprefix.internal.offheap.ChainLayout.MAX_RUN;
import static io.kvprefix.internal.offheap.ChainLayout.block;
import static io.kvprefix.internal.offheap.ChainLayout.entry;
import static io.kvprefix.internal.offheap.ChainLayout.entryCutoff;
import static io.kvprefix.internal.offheap.ChainLayout.entryPins;
import static io.kvprefix.internal.offheap.ChainLayout.entryUnreachable;
import static io.kvprefix.internal.offheap.ChainLayout.offsetOf;
import static io.kvprefix.internal.offheap.ChainLayout.runOf;

import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.Worker;
import it.unimi.dsi.fastutil.ints.Int2IntOpenHashMap;
import it.unimi.dsi.fastutil.ints.IntArrayList;

/**
 * The store room: a GPU store on one worker's holdings, end to end (docs/SPEC.md section 3, rules
 * 2, 3 and 5): the parent looked up, room reserved before anything changes, each block placed (the
 * next block of a run, a run hanging from it, a block appended to the worker's run, or a new run),
 * the worker's reach grown parents first. A store that moves a name pins its path, then drops what lost its last name
 * ({@link Removals#loseOne}) and adds what gained its first; one that runs out of memory half-way
 * undoes itself. The design is in this package's {@code package-info.java}.
 *
 * <p>Locks: runs inside both gates (the caller's). One run lock at a time; a branch inside a run
 * takes none, a branch at a run's tail holds that run's lock while it claims, links and publishes
 * the child run ({@link #branch}).
 *
 * <p>Thread-safety: one instance per index, shared by its writers; each call works on one worker,
 * whose events one thread applies at a time.
 */
final class Stores {
    private final ChainState state;
    private final IndexConfig config;
    private final MemoryPool pool;
    private final Generations generations;
    private final RunArena arena;
    private final WorkerSlots slots;
    private final ReachWatch watch;
    private final Removals removals;

    Stores(ChainState state, Removals removals) {
        this.state = state;
        this.config = state.config;
        this.pool = state.pool;
        this.generations = state.generations;
        this.arena = state.arena;
        this.slots = state.slots;
        this.watch = state.watch;
        this.removals = removals;
    }

    /** Child records a store of {@code n} blocks may add (new runs: a first one, then one per full run). */
    static int childRecordsFor(int n) {
        return n / MAX_RUN + 2;
    }

    /** Bytes of run records a store of {@code n} new blocks may need. */
    static long bytesFor(int n) {
        return (long) childRecordsFor(n) * ChainLayout.runBytes(MAX_RUN) + 2 * ChainLayout.chunkBytes(MAX_RUN);
    }

    // ------------------------------------------------------------------ the store

    /**
     * A GPU store of {@code worker}'s ({@code h}: its holdings, null for a new worker) after its block
     * named {@code parentName} (if {@code hasParent}): rule 2, then {@link #storeAfter}.
     */
    EventStatus store(
            WorkerHoldings h,
            Worker worker,
            boolean hasParent,
            long parentName,
            long[] names,
            long[] locals,
            int n,
            WriteScratch ws) {
        int parent = -1;
        if (hasParent) {
            parent = h == null ? -1 : h.names.get(parentName);
            if (parent < 0) {
                return EventStatus.PARENT_BLOCK_NOT_FOUND;
            }
        }
        return storeAfter(h, worker, parent, names, locals, n, ws);
    }

    /**
     * Stores on {@code h} (null: a new worker, which gets a slot) after block {@code parent} (-1: a
     * new chain): room is reserved in the child table, the run arena and the name map before
     * anything changes, so a store applies whole or not at all. Null to retry after the child table
     * grew ({@code ws.needChildRecords}).
     */
    EventStatus storeAfter(
            WorkerHoldings h, Worker worker, int parent, long[] names, long[] locals, int n, WriteScratch ws) {
        ChildTable ct = generations.children();
        int records = childRecordsFor(n);
        if (!ct.reserve(records, ws)) {
            ws.needChildRecords = records;
            return null;
        }
        ws.childRecords = 0;
        try {
            if (!arena.ensureHeadroom(bytesFor(n))) {
                return EventStatus.CAPACITY_EXCEEDED;
            }
            if (h == null) {
                h = newWorker(worker, names, n);
                if (h == null) {
                    return EventStatus.CAPACITY_EXCEEDED;
                }
            } else if (!h.names.ensureRoomFor(names, n)) {
                return EventStatus.CAPACITY_EXCEEDED;
            }
            return placeChain(h, parent, names, locals, n, ws);
        } finally {
            ct.release(records - ws.childRecords, ws);
        }
    }

    /** A new worker's holdings, known to the index, with room for {@code names0[0..n)}; null if no slot or memory is left. */
    WorkerHoldings newWorker(Worker worker, long[] names0, int n) {
        WorkerHoldings h = WorkerHoldings.open(worker, slots, pool, config.expectedBlocksPerWorker(), names0, n);
        if (h != null) {
            state.workers.put(worker, h);
        }
        return h;
    }

    // ------------------------------------------------------------------ placing the blocks

    /**
     * Stores {@code locals[0..n)} under {@code names[0..n)} as the chain continuing {@code parent}
     * (-1: a new chain); the caller checked the parent and made room for the names and the child
     * records. OK, or {@code CAPACITY_EXCEEDED} (nothing changed).
     */
    private EventStatus placeChain(WorkerHoldings h, int parent, long[] names, long[] locals, int n, WriteScratch s) {
        // Start every name's cache miss before looking any up: the loads do not depend on each other.
        long sink = 0;
        for (int i = 0; i < n; i++) {
            sink += h.names.touch(names[i]);
        }
        s.sink += sink;
        // One probe a name: claim its record now (its old meaning is kept for the name changes), fill
        // it once the block is placed.
        long[] records = s.records(n);
        int[] olds = s.olds(n);
        boolean fresh = true;
        for (int i = 0; i < n; i++) {
            olds[i] = h.names.claim(names[i]) - 1;
            records[i] = h.names.claimed();
            fresh &= olds[i] < 0;
        }
        int[] blocks = s.slots(n);
        s.gained.clear();
        s.pinned.clear();
        s.created.clear();
        s.revisit.clear();
        if (!descend(h, parent, locals, n, blocks, s, fresh)) {
            if (fresh) {
                undoGains(h, s);
            }
            unpinAll(h, s);
            for (int i = n - 1; i >= 0; i--) {
                h.names.unclaim(names[i], olds[i]);
            }
            return EventStatus.CAPACITY_EXCEEDED;
        }
        for (int i = 0; i < n; i++) {
            h.names.setAt(records[i], blocks[i]);
        }
        if (!fresh) {
            applyNameChanges(h, blocks, olds, n, s);
            unpinAll(h, s);
        }
        return EventStatus.OK;
    }

    /**
     * Places every block, gaining each as it goes ({@code gain}) or only pinning the runs on the way;
     * false if memory ran out. A run the chain continues in that is dying is looked up again.
     */
    private boolean descend(
            WorkerHoldings h, int parent, long[] locals, int n, int[] blocks, WriteScratch s, boolean gain) {
        for (int i = 0; i < n; ) {
            int m;
            while ((m = advance(h, parent, locals, i, n, blocks, s, gain)) == DYING) {
                Thread.yield(); // the run found is being freed: let its writer take it out of the child table
            }
            if (m < 0) {
                return false;
            }
            if (gain) {
                revisit(h, s);
            }
            i += m;
            parent = blocks[i - 1];
        }
        return true;
    }

    /** {@link #advance}'s answer when the run the chain continues in was dying: look again. */
    private static final int DYING = -2;

    /**
     * Places block {@code i} and as many of the following as go into the same run; returns how many
     * (at least 1), -1 if memory ran out, or {@link #DYING}.
     */
    private int advance(
            WorkerHoldings h, int parent, long[] locals, int i, int n, int[] blocks, WriteScratch s, boolean gain) {
        ChildTable ct = generations.children();
        if (parent < 0) {
            int child = branch(h, ct, 0, parent, locals, i, n, s);
            return child < 0 ? -1 : enter(h, child, locals, i, n, blocks, s, gain);
        }
        int run = runOf(parent);
        int j = offsetOf(parent) + 1;
        long a = arena.address(run); // alive: the worker holds (or pinned) the parent; maybe a record it moved out of
        if ((j < Runs.length(a) || j == MAX_RUN) && Runs.matching(a, j, Runs.length(a), locals, i, n - i) == 0) {
            // a branch inside the run: no store can append here, so no lock (package-info, a branch)
            state.branchesUnlocked.increment();
            int child = branch(h, ct, a, parent, locals, i, n, s);
            return child < 0 ? -1 : enter(h, child, locals, i, n, blocks, s, gain);
        }
        a = RunLock.lockCurrent(arena, run);
        int len = Runs.length(a);
        int m = Runs.matching(a, j, len, locals, i, n - i);
        if (m == 0 && j == len && j < MAX_RUN && noChildAt(ct, run, parent, locals[i], j)) {
            if (j == Runs.capacity(a)) {
                a = arena.growLocked(run, a, ChainLayout.runCapacityFor(Math.min(MAX_RUN, j + n - i)));
            }
            if (a != 0 && j < Runs.capacity(a)) {
                m = Math.min(n - i, Runs.capacity(a) - j);
                Runs.append(a, j, locals, i, m);
            }
            if (a == 0) {
                return -1;
            }
        }
        if (m > 0) {
            boolean ok = place(h, a, run, j, m, 0, blocks, i, s, gain);
            RunLock.unlock(a);
            return ok ? m : -1;
        }
        // a branch at the run's tail: the lock keeps a store from appending the same block meanwhile
        state.branchesLocked.increment();
        int child = branch(h, ct, a, parent, locals, i, n, s);
        RunLock.unlock(a);
        return child < 0 ? -1 : enter(h, child, locals, i, n, blocks, s, gain);
    }

    /**
     * The run continuing block {@code parent} (of the run at {@code a}; -1: a chain's start) with
     * block {@code i}, made now if there is none: the child table's one insertion. The run is made
     * and filled first, then its record claimed by CAS, then linked under its parent, then published
     * (package-info, the protocol of a branch); a writer that loses the claim to another writer's run
     * recycles its own, never reachable. No lock is needed: the caller holds one only when the branch
     * is at the parent run's tail. -1 if memory ran out.
     */
    private int branch(
            WorkerHoldings h, ChildTable ct, long a, int parent, long[] locals, int i, int n, WriteScratch s) {
        int child = ct.find(parent, locals[i]);
        if (child >= 0) {
            return child;
        }
        int j = offsetOf(parent) + 1;
        int fresh = newRun(h, parent, parent < 0 ? 0 : Runs.start(a) + j, locals, i, n, s);
        if (fresh < 0) {
            return -1;
        }
        long record = ct.claim(parent, locals[i]);
        if (record < 0) { // another writer's run has the key
            state.claimsLost.increment();
            s.created.rem(fresh);
            arena.recycleRun(fresh, arena.address(fresh));
            return (int) ~record;
        }
        if (parent >= 0) {
            arena.links().link(runOf(parent), fresh, j - 1);
        }
        ChildTable.publish(record, fresh);
        if (!ChildTable.tookTombstone(record)) {
            s.childRecords++; // a key's tombstone taken again leaves the store's reservation unused
        }
        return fresh;
    }

    /**
     * No run continues the last block {@code parent} (at offset {@code j - 1} of {@code run}) with
     * {@code hash}: the run may grow in place. When every child of the run hangs from a shallower
     * offset, none can hang from this one, and the child table is not probed (under the run's lock).
     */
    private boolean noChildAt(ChildTable ct, int run, int parent, long hash, int j) {
        return arena.links().attachBound(run) < j || ct.find(parent, hash) < 0;
    }

    /** Places blocks from block 0 of the existing run {@code run}; {@link #DYING} if it is being freed. */
    private int enter(
            WorkerHoldings h, int run, long[] locals, int i, int n, int[] blocks, WriteScratch s, boolean gain) {
        long a = RunLock.lockCurrent(arena, run);
        if (a == 0) { // dying: its record leaves the child table soon
            return DYING;
        }
        int m = Runs.matching(a, 0, Runs.length(a), locals, i, n - i); // at least 1: block 0 is the key
        int pins = 0;
        if (s.created.rem(run)) { // ours: its creation pin becomes the store's pin, or is dropped
            if (gain) {
                pins = -1;
            } else {
                s.pinned.add(run);
            }
        }
        boolean ok = place(h, a, run, 0, m, pins, blocks, i, s, gain);
        RunLock.unlock(a);
        return ok ? m : -1;
    }

    private boolean place(
            WorkerHoldings h,
            long a,
            int run,
            int j,
            int m,
            int pins,
            int[] blocks,
            int i,
            WriteScratch s,
            boolean gain) {
        for (int t = 0; t < m; t++) {
            blocks[i + t] = block(run, j + t);
        }
        if (gain) {
            return gainLocked(h, a, run, j, m, pins, s);
        }
        if (!s.pinned.contains(run)) {
            if (!Runs.addPins(a, h.slot, 1, arena)) {
                return false;
            }
            s.pinned.add(run);
        }
        return true;
    }

    /** A new unpublished run continuing {@code parent} at {@code start} with blocks from {@code i}, pinned by the worker; -1 if no memory. */
    private int newRun(WorkerHoldings h, int parent, int start, long[] locals, int i, int n, WriteScratch s) {
        int run = arena.newRun(parent, start, locals, i, Math.min(n - i, MAX_RUN), h.slot);
        if (run >= 0) {
            s.created.add(run);
        }
        return run;
    }

    /** Takes back what a store that ran out of memory gained, deepest first. */
    private void undoGains(WorkerHoldings h, WriteScratch s) {
        var g = s.gained;
        for (int k = g.size() - 1; k >= 0; k--) {
            int b = g.getInt(k);
            if (b < 0) {
                h.setExtraNames(~b, h.extraNames(~b) - 1);
            } else {
                removals.loseOne(h, b, s);
            }
        }
        g.clear();
    }

    private void unpinAll(WorkerHoldings h, WriteScratch s) {
        for (int k = 0; k < s.created.size(); k++) { // created but never entered: pinned at creation
            s.pinned.add(s.created.getInt(k));
        }
        s.created.clear();
        var p = s.pinned;
        for (int k = p.size() - 1; k >= 0; k--) {
            unpin(h, p.getInt(k));
        }
        p.clear();
    }

    /**
     * A store where some name moved: {@code olds[i]} is the block name {@code i} meant before (-1 if
     * none). Blocks that lost their last name are dropped first, then blocks that gained their first
     * are added in the event's order (parents first).
     */
    private void applyNameChanges(WorkerHoldings h, int[] blocks, int[] olds, int n, WriteScratch s) {
        Int2IntOpenHashMap delta = s.delta;
        for (int i = 0; i < n; i++) {
            if (olds[i] != blocks[i]) {
                delta.addTo(blocks[i], 1);
                if (olds[i] >= 0) {
                    delta.addTo(olds[i], -1);
                }
            }
        }
        Int2IntOpenHashMap gained = s.renamed;
        for (int i = 0; i < 2 * n; i++) { // every changed block once
            int b = (i & 1) == 0 ? olds[i >> 1] : blocks[i >> 1];
            int change = b < 0 ? 0 : delta.remove(b);
            if (change == 0) {
                continue;
            }
            int before = holds(h, b) ? 1 + h.extraNames(b) : 0;
            int after = before + change;
            if (after == 0) {
                if (before > 0) {
                    removals.loseOne(h, b, s);
                }
            } else if (before > 0) {
                h.setExtraNames(b, after - 1);
            } else {
                gained.put(b, after);
            }
        }
        s.clearDelta();
        for (int i = 0; i < n && !gained.isEmpty(); i++) {
            int count = gained.remove(blocks[i]);
            if (count > 0) {
                gainBlock(h, blocks[i], s);
                h.setExtraNames(blocks[i], count - 1);
            }
        }
        gained.clear();
    }

    // ------------------------------------------------------------------ reach: one's own (read lock-free), gained

    /** True if {@code h} reaches {@code block}: holds it and every ancestor. */
    private boolean reaches(WorkerHoldings h, int block) {
        long e = Runs.entryOf(arena.address(runOf(block)), h.slot);
        return entryCutoff(e) > offsetOf(block);
    }

    /** True if {@code h} reaches the block the run at {@code run} continues (or the run starts a chain). */
    private boolean reachesParent(WorkerHoldings h, long run) {
        int p = Runs.parent(run);
        return p < 0 || reaches(h, p);
    }

    /** True if {@code h} holds {@code block}, reachable or not. */
    private boolean holds(WorkerHoldings h, int block) {
        return reaches(h, block) || h.isUnreachable(block);
    }

    /**
     * {@code h} gains blocks {@code [j, j+m)} of the run {@code run} at {@code a}, which the caller
     * has locked: a block it holds already gets one more name, a new one is covered by the cutoff if
     * its parent is reached and recorded as unreachable otherwise. {@code pinsDelta} changes the
     * entry's pins in the same write. Held-but-unreachable runs that hang below what became
     * reachable are queued in {@code s.revisit} for {@link #revisit} after the caller unlocks.
     * Returns false only if a new entry could not be had within the budget (nothing changed then).
     */
    private boolean gainLocked(WorkerHoldings h, long a, int run, int j, int m, int pinsDelta, WriteScratch s) {
        long ea = Runs.findEntry(a, h.slot);
        long e = ea == 0 ? 0 : Mem.getLong(ea);
        int cutoff = entryCutoff(e);
        int unreach = entryUnreachable(e);
        int pins = entryPins(e) + pinsDelta;
        int oldCutoff = cutoff;
        int len = Runs.length(a);
        for (int t = 0; t < m; t++) {
            int off = j + t;
            int b = block(run, off);
            if (off < cutoff || (unreach > 0 && h.isUnreachable(b))) {
                h.setExtraNames(b, h.extraNames(b) + 1);
                s.gained.add(~b);
                continue;
            }
            h.distinct++;
            s.heldDelta++;
            s.gained.add(b);
            if (off == 0 ? reachesParent(h, a) : cutoff == off) {
                cutoff = off + 1;
                while (unreach > 0 && cutoff < len && h.removeUnreachable(block(run, cutoff))) {
                    unreach--;
                    cutoff++;
                }
            } else {
                h.addUnreachable(b);
                unreach++;
            }
        }
        long ne = entry(h.slot, cutoff, unreach, pins);
        if (ne != e) {
            if (ea == 0) {
                if (Runs.addEntry(a, ne, arena) == 0) {
                    // no chunk for the entry: take back what this call counted (the worker held
                    // nothing here, so every block went to the gained list, none to extra names)
                    for (int t = 0; t < m; t++) {
                        h.removeUnreachable(block(run, j + t));
                        s.gained.removeInt(s.gained.size() - 1);
                    }
                    h.distinct -= m;
                    s.heldDelta -= m;
                    return false;
                }
            } else {
                Runs.setEntry(a, ea, ne);
            }
            watch.changed();
        }
        if (cutoff > oldCutoff && h.hasUnreachable()) {
            queueUnreachableChildren(h, run, oldCutoff, cutoff, s.revisit);
        }
        return true;
    }

    /** Queues the runs hanging from offsets {@code [from, to)} of the locked run whose first block {@code h} holds unreachably. */
    private void queueUnreachableChildren(WorkerHoldings h, int run, int from, int to, IntArrayList queue) {
        RunLinks links = arena.links();
        if (from >= links.attachBound(run)) {
            return; // no child hangs that deep
        }
        for (int c = links.first(run); c >= 0; c = links.next(c)) {
            int at = offsetOf(Runs.parent(arena.address(c)));
            if (at >= from && at < to && h.isUnreachable(block(c, 0))) {
                queue.add(c);
            }
        }
    }

    /** Makes the queued runs reachable for {@code h}, parents first (after the caller's run was unlocked). */
    private void revisit(WorkerHoldings h, WriteScratch s) {
        IntArrayList q = s.revisit;
        while (!q.isEmpty()) {
            int c = q.popInt();
            long a = RunLock.lockCurrent(arena, c); // alive: h holds its first block
            try {
                long ea = Runs.findEntry(a, h.slot);
                long e = Mem.getLong(ea);
                int unreach = entryUnreachable(e);
                int cutoff = 0;
                int len = Runs.length(a);
                while (unreach > 0 && cutoff < len && h.removeUnreachable(block(c, cutoff))) {
                    unreach--;
                    cutoff++;
                }
                Runs.setEntry(a, ea, entry(h.slot, cutoff, unreach, entryPins(e)));
                watch.changed();
                if (h.hasUnreachable()) {
                    queueUnreachableChildren(h, c, 0, cutoff, q);
                }
            } finally {
                RunLock.unlock(a);
            }
        }
    }

    /** Gains one block (locking its run): the two-phase store's second phase. */
    private boolean gainBlock(WorkerHoldings h, int b, WriteScratch s) {
        long a = RunLock.lockCurrent(arena, runOf(b)); // alive: pinned by the store
        boolean ok;
        try {
            ok = gainLocked(h, a, runOf(b), offsetOf(b), 1, 0, s);
        } finally {
            RunLock.unlock(a);
        }
        revisit(h, s);
        return ok;
    }

    /** Drops the store's pin on {@code run}, freeing the run if that was all that kept it. */
    private void unpin(WorkerHoldings h, int run) {
        long a = RunLock.lockCurrent(arena, run); // alive: pinned
        Runs.addPins(a, h.slot, -1, arena);
        removals.unlockOrFree(run, a);
    }
}
