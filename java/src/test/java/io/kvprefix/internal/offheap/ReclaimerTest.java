package io.kvprefix.internal.offheap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.IndexConfig;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * The reclaimer's rules (its class comment and this package's table of rights): what is handed over
 * is freed only after every reader that entered before the flush has left; a hand-over never waits
 * for a flush in progress, and what it hands over then waits for the next flush; a writer's
 * {@link Reclaimer#maybeFlush} flushes at {@link Reclaimer#FLUSH_AT} items; runs, chunks and records
 * go back to the arena, each once. Each test was seen to fail against a reclaimer that breaks its
 * rule: a flush that does not wait on the reader gate, one that waits holding the hand-over monitor,
 * and a threshold off by one.
 */
class ReclaimerTest {
    private static final Duration GENEROUS = Duration.ofSeconds(60);

    @Test
    void aHandedOverBlockIsFreedOnlyAfterTheReadersLeft() throws Exception {
        MemoryPool pool = new MemoryPool(IndexConfig.UNLIMITED);
        ReadGate gate = new ReadGate();
        Reclaimer reclaimer = new Reclaimer(gate);
        MemoryPool.Block b = pool.allocate(4096);
        long held = pool.used();
        int token = gate.enter(); // a reader that may still be on the block
        reclaimer.freeLater(b);
        CompletableFuture<Void> flush = CompletableFuture.runAsync(reclaimer::flush, Thread::startVirtualThread);
        assertFalse(doneWithin(flush, 200), "the flush finished while a reader was inside");
        assertEquals(held, pool.used(), "the block was freed under a reader");
        gate.exit(token);
        flush.get(GENEROUS.toSeconds(), TimeUnit.SECONDS);
        assertEquals(held - b.bytes(), pool.used());
        assertEquals(0, reclaimer.pending());
    }

    @Test
    void aHandOverDuringAFlushWaitsForTheNextOne() throws Exception {
        MemoryPool pool = new MemoryPool(IndexConfig.UNLIMITED);
        ReadGate gate = new ReadGate();
        Reclaimer reclaimer = new Reclaimer(gate);
        MemoryPool.Block first = pool.allocate(4096);
        MemoryPool.Block second = pool.allocate(8192);
        int token = gate.enter();
        reclaimer.freeLater(first);
        CompletableFuture<Void> flush = CompletableFuture.runAsync(reclaimer::flush, Thread::startVirtualThread);
        assertFalse(doneWithin(flush, 200), "the flush finished while a reader was inside");
        // The flush waits for the reader; a writer handing something over meanwhile must not wait with it.
        assertTimeoutPreemptively(Duration.ofSeconds(10), () -> reclaimer.freeLater(second));
        gate.exit(token);
        flush.get(GENEROUS.toSeconds(), TimeUnit.SECONDS);
        assertEquals(second.bytes(), pool.used(), "the first block is freed, the second waits for the next flush");
        assertEquals(1, reclaimer.pending());
        reclaimer.flush();
        assertEquals(0, pool.used());
        assertEquals(0, reclaimer.pending());
    }

    @Test
    void aWriterFlushesAtTheThreshold() {
        MemoryPool pool = new MemoryPool(IndexConfig.UNLIMITED);
        Reclaimer reclaimer = new Reclaimer(new ReadGate());
        for (int i = 0; i < Reclaimer.FLUSH_AT - 1; i++) {
            reclaimer.freeLater(pool.allocate(64));
        }
        reclaimer.maybeFlush();
        assertEquals(Reclaimer.FLUSH_AT - 1, reclaimer.pending(), "flushed below the threshold");
        reclaimer.freeLater(pool.allocate(64));
        reclaimer.maybeFlush();
        assertEquals(0, reclaimer.pending(), "did not flush at the threshold");
        assertEquals(0, pool.used());
    }

    @Test
    void runsChunksAndRecordsGoBackToTheArenaOnce() {
        MemoryPool pool = new MemoryPool(IndexConfig.UNLIMITED);
        Reclaimer reclaimer = new Reclaimer(new ReadGate());
        RunArena arena = new RunArena(pool, reclaimer, 0);
        reclaimer.attach(arena);
        int run = arena.allocateRun(ChainLayout.runCapacityFor(4));
        long chunk = arena.allocateChunk(ChainLayout.chunkCapacity(0));
        long record = arena.allocateRecord(ChainLayout.runCapacityFor(8));
        assertEquals(1, arena.liveRuns());
        reclaimer.recycleRunLater(run, arena.address(run));
        reclaimer.recycleChunkLater(chunk);
        reclaimer.recycleRecordLater(record);
        assertEquals(1, arena.liveRuns(), "recycled before the flush");
        reclaimer.flush();
        assertEquals(0, arena.liveRuns());
        assertEquals(0, arena.address(run), "the run table still names the recycled run");
        reclaimer.flush(); // nothing pending: nothing is recycled a second time
        assertEquals(0, arena.liveRuns());
        // The id and each record are reused, once each: a run, a chunk and a record of the same sizes.
        assertEquals(run, arena.allocateRun(ChainLayout.runCapacityFor(4)));
        assertEquals(chunk, arena.allocateChunk(ChainLayout.chunkCapacity(0)));
        assertEquals(record, arena.allocateRecord(ChainLayout.runCapacityFor(8)));
        assertTrue(arena.allocateRun(ChainLayout.runCapacityFor(4)) != run);
        arena.free();
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
