package io.kvprefix.internal.offheap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.IndexConfig;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The generations' two exclusive operations (this package's table of rights): a child-table rebuild
 * keeps every live record, drops the tombstones, and hands the old table to the reclaimer, which
 * frees it once; a close waits for the readers in flight, frees once, and refuses what comes after.
 * Each test was seen to fail against a broken rule: a rebuild that does not copy the records, one
 * that never frees the old table, and a close that does not wait for the readers.
 */
class GenerationsTest {

    @Test
    void aRebuildKeepsTheLiveRecordsAndDropsTheTombstones() {
        MemoryPool pool = new MemoryPool(IndexConfig.UNLIMITED);
        Generations g = new Generations(pool, 0);
        ChildTable old = g.children();
        assertTrue(old.tryReserve(10));
        for (int run = 0; run < 10; run++) {
            assertEquals(run, old.insertIfAbsent(run * 64, 1000 + run, run));
        }
        for (int run = 0; run < 3; run++) {
            old.remove(run * 64, 1000 + run, run);
        }
        long before = pool.used();
        assertTrue(g.growChildren(old.capacity)); // more than fits: a rebuild
        ChildTable fresh = g.children();
        assertNotSame(old, fresh);
        assertEquals(1, g.rebuilds());
        assertEquals(7, fresh.live());
        for (int run = 0; run < 10; run++) {
            assertEquals(run < 3 ? -1 : run, fresh.find(run * 64, 1000 + run), "record of run " + run);
        }
        assertEquals(before - old.bytes() + fresh.bytes(), pool.used(), "the old table is not freed, or twice");
        g.close(() -> {});
    }

    @Test
    void aCloseWaitsForTheReadersFreesOnceAndRefusesWhatComesAfter() throws Exception {
        MemoryPool pool = new MemoryPool(IndexConfig.UNLIMITED);
        Generations g = new Generations(pool, 0);
        AtomicInteger freed = new AtomicInteger();
        int token = g.enterRead();
        CompletableFuture<Boolean> close =
                CompletableFuture.supplyAsync(() -> g.close(freed::incrementAndGet), Thread::startVirtualThread);
        assertFalse(doneWithin(close, 200), "close finished while a reader was inside");
        assertEquals(0, freed.get(), "freed under a reader");
        g.exitRead(token);
        assertTrue(close.get(60, TimeUnit.SECONDS));
        assertEquals(1, freed.get());
        assertTrue(g.closed());
        assertFalse(g.close(freed::incrementAndGet), "closed twice");
        assertEquals(1, freed.get());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> g.withWritersHeldOut(() -> 1));
        assertEquals("index closed", e.getMessage());
        assertEquals(0, pool.used(), "the child table was not freed");
    }

    private static boolean doneWithin(CompletableFuture<?> f, long millis) throws InterruptedException {
        try {
            f.get(millis, TimeUnit.MILLISECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            throw new AssertionError(e.getCause());
        }
    }
}
