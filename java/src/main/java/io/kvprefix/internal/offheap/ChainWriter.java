package io.kvprefix.internal.offheap;

import static io.kvprefix.internal.offheap.ChainLayout.MAX_RUN;
import static io.kvprefix.internal.offheap.ChainLayout.block;
import static io.kvprefix.internal.offheap.ChainLayout.offsetOf;
import static io.kvprefix.internal.offheap.ChainLayout.runOf;

import io.kvprefix.EventStatus;
import it.unimi.dsi.fastutil.ints.Int2IntOpenHashMap;
import java.util.Arrays;

/**
 * Stores, removals and clears of one worker (docs/SPEC.md section 3, rules 3 and 4) on the chain
 * index: where each stored block goes (the next block of a run, a run hanging from it, a block
 * appended to the worker's run, or a new run) and how the worker's reach follows ({@link Reach}).
 *
 * <p>A store whose names are all new, the common case, walks the chain once: in each run it locks,
 * it compares or appends the blocks and covers them with the worker's cutoff in one entry write. A
 * store that moves a name from one block to another first pins every run on its path, then drops
 * the blocks that lost their last name (deepest first) and adds the ones that gained their first
 * (parents first), so every intermediate state gives the worker a depth between its depths before
 * and after (IntermediateStatesTest). A store that cannot get memory half-way undoes what it did and
 * answers {@code capacity_exceeded}.
 *
 * <p>Thread-safety: one instance per index, shared by its writers; each call works on one worker,
 * whose events are applied by one thread at a time.
 */
final class ChainWriter {
    private final RunArena arena;
    private final Generations generations;
    private final Reach reach;

    ChainWriter(RunArena arena, Generations generations, Reach reach) {
        this.arena = arena;
        this.generations = generations;
        this.reach = reach;
    }

    /** Child records a store of {@code n} blocks may add (new runs: a first one, then one per full run). */
    static int childRecordsFor(int n) {
        return n / MAX_RUN + 2;
    }

    /** Bytes of run records a store of {@code n} new blocks may need. */
    static long bytesFor(int n) {
        return (long) childRecordsFor(n) * ChainLayout.runBytes(MAX_RUN) + 2 * ChainLayout.chunkBytes(MAX_RUN);
    }

    // ------------------------------------------------------------------ store

    /**
     * Stores {@code locals[0..n)} under {@code names[0..n)} as the chain continuing {@code parent}
     * (-1: a new chain); the caller checked the parent and made room for the names and the child
     * records. OK, or {@code CAPACITY_EXCEEDED} (nothing changed).
     */
    EventStatus store(WorkerHoldings h, int parent, long[] names, long[] locals, int n, WriteScratch s) {
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

    /** Places every block, gaining each as it goes ({@code gain}) or only pinning the runs on the way. */
    private boolean descend(
            WorkerHoldings h, int parent, long[] locals, int n, int[] blocks, WriteScratch s, boolean gain) {
        for (int i = 0; i < n; ) {
            int m = advance(h, parent, locals, i, n, blocks, s, gain);
            if (m < 0) {
                return false;
            }
            if (gain) {
                reach.revisit(h, s);
            }
            i += m;
            parent = blocks[i - 1];
        }
        return true;
    }

    /**
     * Places block {@code i} and as many of the following as go into the same run; returns how many
     * (at least 1), or -1 if memory ran out. Retries while the run it would continue in is dying.
     */
    private int advance(
            WorkerHoldings h, int parent, long[] locals, int i, int n, int[] blocks, WriteScratch s, boolean gain) {
        while (true) {
            int m = tryAdvance(h, parent, locals, i, n, blocks, s, gain);
            if (m != DYING) {
                return m;
            }
            Thread.yield(); // the run found is being freed: let its writer take it out of the child table
        }
    }

    /** {@link #advance}'s answer when the run the chain continues in was dying: look again. */
    private static final int DYING = -2;

    private int tryAdvance(
            WorkerHoldings h, int parent, long[] locals, int i, int n, int[] blocks, WriteScratch s, boolean gain) {
        ChildTable ct = generations.children();
        int child;
        if (parent >= 0) {
            int run = runOf(parent);
            int j = offsetOf(parent) + 1;
            long a = reach.lockRun(run); // alive: the worker holds (or pinned) the parent
            int len = Runs.length(a);
            int m = Runs.matching(a, j, len, locals, i, n - i);
            if (m == 0 && j == len && j < MAX_RUN && noChildAt(ct, run, parent, locals[i], j)) {
                if (j == Runs.capacity(a)) {
                    a = grow(run, a, Math.min(MAX_RUN, j + n - i));
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
                Runs.unlock(a);
                return ok ? m : -1;
            }
            child = ct.find(parent, locals[i]);
            if (child < 0) {
                child = newRun(h, parent, Runs.start(a) + j, locals, i, n, s);
                if (child < 0) {
                    Runs.unlock(a);
                    return -1;
                }
                arena.links().link(run, child, j - 1);
                Runs.addChild(a);
                ct.insertIfAbsent(parent, locals[i], child); // under the parent's lock: nobody else adds this key
                s.childRecords++;
            }
            Runs.unlock(a);
        } else {
            child = ct.find(-1, locals[i]);
            if (child < 0) {
                int fresh = newRun(h, -1, 0, locals, i, n, s);
                if (fresh < 0) {
                    return -1;
                }
                child = ct.insertIfAbsent(-1, locals[i], fresh);
                if (child == fresh) {
                    s.childRecords++;
                } else { // another writer started the same chain first; ours was never reachable
                    s.created.rem(fresh);
                    arena.recycleRun(fresh, arena.address(fresh));
                }
            }
        }
        return enter(h, child, locals, i, n, blocks, s, gain);
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
        long a = reach.lockRun(run);
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
        Runs.unlock(a);
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
            return reach.gainLocked(h, a, run, j, m, pins, s);
        }
        if (!s.pinned.contains(run)) {
            if (!reach.pin(h, a, 1)) {
                return false;
            }
            s.pinned.add(run);
        }
        return true;
    }

    /**
     * A new run continuing {@code parent} at position {@code start} with as many of the blocks from
     * {@code i} as fit, not yet published; the worker's entry pins it. -1 if memory ran out.
     */
    private int newRun(WorkerHoldings h, int parent, int start, long[] locals, int i, int n, WriteScratch s) {
        int take = Math.min(n - i, MAX_RUN);
        int run = arena.allocateRun(ChainLayout.runCapacityFor(take));
        if (run < 0) {
            return -1;
        }
        long a = arena.address(run);
        Runs.init(a, parent, start);
        Runs.append(a, 0, locals, i, take);
        Runs.addEntry(a, ChainLayout.entry(h.slot, 0, 0, 1), arena); // inline: never needs a chunk
        s.created.add(run);
        return run;
    }

    /** Moves the locked run {@code run} into a record of room for {@code blocks}; the new record, locked (0 if none could be had). */
    private long grow(int run, long a, int blocks) {
        int cap = ChainLayout.runCapacityFor(blocks);
        if (cap <= Runs.capacity(a)) {
            return a;
        }
        long to = arena.allocateRecord(cap);
        if (to == 0) {
            Runs.unlock(a);
            return 0;
        }
        Runs.moveLocked(a, to, cap);
        arena.moveTo(run, to);
        Runs.markMoved(a);
        generations.reclaimer().recycleRecordLater(a);
        return to;
    }

    /** Takes back what a store that ran out of memory gained, deepest first. */
    private void undoGains(WorkerHoldings h, WriteScratch s) {
        var g = s.gained;
        for (int k = g.size() - 1; k >= 0; k--) {
            int b = g.getInt(k);
            if (b < 0) {
                h.setExtraNames(~b, h.extraNames(~b) - 1);
            } else {
                loseOne(h, b, s);
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
            reach.unpin(h, p.getInt(k));
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
            int before = reach.holds(h, b) ? 1 + h.extraNames(b) : 0;
            int after = before + change;
            if (after == 0) {
                if (before > 0) {
                    loseOne(h, b, s);
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
                reach.gainBlock(h, blocks[i], s);
                h.setExtraNames(blocks[i], count - 1);
            }
        }
        gained.clear();
    }

    // ------------------------------------------------------------------ remove and clear

    /** Removes the blocks {@code h} named {@code names}, in order; BLOCK_NOT_FOUND if any was unknown. */
    EventStatus remove(WorkerHoldings h, long[] names, WriteScratch s) {
        EventStatus status = EventStatus.OK;
        int[] blocks = s.slots(names.length);
        int m = 0;
        for (long e : names) {
            int b = h.names.remove(e);
            if (b < 0) {
                status = EventStatus.BLOCK_NOT_FOUND;
            } else {
                blocks[m++] = b;
            }
        }
        sortDeepestFirst(blocks, m, s);
        int[] tx = s.tx;
        int run = -1;
        long a = 0;
        long ea = 0;
        for (int k = 0; k < m; k++) {
            int b = blocks[k];
            int extra = h.extraNames(b);
            if (extra > 0) {
                h.setExtraNames(b, extra - 1);
                continue;
            }
            if (runOf(b) != run) { // one entry write per run: the blocks of a run come one after another
                if (run >= 0) {
                    reach.commit(h, run, a, ea, tx);
                }
                run = runOf(b);
                a = reach.lockRun(run);
                ea = reach.open(h, a, tx);
            }
            reach.loseLocked(h, a, b, tx, s);
        }
        if (run >= 0) {
            reach.commit(h, run, a, ea, tx);
        }
        return status;
    }

    /** {@code h} no longer holds {@code b} (one of its names is gone and it was the last). */
    private void loseOne(WorkerHoldings h, int b, WriteScratch s) {
        int[] tx = s.tx;
        long a = reach.lockRun(runOf(b));
        long ea = reach.open(h, a, tx);
        reach.loseLocked(h, a, b, tx, s);
        reach.commit(h, runOf(b), a, ea, tx);
    }

    /**
     * Drops everything {@code h} holds, run by run, deepest run first (a child run starts deeper than
     * its parent), so its reach stays prefix-closed while it goes. Returns how many blocks it held.
     * The names are the caller's.
     */
    long clear(WorkerHoldings h, WriteScratch s) {
        int[] blocks = s.slots(h.names.size());
        int k = h.names.blocks(blocks);
        long[] keys = s.keys(k);
        int runs = 0;
        for (int i = 0; i < k; i++) { // (start << 32 | run), one per run
            int run = runOf(blocks[i]);
            keys[runs++] = (long) Runs.start(arena.address(run)) << 32 | run;
        }
        Arrays.sort(keys, 0, runs);
        long prev = -1;
        for (int i = runs - 1; i >= 0; i--) {
            if (keys[i] == prev) {
                continue;
            }
            prev = keys[i];
            int run = (int) keys[i];
            reach.vacate(h, run, reach.lockRun(run));
        }
        long held = h.distinct;
        h.distinct = 0;
        h.clearSideSets();
        return held;
    }

    /** Orders {@code blocks[0..m)} deepest position first (blocks of one run next to each other). */
    private void sortDeepestFirst(int[] blocks, int m, WriteScratch s) {
        if (m < 2) {
            return;
        }
        long[] keys = s.keys(m);
        boolean descending = true;
        for (int i = 0; i < m; i++) {
            int b = blocks[i];
            keys[i] = (long) (Runs.start(arena.address(runOf(b))) + offsetOf(b)) << 32 | b;
            descending &= i == 0 || keys[i] <= keys[i - 1];
        }
        if (descending) {
            return;
        }
        Arrays.sort(keys, 0, m);
        for (int i = 0; i < m; i++) {
            blocks[i] = (int) keys[m - 1 - i];
        }
    }
}
