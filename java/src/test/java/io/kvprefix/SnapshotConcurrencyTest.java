package io.kvprefix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Snapshots taken while writers of several workers apply events and readers match
 * (docs/SNAPSHOT.md section 2): each snapshot is a consistent cut (every worker's restored state is
 * a prefix of its own events, whole, and the event counters agree with the state), and on the
 * off-heap index matches keep completing while a snapshot is being written.
 */
class SnapshotConcurrencyTest {
    @TempDir
    Path dir;

    private static final int WRITERS = 3;
    private static final int CHAIN = 200_000;

    /** Worker {@code w}'s chain: block {@code j} has local hash {@code w << 32 | j + 1}. */
    private static long local(int w, int j) {
        return (long) (w + 1) << 32 | (j + 1);
    }

    private static long[] chain(int w) {
        long[] q = new long[CHAIN];
        for (int j = 0; j < CHAIN; j++) {
            q[j] = local(w, j);
        }
        return q;
    }

    @Test
    void offHeapSnapshotsAreConsistentCutsAndReadersGoOn() throws Exception {
        long during = run(PrefixIndex::offHeap, PrefixIndex::restore, 4);
        assertTrue(during > 0, "no match completed while a snapshot of the off-heap index was being written");
    }

    @Test
    void heapSnapshotsAreConsistentCuts() throws Exception {
        run(PrefixIndex::heap, PrefixIndex::restoreHeap, 2);
    }

    /** Runs writers and readers, takes {@code snapshots} snapshots meanwhile, checks them; matches completed within a snapshot. */
    private long run(
            Function<IndexConfig, PrefixIndex> create,
            BiFunction<Path, IndexConfig, PrefixIndex> restore,
            int snapshots)
            throws Exception {
        IndexConfig config = IndexConfig.defaults();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        AtomicLong snapshotStart = new AtomicLong(Long.MAX_VALUE);
        AtomicLong snapshotEnd = new AtomicLong(Long.MIN_VALUE);
        AtomicLong matchesDuring = new AtomicLong();
        List<Path> files = new ArrayList<>();
        try (PrefixIndex index = create.apply(config)) {
            preload(index);
            CountDownLatch started = new CountDownLatch(WRITERS);
            for (int w = 0; w < WRITERS; w++) {
                int worker = w;
                threads.add(new Thread(() -> write(index, worker, stop, started, failure)));
            }
            threads.add(new Thread(() -> read(index, stop, snapshotStart, snapshotEnd, matchesDuring, failure)));
            threads.forEach(Thread::start);
            started.await();
            for (int s = 0; s < snapshots; s++) {
                Thread.sleep(30);
                Path file = dir.resolve("cut" + s + ".snap");
                snapshotStart.set(Long.MAX_VALUE);
                snapshotEnd.set(Long.MIN_VALUE);
                snapshotStart.set(System.nanoTime());
                index.snapshot(file);
                snapshotEnd.set(System.nanoTime());
                files.add(file);
            }
            stop.set(true);
            for (Thread t : threads) {
                t.join();
            }
        }
        if (failure.get() != null) {
            throw new AssertionError("a writer or reader failed", failure.get());
        }
        for (Path file : files) {
            try (PrefixIndex r = restore.apply(file, config)) {
                long held = 0;
                for (int w = 0; w < WRITERS; w++) {
                    long k = r.blockCount(Worker.of(w));
                    assertEquals(k, r.match(chain(w)).depthOf(Worker.of(w)), file + ": worker " + w + " is torn");
                    held += k;
                }
                assertEquals(
                        held + PRELOAD_EVENTS,
                        r.eventCount(EventStatus.OK),
                        file + ": counters disagree with the state");
            }
        }
        return matchesDuring.get();
    }

    private static final int PRELOAD_EVENTS = 8_000;

    /** A few hundred thousand blocks of other workers, so that a snapshot takes a while. */
    private static void preload(PrefixIndex index) {
        SplittableRandom r = new SplittableRandom(9);
        long e = 1L << 40;
        for (int s = 0; s < PRELOAD_EVENTS; s++) {
            long[] locals = new long[64];
            long[] hashes = new long[64];
            for (int i = 0; i < 64; i++) {
                locals[i] = r.nextLong();
                hashes[i] = e++;
            }
            index.apply(KvEvent.Stored.root(Worker.of(100 + s % 8), hashes, locals));
        }
    }

    private static void write(
            PrefixIndex index, int w, AtomicBoolean stop, CountDownLatch started, AtomicReference<Throwable> failure) {
        try {
            Worker worker = Worker.of(w);
            started.countDown();
            for (int j = 0; j < CHAIN && !stop.get(); j++) {
                KvEvent e = j == 0
                        ? KvEvent.Stored.root(worker, new long[] {1}, new long[] {local(w, 0)})
                        : KvEvent.Stored.after(worker, j, new long[] {j + 1}, new long[] {local(w, j)});
                EventStatus s = index.apply(e);
                if (s != EventStatus.OK) {
                    throw new AssertionError("worker " + w + " event " + j + ": " + s);
                }
            }
        } catch (Throwable t) {
            failure.compareAndSet(null, t);
        }
    }

    private static void read(
            PrefixIndex index,
            AtomicBoolean stop,
            AtomicLong snapshotStart,
            AtomicLong snapshotEnd,
            AtomicLong matchesDuring,
            AtomicReference<Throwable> failure) {
        try {
            long[][] chains = new long[WRITERS][];
            for (int w = 0; w < WRITERS; w++) {
                chains[w] = chain(w);
            }
            MatchResult m = new MatchResult();
            for (int i = 0; !stop.get(); i++) {
                long t0 = System.nanoTime();
                index.match(chains[i % WRITERS], 0, 256, m);
                long t1 = System.nanoTime();
                if (t0 > snapshotStart.get() && snapshotEnd.get() == Long.MIN_VALUE) {
                    matchesDuring.incrementAndGet(); // started after a snapshot began, finished before it ended
                }
                if (t1 < t0) {
                    throw new AssertionError("clock");
                }
            }
        } catch (Throwable t) {
            failure.compareAndSet(null, t);
        }
    }
}
