package io.kvprefix.internal.offheap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.IndexConfig;
import io.kvprefix.testing.TestScale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The run lock's rules ({@link RunLock}, this package's table of rights): one writer at a time
 * holds a run; a dead record cannot be locked again, nor a record a run moved out of, and
 * {@link RunLock#lockCurrent} follows a moved run to its new record. Each test was seen to fail
 * against a lock that breaks its rule: one taken by a plain store instead of a compare-and-set, and
 * one that ignores the dead and moved bits.
 */
class RunLockTest {

    @Test
    void oneWriterAtATimeHoldsARun() throws Exception {
        MemoryPool pool = new MemoryPool(IndexConfig.UNLIMITED);
        MemoryPool.Block b = pool.allocate(ChainLayout.runBytes(4));
        long run = b.address;
        long counter = run + ChainLayout.RUN_LOCALS; // a plain word the lock guards
        int n = TestScale.iterations(200_000, 2_000_000);
        Runnable add = () -> {
            for (int i = 0; i < n; i++) {
                assertTrue(RunLock.lock(run));
                Mem.setLong(counter, Mem.getLong(counter) + 1);
                RunLock.unlock(run);
            }
        };
        Thread t = Thread.ofPlatform().start(add);
        add.run();
        t.join(TimeUnit.SECONDS.toMillis(120));
        assertFalse(t.isAlive());
        assertEquals(2L * n, Mem.getLong(counter), "updates under the lock were lost");
        b.free();
    }

    @Test
    void aDeadRecordCannotBeLocked() {
        MemoryPool pool = new MemoryPool(IndexConfig.UNLIMITED);
        Reclaimer reclaimer = new Reclaimer(new ReadGate());
        RunArena arena = new RunArena(pool, reclaimer, 0);
        reclaimer.attach(arena);
        int id = arena.allocateRun(4);
        long a = arena.address(id);
        assertTrue(RunLock.live(a));
        assertTrue(RunLock.lock(a));
        RunLock.markDeadAndUnlock(a);
        assertFalse(RunLock.live(a));
        assertTrue(RunLock.deadHeldOut(a));
        assertFalse(RunLock.lock(a), "a dead run was locked");
        assertEquals(0, RunLock.lockCurrent(arena, id), "a dead run was locked through the run table");
        arena.free();
    }

    @Test
    void aMovedRunIsLockedAtItsNewRecord() {
        MemoryPool pool = new MemoryPool(IndexConfig.UNLIMITED);
        Reclaimer reclaimer = new Reclaimer(new ReadGate());
        RunArena arena = new RunArena(pool, reclaimer, 0);
        reclaimer.attach(arena);
        int id = arena.allocateRun(4);
        long old = RunLock.lockCurrent(arena, id);
        long moved = arena.growLocked(id, old, 16);
        assertNotEquals(old, moved);
        assertEquals(moved, arena.address(id));
        assertTrue(RunLock.moved(old));
        assertFalse(RunLock.live(old));
        assertFalse(RunLock.lock(old), "the record the run moved out of was locked");
        RunLock.unlock(moved);
        assertEquals(moved, RunLock.lockCurrent(arena, id));
        RunLock.unlock(moved);
        assertEquals(1, reclaimer.pending(), "the old record was not handed to the reclaimer");
        arena.free();
    }
}
