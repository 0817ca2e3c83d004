package io.kvprefix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.MatchExplanation.Stop;
import io.kvprefix.MatchExplanation.WorkerStop;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link PrefixIndex#explain} while writers run (docs/SPEC.md section 4.1): two writer threads, one
 * per worker, take a middle block of a 32-block chain away and put it back, over and over, while
 * the test thread explains the chain. Explain sees the index between whole events, so each worker is
 * either complete (32) or holed at 10 resuming at 11, never anything between; and the writers keep
 * going meanwhile (explain holds them out only for its walk).
 */
class ExplainConcurrencyTest {
    private static final int N = 32;
    private static final int HOLE = 10;

    @ParameterizedTest
    @ValueSource(strings = {"offheap", "heap"})
    void explainSeesWholeEventsWhileWritersRun(String impl) throws Exception {
        IndexConfig config = IndexConfig.builder().blockSize(4).build();
        try (PrefixIndex index = impl.equals("heap") ? PrefixIndex.heap(config) : PrefixIndex.offHeap(config)) {
            long[] locals = new long[N];
            for (int i = 0; i < N; i++) {
                locals[i] = 1000 + i;
            }
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong cycles = new AtomicLong();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> writers = new ArrayList<>();
            for (int w = 1; w <= 2; w++) {
                Worker worker = Worker.of(w);
                long base = w * 1000L;
                long[] names = new long[N];
                for (int i = 0; i < N; i++) {
                    names[i] = base + i;
                }
                assertEquals(EventStatus.OK, index.apply(KvEvent.Stored.root(worker, names, locals)));
                Thread t = new Thread(() -> {
                    try {
                        while (!stop.get()) {
                            check(index.apply(new KvEvent.Removed(worker, new long[] {base + HOLE})));
                            check(index.apply(KvEvent.Stored.after(
                                    worker, base + HOLE - 1, new long[] {base + HOLE}, new long[] {locals[HOLE]})));
                            cycles.incrementAndGet();
                        }
                    } catch (Throwable e) {
                        failure.set(e);
                    }
                });
                writers.add(t);
            }
            writers.forEach(Thread::start);
            long explains = 0;
            long holes = 0;
            long before = cycles.get();
            long end = System.nanoTime() + 1_000_000_000L;
            try {
                while (System.nanoTime() < end) {
                    MatchExplanation e = index.explain(locals, 0, N);
                    assertEquals(2, e.workers().size(), e::toString);
                    for (WorkerStop s : e.workers()) {
                        boolean complete = s.depth() == N && s.stop() == Stop.COMPLETE;
                        boolean hole = s.depth() == HOLE && s.stop() == Stop.HOLE && s.resumesAt() == HOLE + 1;
                        assertTrue(complete || hole, "a state between two events: " + s.describe());
                        holes += hole ? 1 : 0;
                    }
                    explains++;
                }
            } finally {
                stop.set(true);
                for (Thread t : writers) {
                    t.join(10_000);
                }
            }
            if (failure.get() != null) {
                throw new AssertionError("a writer failed", failure.get());
            }
            assertTrue(explains > 50, "explains: " + explains);
            assertTrue(cycles.get() - before > 50, "the writers were held out: " + (cycles.get() - before) + " cycles");
            assertTrue(holes > 0, "never saw a hole in " + explains + " explains");
        }
    }

    private static void check(EventStatus s) {
        if (s != EventStatus.OK) {
            throw new AssertionError("status " + s);
        }
    }
}
