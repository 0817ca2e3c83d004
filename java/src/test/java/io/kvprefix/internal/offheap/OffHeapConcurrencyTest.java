package io.kvprefix.internal.offheap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.kvprefix.EventSink;
import io.kvprefix.EventStatus;
import io.kvprefix.Implementation;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.testing.TestScale;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Writers and readers at once on the off-heap index: depths returned during writes are allowed by
 * docs/SPEC.md section 4, the final state equals a sequential reference, the table grows (rebuilds)
 * during the run, and close() during the run neither crashes nor reads freed memory.
 */
class OffHeapConcurrencyTest {

    /** A workload: per worker its events in order, plus queries over what they store. */
    record Workload(Map<Worker, List<KvEvent>> perWorker, List<long[]> queries) {}

    /** Chains that only grow: every store continues the worker's previous block or starts a sequence. */
    static Workload growOnly(SplittableRandom r, int workers, int storesPerWorker) {
        return growOnly(r, workers, storesPerWorker, 24, 40, 200);
    }

    /** Workers storing prefixes of {@code docCount} shared documents of {@code minLen} to {@code minLen + spread - 1} blocks. */
    static Workload growOnly(
            SplittableRandom r, int workers, int storesPerWorker, int docCount, int minLen, int spread) {
        Map<Worker, List<KvEvent>> per = new HashMap<>();
        List<long[]> prefixes = new ArrayList<>();
        // shared "documents" so workers overlap
        long[][] docs = new long[docCount][];
        for (int d = 0; d < docs.length; d++) {
            docs[d] = new long[minLen + r.nextInt(spread)];
            for (int i = 0; i < docs[d].length; i++) {
                docs[d][i] = i < 3 ? 7 + i : r.nextLong(); // common first blocks: shared prefixes
            }
            prefixes.add(docs[d]);
        }
        long nextE = 1;
        for (int w = 0; w < workers; w++) {
            Worker worker = Worker.of(w * 7919L + (w % 3 == 0 ? Long.MIN_VALUE : 0), w % 2);
            List<KvEvent> evs = new ArrayList<>();
            Map<Integer, long[]> heldE = new HashMap<>(); // doc -> engine hashes stored so far
            for (int s = 0; s < storesPerWorker; s++) {
                int d = r.nextInt(docs.length);
                long[] have = heldE.getOrDefault(d, new long[0]);
                if (have.length >= docs[d].length) {
                    continue;
                }
                int n = Math.min(docs[d].length - have.length, 1 + r.nextInt(24));
                long[] e = new long[n];
                long[] l = new long[n];
                for (int i = 0; i < n; i++) {
                    e[i] = nextE++;
                    l[i] = docs[d][have.length + i];
                }
                OptionalLong parent = have.length == 0 ? OptionalLong.empty() : OptionalLong.of(have[have.length - 1]);
                evs.add(new KvEvent.Stored(worker, parent, e, l));
                long[] grown = java.util.Arrays.copyOf(have, have.length + n);
                System.arraycopy(e, 0, grown, have.length, n);
                heldE.put(d, grown);
            }
            per.put(worker, evs);
        }
        return new Workload(per, prefixes);
    }

    /** Chains with removes of middle blocks, re-stores, engine-hash reuse and clears. */
    static Workload mixed(SplittableRandom r, int workers, int opsPerWorker) {
        Map<Worker, List<KvEvent>> per = new HashMap<>();
        long[][] docs = new long[12][];
        List<long[]> queries = new ArrayList<>();
        for (int d = 0; d < docs.length; d++) {
            docs[d] = new long[20 + r.nextInt(60)];
            for (int i = 0; i < docs[d].length; i++) {
                docs[d][i] = i < 2 ? 3 + i : r.nextLong();
            }
            queries.add(docs[d]);
        }
        for (int w = 0; w < workers; w++) {
            Worker worker = Worker.of(1000 + w);
            List<KvEvent> evs = new ArrayList<>();
            for (int k = 0; k < opsPerWorker; k++) {
                int d = r.nextInt(docs.length);
                int kind = r.nextInt(10);
                long base = d * 1_000_000L; // engine hash = base + position: re-stores reuse names
                if (kind < 6) {
                    int start = r.nextInt(4) == 0 ? r.nextInt(docs[d].length) : 0;
                    int n = Math.min(docs[d].length - start, 1 + r.nextInt(12));
                    long[] e = new long[n], l = new long[n];
                    for (int i = 0; i < n; i++) {
                        e[i] = base + start + i;
                        l[i] = docs[d][start + i];
                    }
                    OptionalLong parent = start == 0 ? OptionalLong.empty() : OptionalLong.of(base + start - 1);
                    evs.add(new KvEvent.Stored(worker, parent, e, l));
                } else if (kind < 9) {
                    int p = r.nextInt(docs[d].length);
                    evs.add(new KvEvent.Removed(worker, new long[] {base + p}));
                } else {
                    evs.add(new KvEvent.Cleared(worker));
                }
            }
            per.put(worker, evs);
        }
        return new Workload(per, queries);
    }

    /** Alternates the Java and native read paths across rounds. */
    private static int configs;

    /**
     * Stores whose engine hashes come from a tiny per-worker alphabet, so names keep moving between
     * blocks (docs/SPEC.md section 3 rule 4), including onto descendants and ancestors of the blocks they
     * named, plus clears: the write paths where a careless order lets a reader see a depth the worker
     * never had.
     */
    static Workload renames(SplittableRandom r, int workers, int opsPerWorker) {
        Map<Worker, List<KvEvent>> per = new HashMap<>();
        long[][] docs = new long[6][];
        List<long[]> queries = new ArrayList<>();
        for (int d = 0; d < docs.length; d++) {
            docs[d] = new long[12 + r.nextInt(20)];
            for (int i = 0; i < docs[d].length; i++) {
                docs[d][i] = i < 2 ? 5 + i : r.nextLong();
            }
            queries.add(docs[d]);
        }
        for (int w = 0; w < workers; w++) {
            Worker worker = Worker.of(5000 + w);
            List<KvEvent> evs = new ArrayList<>();
            long[] heldNames = new long[0];
            for (int k = 0; k < opsPerWorker; k++) {
                if (r.nextInt(25) == 0) {
                    evs.add(new KvEvent.Cleared(worker));
                    heldNames = new long[0];
                    continue;
                }
                int d = r.nextInt(docs.length);
                int n = 1 + r.nextInt(Math.min(8, docs[d].length));
                long[] names = new long[n];
                java.util.Set<Long> used = new java.util.HashSet<>();
                for (int i = 0; i < n; i++) {
                    long e;
                    do {
                        e = 1 + r.nextInt(12); // tiny alphabet: names get reused for other blocks all the time
                    } while (!used.add(e));
                    names[i] = e;
                }
                long[] locals = java.util.Arrays.copyOf(docs[d], n);
                OptionalLong parent = OptionalLong.empty();
                if (heldNames.length > 0 && r.nextBoolean()) {
                    long p = heldNames[r.nextInt(heldNames.length)];
                    if (!used.contains(p)) {
                        parent = OptionalLong.of(p);
                    }
                }
                evs.add(new KvEvent.Stored(worker, parent, names, locals));
                heldNames = names;
            }
            per.put(worker, evs);
        }
        return new Workload(per, queries);
    }

    private static IndexConfig config(int jump) {
        Implementation impl = (configs++ & 1) == 0 ? Implementation.NATIVE : Implementation.PORTABLE;
        return IndexConfig.builder()
                .maxWorkers(256)
                .jumpSize(jump)
                .implementation(impl)
                .build();
    }

    /** Applies every worker's events in order to a fresh reference index. */
    private static PrefixIndex reference(Workload wl, IndexConfig cfg) {
        PrefixIndex ref = PrefixIndex.heap(cfg);
        for (var e : wl.perWorker().entrySet()) {
            for (KvEvent ev : e.getValue()) {
                ref.apply(ev);
            }
        }
        return ref;
    }

    /** The worker's depth for {@code q} after each of its events (depth depends on its own events only). */
    private static Map<Worker, int[]> maxDepthEver(Workload wl, IndexConfig cfg) {
        Map<Worker, int[]> out = new HashMap<>();
        for (var e : wl.perWorker().entrySet()) {
            int[] max = new int[wl.queries().size()];
            try (PrefixIndex solo = PrefixIndex.heap(cfg)) {
                for (KvEvent ev : e.getValue()) {
                    solo.apply(ev);
                    for (int qi = 0; qi < max.length; qi++) {
                        max[qi] = Math.max(
                                max[qi], solo.match(wl.queries().get(qi)).depthOf(e.getKey()));
                    }
                }
            }
            out.put(e.getKey(), max);
        }
        return out;
    }

    /** Runs writers (one per group of workers) and readers at once; returns violations seen by readers. */
    private static List<String> runConcurrently(
            OffHeapPrefixIndex ix, Workload wl, int writers, int readers, Map<Worker, int[]> bound, long seed)
            throws InterruptedException {
        List<List<KvEvent>> lanes = new ArrayList<>();
        for (int i = 0; i < writers; i++) {
            lanes.add(new ArrayList<>());
        }
        int li = 0;
        for (var e : wl.perWorker().entrySet()) {
            lanes.get(li++ % writers).addAll(e.getValue()); // one worker's events stay on one writer, in order
        }
        ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
        AtomicBoolean done = new AtomicBoolean();
        AtomicLong matches = new AtomicLong();
        CountDownLatch start = new CountDownLatch(1);
        // Writers begin only once every reader is matching, so reads overlap writes even when the
        // writers would finish a small workload before a reader thread got going.
        CountDownLatch readersMatching = new CountDownLatch(readers);
        List<Thread> threads = new ArrayList<>();
        for (List<KvEvent> lane : lanes) {
            threads.add(new Thread(() -> {
                await(start);
                await(readersMatching);
                for (KvEvent ev : lane) {
                    EventStatus s = ix.apply(ev);
                    if (s == EventStatus.INVALID_INPUT || s == EventStatus.CAPACITY_EXCEEDED) {
                        violations.add("unexpected status " + s + " for " + ev);
                    }
                }
            }));
        }
        for (int rd = 0; rd < readers; rd++) {
            final long rs = seed + rd;
            threads.add(new Thread(() -> {
                SplittableRandom r = new SplittableRandom(rs);
                MatchResult m = new MatchResult();
                boolean matching = false;
                await(start);
                while (!done.get()) {
                    int qi = r.nextInt(wl.queries().size());
                    long[] q = wl.queries().get(qi);
                    int len = 1 + r.nextInt(q.length);
                    ix.match(q, 0, len, m);
                    matches.incrementAndGet();
                    if (!matching) {
                        matching = true;
                        readersMatching.countDown(); // once per reader
                    }
                    for (int i = 0; i < m.size(); i++) {
                        int[] b = bound.get(m.worker(i));
                        if (b == null) {
                            violations.add("unknown worker " + m.worker(i));
                        } else if (m.depth(i) > Math.min(len, b[qi])) {
                            violations.add("worker " + m.worker(i) + " depth " + m.depth(i) + " for query " + qi
                                    + "[0.." + len + ") but never more than " + Math.min(len, b[qi]));
                        }
                    }
                }
            }));
        }
        threads.forEach(Thread::start);
        start.countDown();
        for (int i = 0; i < lanes.size(); i++) {
            threads.get(i).join();
        }
        done.set(true);
        for (Thread t : threads) {
            t.join();
        }
        assertTrue(matches.get() > 0, "readers ran");
        return new ArrayList<>(violations);
    }

    private static void await(CountDownLatch l) {
        try {
            l.await();
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
    }

    private static void assertSameState(PrefixIndex expected, PrefixIndex actual, Workload wl, String where) {
        assertEquals(expected.workers(), actual.workers(), where);
        for (Worker w : expected.workers()) {
            assertEquals(expected.blockCount(w), actual.blockCount(w), where + " blockCount " + w);
        }
        for (long[] q : wl.queries()) {
            assertEquals(expected.match(q).scores(), actual.match(q).scores(), where);
        }
    }

    @Test
    void growOnlyDepthsNeverExceedTheFinalDepthAndTheIndexGrows() throws Exception {
        int rounds = TestScale.iterations(4, 20);
        for (int round = 0; round < rounds; round++) {
            long seed = TestScale.seed();
            String where = TestScale.replay(seed);
            SplittableRandom r = new SplittableRandom(seed);
            Workload wl = growOnly(r, 12 + r.nextInt(60), 150);
            IndexConfig cfg = config(new int[] {1, 2, 8, 64}[r.nextInt(4)]);
            Map<Worker, int[]> bound = maxDepthEver(wl, cfg);
            try (PrefixIndex ref = reference(wl, cfg);
                    OffHeapPrefixIndex ix = new OffHeapPrefixIndex(cfg)) {
                where += ", " + (ix.nativeMatch() ? "native" : "java") + " reads";
                List<String> v = runConcurrently(ix, wl, 3, 2, bound, seed);
                assertTrue(v.isEmpty(), where + ": " + v.subList(0, Math.min(5, v.size())));
                assertTrue(ix.growths() > 0, where + ": the index should have grown during the run");
                assertSameState(ref, ix, wl, where);
            }
        }
    }

    @Test
    void mixedWritesGiveAllowedDepthsAndTheSequentialFinalState() throws Exception {
        int rounds = TestScale.iterations(3, 20);
        for (int round = 0; round < rounds; round++) {
            long seed = TestScale.seed();
            String where = TestScale.replay(seed);
            SplittableRandom r = new SplittableRandom(seed);
            Workload wl = mixed(r, 8 + r.nextInt(70), 400);
            IndexConfig cfg = config(new int[] {1, 2, 8, 64}[r.nextInt(4)]);
            Map<Worker, int[]> bound = maxDepthEver(wl, cfg);
            try (PrefixIndex ref = reference(wl, cfg);
                    OffHeapPrefixIndex ix = new OffHeapPrefixIndex(cfg)) {
                where += ", " + (ix.nativeMatch() ? "native" : "java") + " reads";
                List<String> v = runConcurrently(ix, wl, 2 + r.nextInt(3), 2, bound, seed);
                assertTrue(v.isEmpty(), where + ": " + v.subList(0, Math.min(5, v.size())));
                assertSameState(ref, ix, wl, where);
            }
        }
    }

    @Test
    void theChildTableRebuildsWhileReadersRun() throws Exception {
        int rounds = TestScale.iterations(2, 10);
        for (int round = 0; round < rounds; round++) {
            long seed = TestScale.seed();
            String where = TestScale.replay(seed);
            SplittableRandom r = new SplittableRandom(seed);
            // thousands of distinct short documents: thousands of runs, so the child table must grow
            Workload wl = growOnly(r, 8, 400, 3000, 2, 6);
            IndexConfig cfg = config(4);
            Map<Worker, int[]> bound = maxDepthEver(wl, cfg);
            try (PrefixIndex ref = reference(wl, cfg);
                    OffHeapPrefixIndex ix = new OffHeapPrefixIndex(cfg)) {
                where += ", " + (ix.nativeMatch() ? "native" : "java") + " reads";
                List<String> v = runConcurrently(ix, wl, 2, 2, bound, seed);
                assertTrue(v.isEmpty(), where + ": " + v.subList(0, Math.min(5, v.size())));
                assertTrue(ix.rebuilds() > 0, where + ": the child table should have been rebuilt during the run");
                assertSameState(ref, ix, wl, where);
            }
        }
    }

    @Test
    void renamesAndClearsNeverShowADepthTheWorkerNeverHad() throws Exception {
        int rounds = TestScale.iterations(4, 30);
        for (int round = 0; round < rounds; round++) {
            long seed = TestScale.seed();
            String where = TestScale.replay(seed);
            SplittableRandom r = new SplittableRandom(seed);
            Workload wl = renames(r, 6 + r.nextInt(20), 1500);
            IndexConfig cfg = config(new int[] {1, 2, 4, 8}[r.nextInt(4)]);
            Map<Worker, int[]> bound = maxDepthEver(wl, cfg);
            try (PrefixIndex ref = reference(wl, cfg);
                    OffHeapPrefixIndex ix = new OffHeapPrefixIndex(cfg)) {
                where += ", " + (ix.nativeMatch() ? "native" : "java") + " reads";
                List<String> v = runConcurrently(ix, wl, 2, 2, bound, seed);
                assertTrue(v.isEmpty(), where + ": " + v.subList(0, Math.min(5, v.size())));
                assertSameState(ref, ix, wl, where);
            }
        }
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(
            value = Implementation.class,
            names = {"NATIVE", "PORTABLE"})
    void closeDuringTheRunFailsCallsCleanly(Implementation impl) throws Exception {
        long seed = TestScale.seed();
        SplittableRandom r = new SplittableRandom(seed);
        Workload wl = growOnly(r, 40, 400);
        OffHeapPrefixIndex ix = new OffHeapPrefixIndex(
                config(8).toBuilder().implementation(impl).build());
        AtomicBoolean stop = new AtomicBoolean();
        ConcurrentLinkedQueue<Throwable> unexpected = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>();
        for (var e : wl.perWorker().entrySet()) {
            if (threads.size() >= 3) {
                break;
            }
            threads.add(new Thread(() -> {
                try {
                    for (KvEvent ev : e.getValue()) {
                        ix.apply(ev);
                    }
                } catch (IllegalStateException ex) {
                    if (!"index closed".equals(ex.getMessage())) {
                        unexpected.add(ex);
                    }
                } catch (Throwable t) {
                    unexpected.add(t);
                }
            }));
        }
        for (int rd = 0; rd < 3; rd++) {
            threads.add(new Thread(() -> {
                MatchResult m = new MatchResult();
                SplittableRandom rr = new SplittableRandom(seed);
                int[] tokens = new int[16 * 40];
                try {
                    while (!stop.get()) {
                        ix.match(wl.queries().get(rr.nextInt(wl.queries().size())), 0, 30, m);
                        ix.match(tokens, 0, tokens.length, m);
                    }
                } catch (IllegalStateException ex) {
                    if (!"index closed".equals(ex.getMessage())) {
                        unexpected.add(ex);
                    }
                } catch (Throwable t) {
                    unexpected.add(t);
                }
            }));
        }
        threads.forEach(Thread::start);
        Thread.sleep(30);
        ix.close();
        stop.set(true);
        for (Thread t : threads) {
            t.join(10_000);
        }
        assertTrue(unexpected.isEmpty(), TestScale.replay(seed) + ": " + unexpected);
        for (Runnable call : List.<Runnable>of(
                () -> ix.match(new long[] {1}),
                () -> ix.apply(new KvEvent.Cleared(Worker.of(1))),
                ix::stats,
                () -> ix.blockCount(Worker.of(1)),
                ix::workers,
                () -> ix.match(new int[64]))) {
            try {
                call.run();
                fail("call after close should fail");
            } catch (IllegalStateException ex) {
                assertEquals("index closed", ex.getMessage());
            }
        }
        ix.close(); // idempotent
        assertEquals(0, ix.bytesUsed(), "every off-heap byte is freed after close");
    }

    @Test
    void eventSinkFlushCoversEverySubmitThatReturnedWithManyProducers() throws Exception {
        IndexConfig cfg = config(4);
        try (PrefixIndex ix = PrefixIndex.offHeap(cfg);
                EventSink sink = EventSink.create(ix, 2, null)) {
            int producers = 4;
            ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
            List<Thread> threads = new ArrayList<>();
            for (int p = 0; p < producers; p++) {
                final int producer = p;
                threads.add(new Thread(() -> {
                    long e = 1_000_000L * (producer + 1);
                    for (int round = 0; round < 300; round++) {
                        Worker w = Worker.of(producer * 10 + round % 3);
                        long before = ix.blockCount(w);
                        sink.submit(KvEvent.Stored.root(w, new long[] {e++, e++}, new long[] {e, e + 7}));
                        sink.flush(); // everything this thread submitted is applied now
                        if (ix.blockCount(w) < before + 2) {
                            failures.add("producer " + producer + " round " + round
                                    + ": flush returned before its store was applied");
                        }
                    }
                }));
            }
            threads.forEach(Thread::start);
            for (Thread t : threads) {
                t.join();
            }
            assertTrue(failures.isEmpty(), failures.toString());
        }
    }

    @Test
    void eventSinkAppliesEachWorkersEventsInOrder() {
        for (int threads : new int[] {1, 2, 4}) {
            long seed = TestScale.seed();
            String where = threads + " writers, " + TestScale.replay(seed);
            Workload wl = mixed(new SplittableRandom(seed), 30, 300);
            IndexConfig cfg = config(8);
            List<KvEvent> interleaved = new ArrayList<>();
            Map<Worker, Integer> next = new HashMap<>();
            SplittableRandom r = new SplittableRandom(seed);
            List<Worker> ws = new ArrayList<>(wl.perWorker().keySet());
            int total = wl.perWorker().values().stream().mapToInt(List::size).sum();
            while (interleaved.size() < total) {
                Worker w = ws.get(r.nextInt(ws.size()));
                int i = next.getOrDefault(w, 0);
                if (i < wl.perWorker().get(w).size()) {
                    interleaved.add(wl.perWorker().get(w).get(i));
                    next.put(w, i + 1);
                }
            }
            AtomicLong seen = new AtomicLong();
            try (PrefixIndex ref = reference(wl, cfg);
                    PrefixIndex ix = PrefixIndex.offHeap(cfg);
                    EventSink sink = EventSink.create(ix, threads, (e, s) -> seen.incrementAndGet())) {
                for (KvEvent e : interleaved) {
                    sink.submit(e);
                }
                sink.flush();
                assertEquals(total, sink.applied(), where);
                assertEquals(total, seen.get(), where);
                assertSameState(ref, ix, wl, where);
            }
        }
    }
}
