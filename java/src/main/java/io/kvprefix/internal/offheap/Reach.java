package io.kvprefix.internal.offheap;

import static io.kvprefix.internal.offheap.ChainLayout.block;
import static io.kvprefix.internal.offheap.ChainLayout.entry;
import static io.kvprefix.internal.offheap.ChainLayout.entryCutoff;
import static io.kvprefix.internal.offheap.ChainLayout.entryPins;
import static io.kvprefix.internal.offheap.ChainLayout.entryUnreachable;
import static io.kvprefix.internal.offheap.ChainLayout.offsetOf;
import static io.kvprefix.internal.offheap.ChainLayout.runOf;

import it.unimi.dsi.fastutil.ints.IntArrayList;

/**
 * Changes to one worker's reach, run by run, keeping the invariant of {@link WorkerHoldings}: a
 * worker gains blocks (its cutoff in a run grows, parents first, and held-but-unreachable
 * descendants become reachable), loses them (its cutoff shrinks, and what it still holds below
 * becomes unreachable, deepest first), and gives up whole runs. A run whose last holder leaves and
 * that has no child runs is taken out of the child table, unlinked from its parent and recycled
 * after the readers have left ({@link Reclaimer}).
 *
 * <p>Every entry change happens under its run's lock. Locks are only ever nested parent run, then
 * child run; a run being freed is unlocked before its parent is locked, so there is no cycle.
 *
 * <p>Thread-safety: one instance per index, shared by its writers; each call works on one worker's
 * holdings, which only that worker's writer touches.
 */
final class Reach {
    private final RunArena arena;
    private final Generations generations;
    private final Reclaimer reclaimer;
    final ReachWatch watch = new ReachWatch();

    Reach(RunArena arena, Generations generations, Reclaimer reclaimer) {
        this.arena = arena;
        this.generations = generations;
        this.reclaimer = reclaimer;
    }

    /**
     * Locks run {@code run} at its current record and returns the record's address; 0 if the run
     * is dead. A record the run moved out of is left for the new one.
     */
    long lockRun(int run) {
        while (true) {
            long a = arena.address(run);
            if (Runs.lock(a)) {
                return a;
            }
            if (!Runs.moved(a)) {
                return 0;
            }
            Thread.onSpinWait();
        }
    }

    // ------------------------------------------------------------------ reading one's own reach (lock-free)

    /** True if {@code h} reaches {@code block}: holds it and every ancestor. */
    boolean reaches(WorkerHoldings h, int block) {
        long e = Runs.entryOf(arena.address(runOf(block)), h.slot);
        return entryCutoff(e) > offsetOf(block);
    }

    /** True if {@code h} reaches the block the run at {@code run} continues (or the run starts a chain). */
    boolean reachesParent(WorkerHoldings h, long run) {
        int p = Runs.parent(run);
        return p < 0 || reaches(h, p);
    }

    /** True if {@code h} holds {@code block}, reachable or not. */
    boolean holds(WorkerHoldings h, int block) {
        return reaches(h, block) || h.isUnreachable(block);
    }

    // ------------------------------------------------------------------ gaining

    /**
     * {@code h} gains blocks {@code [j, j+m)} of the run {@code run} at {@code a}, which the caller
     * has locked: a block it holds already gets one more name, a new one is covered by the cutoff if
     * its parent is reached and recorded as unreachable otherwise. {@code pinsDelta} changes the
     * entry's pins in the same write. Held-but-unreachable runs that hang below what became
     * reachable are queued in {@code s.revisit} for {@link #revisit} after the caller unlocks.
     * Returns false only if a new entry could not be had within the budget (nothing changed then).
     */
    boolean gainLocked(WorkerHoldings h, long a, int run, int j, int m, int pinsDelta, WriteScratch s) {
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
    void revisit(WorkerHoldings h, WriteScratch s) {
        IntArrayList q = s.revisit;
        while (!q.isEmpty()) {
            int c = q.popInt();
            long a = lockRun(c); // alive: h holds its first block
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
                Runs.unlock(a);
            }
        }
    }

    /** Gains one block (locking its run): the two-phase store's second phase. */
    boolean gainBlock(WorkerHoldings h, int b, WriteScratch s) {
        long a = lockRun(runOf(b)); // alive: pinned by the store
        boolean ok;
        try {
            ok = gainLocked(h, a, runOf(b), offsetOf(b), 1, 0, s);
        } finally {
            Runs.unlock(a);
        }
        revisit(h, s);
        return ok;
    }

    /** Changes the pins of {@code h}'s entry in {@code run} by {@code delta} (adding an entry if it has none); false if no entry could be had. */
    boolean pin(WorkerHoldings h, long a, int delta) {
        long ea = Runs.findEntry(a, h.slot);
        if (ea == 0) {
            return Runs.addEntry(a, entry(h.slot, 0, 0, delta), arena) != 0;
        }
        long e = Mem.getLong(ea);
        Runs.setEntry(a, ea, entry(h.slot, entryCutoff(e), entryUnreachable(e), entryPins(e) + delta));
        return true;
    }

    /** Drops the store's pin on {@code run}, freeing the run if that was all that kept it. */
    void unpin(WorkerHoldings h, int run) {
        long a = lockRun(run); // alive: pinned
        pin(h, a, -1);
        unlockOrFree(run, a);
    }

    // ------------------------------------------------------------------ losing

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
            long ca = lockRun(c); // alive: h reaches into it
            try {
                collectReached(h, c, 0, entryCutoff(Runs.entryOf(ca, h.slot)), stack);
            } finally {
                Runs.unlock(ca);
            }
        }
        for (int k = order.size() - 1; k >= 0; k--) {
            int c = order.getInt(k);
            long ca = lockRun(c);
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
                Runs.unlock(ca);
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
            if (Runs.holders(a) != 0 || Runs.children(a) != 0) {
                Runs.unlock(a);
                return;
            }
            Runs.markDeadAndUnlock(a);
            int parent = Runs.parent(a);
            generations.children().remove(parent, Runs.local(a, 0), run);
            Runs.recycleChunks(a, reclaimer);
            reclaimer.recycleRunLater(run, a);
            if (parent < 0) {
                return;
            }
            int dead = run;
            run = runOf(parent);
            a = lockRun(run); // alive: it still counts the dying run among its children
            arena.links().unlink(run, dead);
            Runs.removeChild(a);
        }
    }
}
