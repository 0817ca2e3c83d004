package io.kvprefix.internal.offheap;

import static io.kvprefix.internal.offheap.ChainLayout.LOCK_DEAD;
import static io.kvprefix.internal.offheap.ChainLayout.LOCK_HELD;
import static io.kvprefix.internal.offheap.ChainLayout.LOCK_MOVED;
import static io.kvprefix.internal.offheap.ChainLayout.RUN_LOCK;

import java.util.concurrent.atomic.LongAdder;

/**
 * The run lock: the one word of a run record's header ({@link ChainLayout}, offset 40) that writers
 * take to change the run, and that says whether the record is dead (being recycled) or moved (left
 * for a bigger record). Every read and write of that word is here, so the protocol changes in one
 * place (the table of rights is in this package's {@code package-info.java}).
 *
 * <p>Locks: this is the lock. A spin lock (CAS on bit 0, {@link Thread#onSpinWait()}, then
 * {@link Thread#yield()}); a writer holds at most a parent run's and one child's at once, parent first.
 *
 * <p>Thread-safety: stateless; safe from any thread.
 */
final class RunLock {
    private RunLock() {}

    /**
     * Takes the lock of the record at {@code run}; false (not taken) if the run is dead, being
     * recycled, or moved to another record (the run table has its new address).
     */
    static boolean lock(long run) {
        return lock(run, null);
    }

    /** As {@link #lock(long)}, counting in {@code waits} (if not null) a call that found the lock held. */
    static boolean lock(long run, LongAdder waits) {
        long a = run + RUN_LOCK;
        int spins = 0;
        while (true) {
            int v = Mem.getIntAcquire(a);
            if ((v & (LOCK_DEAD | LOCK_MOVED)) != 0) {
                return false;
            }
            if ((v & LOCK_HELD) == 0 && Mem.casInt(a, v, v | LOCK_HELD)) {
                return true;
            }
            if (spins == 0 && waits != null) {
                waits.increment();
            }
            if (++spins > 64) {
                Thread.yield();
            } else {
                Thread.onSpinWait();
            }
        }
    }

    /**
     * Locks run {@code run} at its current record and returns the record's address; 0 if the run
     * is dead. A record the run moved out of is left for the new one.
     */
    static long lockCurrent(RunArena arena, int run) {
        while (true) {
            long a = arena.address(run);
            if (lock(a, arena.lockWaits)) {
                return a;
            }
            if (!moved(a)) {
                return 0;
            }
            Thread.onSpinWait();
        }
    }

    static void unlock(long run) {
        long a = run + RUN_LOCK;
        Mem.setIntRelease(a, Mem.getInt(a) & ~LOCK_HELD);
    }

    /** Marks a locked run dead and unlocks it: later {@link #lock} calls fail. */
    static void markDeadAndUnlock(long run) {
        Mem.setIntRelease(run + RUN_LOCK, LOCK_DEAD);
    }

    /** Sets the lock of a fresh record a locked run is being copied into: held by the mover. */
    static void holdFresh(long to) {
        Mem.setInt(to + RUN_LOCK, LOCK_HELD);
    }

    /** Marks the record a locked run moved out of: released, and later {@link #lock} calls fail. */
    static void markMoved(long from) {
        Mem.setIntRelease(from + RUN_LOCK, LOCK_MOVED);
    }

    /** True if the record at {@code run} was left for a bigger one. */
    static boolean moved(long run) {
        return (Mem.getIntAcquire(run + RUN_LOCK) & LOCK_MOVED) != 0;
    }

    /** True if the record at {@code run} is neither dead nor moved (an acquire load: a reader's test). */
    static boolean live(long run) {
        return (Mem.getIntAcquire(run + RUN_LOCK) & (LOCK_DEAD | LOCK_MOVED)) == 0;
    }

    /** True if the run at {@code run} is dead (a plain load: for a caller that holds every writer out). */
    static boolean deadHeldOut(long run) {
        return (Mem.getInt(run + RUN_LOCK) & LOCK_DEAD) != 0;
    }
}
