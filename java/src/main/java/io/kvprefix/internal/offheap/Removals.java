package io.kvprefix.internal.offheap;

import static io.kvprefix.internal.offheap.ChainLayout.block;
import static io.kvprefix.internal.offheap.ChainLayout.entry;
import static io.kvprefix.internal.offheap.ChainLayout.entryCutoff;
import static io.kvprefix.internal.offheap.ChainLayout.entryPins;
import static io.kvprefix.internal.offheap.ChainLayout.entryUnreachable;
import static io.kvprefix.internal.offheap.ChainLayout.offsetOf;
import static io.kvprefix.internal.offheap.ChainLayout.runOf;

import io.kvprefix.EventStatus;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import java.util.Arrays;

/**
 * The removal room: a GPU removal and a clear of one worker's holdings, end to end (docs/SPEC.md
 * section 3, rule 4), and the freeing of runs nobody holds. A removed block's cutoff shrinks
 * deepest first and what the worker still holds below it becomes unreachable; a run with no holder
 * and no child dies (out of the child table, unlinked from its parent, which may die in turn) and
 * is recycled once the readers have left ({@link Reclaimer}). The store room calls
 * {@link #loseOne} for a name that moved and {@link #unlockOrFree} for a pin it drops.
 *
 * <p>Locks: runs inside both gates (the caller's). One run lock at a time; a dying run is marked
 * dead and unlocked before its parent is locked, so locks nest only parent, then child, never back.
 *
 * <p>Thread-safety: one instance per index, shared by its writers; each call works on one worker,
 * whose events one thread applies at a time.
 */
final class Removals {
    private final RunArena arena;
    private final Generations generations;
    private final Reclaimer reclaimer;
    private final ReachWatch watch;
    private final MemoryPool pool;

    Removals(ChainState state) {
        this.pool = state.pool;
        this.arena = state.arena;
        this.generations = state.generations;
        this.reclaimer = state.generations.reclaimer();
        this.watch = state.watch;
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
                    commit(h, run, a, ea, tx);
                }
                run = runOf(b);
                a = RunLock.lockCurrent(arena, run);
                ea = open(h, a, tx);
            }
            loseLocked(h, a, b, tx, s);
        }
        if (run >= 0) {
            commit(h, run, a, ea, tx);
        }
        return status;
    }

    /** {@code h} no longer holds {@code b} (one of its names is gone and it was the last). */
    void loseOne(WorkerHoldings h, int b, WriteScratch s) {
        int[] tx = s.tx;
        long a = RunLock.lockCurrent(arena, runOf(b));
        long ea = open(h, a, tx);
        loseLocked(h, a, b, tx, s);
        commit(h, runOf(b), a, ea, tx);
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
            vacate(h, run, RunLock.lockCurrent(arena, run));
        }
        long held = h.distinct;
        h.distinct = 0;
        h.clearSideSets();
        return held;
    }

    /**
     * A {@code cleared} worker (its any-tier view already dropped): {@link #clear}, then its memory
     * given back, a fresh minimal name map or, if even that does not fit, the old one emptied.
     * Returns how many blocks it held.
     */
    long clearWorker(WorkerHoldings h, WriteScratch s) {
        long held = clear(h, s);
        NameMap fresh = h.names.capacity() > NameMap.MIN_CAPACITY ? NameMap.create(pool, 0) : null;
        if (fresh != null) {
            h.names.free();
            h.names = fresh;
        } else {
            h.names.clear();
        }
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

    /**
     * {@code h} no longer holds {@code b}, whose run {@code a} the caller has locked; {@code tx} holds
     * the entry's cutoff [0] and unreachable count [1] while a group of blocks of one run is dropped,
     * written once by {@link #commit}. What {@code h} still holds below a reached block becomes
     * unreachable: child runs first (their entries written here, deepest first), then this run's.
     */
    void loseLocked(WorkerHoldings h, long a, int b, int[] tx, WriteScratch s) {
        h.distinct--;
        s.heldDelta--;
        h.setExtraNames(b, 0);
        int off = offsetOf(b);
        if (off < tx[0]) {
            clearChildren(h, runOf(b), off, tx[0], s);
            for (int o = off + 1; o < tx[0]; o++) {
                h.addUnreachable(block(runOf(b), o));
            }
            tx[1] += tx[0] - off - 1;
            tx[0] = off;
        } else {
            h.removeUnreachable(b);
            tx[1]--;
        }
    }

    /** Opens a group on the locked run {@code a}: {@code tx} gets {@code h}'s cutoff and unreachable count there. */
    long open(WorkerHoldings h, long a, int[] tx) {
        long ea = Runs.findEntry(a, h.slot);
        long e = Mem.getLong(ea);
        tx[0] = entryCutoff(e);
        tx[1] = entryUnreachable(e);
        return ea;
    }

    /** Writes a group's entry and unlocks its run (freeing it if nobody holds anything there any more). */
    void commit(WorkerHoldings h, int run, long a, long ea, int[] tx) {
        long e = Mem.getLong(ea);
        long ne = entry(h.slot, tx[0], tx[1], entryPins(e));
        if (ne != e) {
            Runs.setEntry(a, ea, ne);
            watch.changed();
        }
        unlockOrFree(run, a);
    }

    /**
     * Clears {@code h}'s reach in every run hanging from offsets {@code [from, to)} of the locked run
     * {@code a} and below, deepest first: their reached blocks become unreachable.
     */
    private void clearChildren(WorkerHoldings h, int run, int from, int to, WriteScratch s) {
        IntArrayList stack = s.stack;
        IntArrayList order = s.order;
        stack.clear();
        order.clear();
        collectReached(h, run, from, to, stack);
        while (!stack.isEmpty()) { // pre-order; read back reversed it is deepest first
            int c = stack.popInt();
            order.add(c);
            long ca = RunLock.lockCurrent(arena, c); // alive: h reaches into it
            try {
                collectReached(h, c, 0, entryCutoff(Runs.entryOf(ca, h.slot)), stack);
            } finally {
                RunLock.unlock(ca);
            }
        }
        for (int k = order.size() - 1; k >= 0; k--) {
            int c = order.getInt(k);
            long ca = RunLock.lockCurrent(arena, c);
            try {
                long ea = Runs.findEntry(ca, h.slot);
                long e = Mem.getLong(ea);
                int cut = entryCutoff(e);
                for (int o = 0; o < cut; o++) {
                    h.addUnreachable(block(c, o));
                }
                Runs.setEntry(ca, ea, entry(h.slot, 0, entryUnreachable(e) + cut, entryPins(e)));
                watch.changed();
            } finally {
                RunLock.unlock(ca);
            }
        }
    }

    /** Pushes the runs hanging from offsets {@code [from, to)} of the locked run {@code run} that {@code h} reaches into. */
    private void collectReached(WorkerHoldings h, int run, int from, int to, IntArrayList out) {
        RunLinks links = arena.links();
        if (from >= links.attachBound(run)) {
            return; // no child hangs that deep
        }
        for (int c = links.first(run); c >= 0; c = links.next(c)) {
            long ca = arena.address(c);
            int at = offsetOf(Runs.parent(ca));
            if (at >= from && at < to && entryCutoff(Runs.entryOf(ca, h.slot)) > 0) {
                out.add(c);
            }
        }
    }

    /** Vacates {@code h}'s entry in the locked run {@code a} (the worker was cleared) and unlocks it. */
    void vacate(WorkerHoldings h, int run, long a) {
        long ea = Runs.findEntry(a, h.slot);
        if (ea != 0) {
            Runs.setEntry(a, ea, 0L);
            watch.changed();
        }
        unlockOrFree(run, a);
    }

    // ------------------------------------------------------------------ freeing runs

    /**
     * Unlocks the locked run {@code a}; if nobody holds or pins anything in it and no run hangs from
     * it, it dies instead: out of the child table, unlinked from its parent (which may die in turn),
     * recycled once the readers have left.
     */
    void unlockOrFree(int run, long a) {
        while (true) {
            if (Runs.holders(a) != 0 || arena.links().first(run) >= 0) {
                RunLock.unlock(a);
                return;
            }
            RunLock.markDeadAndUnlock(a);
            int parent = Runs.parent(a);
            generations.children().remove(parent, Runs.local(a, 0), run);
            Runs.recycleChunks(a, reclaimer);
            reclaimer.recycleRunLater(run, a);
            if (parent < 0) {
                return;
            }
            int dead = run;
            run = runOf(parent);
            a = RunLock.lockCurrent(arena, run); // alive: the dying run is still among its children
            arena.links().unlink(run, dead);
        }
    }
}
