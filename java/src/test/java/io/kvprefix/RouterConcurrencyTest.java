package io.kvprefix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.testing.TestScale;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Many threads route and release at once while events arrive and workers come and go; afterwards the
 * load the router reports equals the load of the decisions still open, and once those are released
 * every worker's load is back to zero.
 */
class RouterConcurrencyTest {
    private static final int BLOCK = 16;
    private static final int STABLE = 6; // workers 1..6 stay registered
    private static final Worker CHURN = Worker.of(7); // removed and re-added all the time
    private static final Worker HEAVY = Worker.of(8, 3); // added with weight 2, removed again

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"events", "events+predicted, temperature 0.5", "predicted, spread misses"})
    void loadIsConsistentUnderConcurrentRoutingAndReleasing(String mode) throws Exception {
        long seed = TestScale.seed();
        int perThread = TestScale.iterations(2_500, 25_000);
        int routers = 3;
        int[][] prompts = new int[24][];
        SplittableRandom setup = new SplittableRandom(seed);
        for (int p = 0; p < prompts.length; p++) {
            int shared = p % 4; // four families sharing a system prompt
            prompts[p] = new int[BLOCK * (2 + setup.nextInt(14)) + setup.nextInt(BLOCK)];
            for (int i = 0; i < prompts[p].length; i++) {
                prompts[p][i] = i < 2 * BLOCK ? shared * 100_000 + i : p * 100_000 + i;
            }
        }
        try (PrefixIndex index =
                PrefixIndex.create(IndexConfig.builder().blockSize(BLOCK).build())) {
            Router.Builder b = Router.builder();
            if (!mode.equals("predicted, spread misses")) {
                b.index(index);
            } else {
                b.indexConfig(index.config()).spreadMisses(true);
            }
            if (mode.contains("+predicted")) {
                b.predicted(true).predictedMaxBlocks(300).temperature(0.5).seed(seed);
            } else if (mode.startsWith("predicted")) {
                b.predicted(true).predictedMaxBlocks(500);
            }
            for (int w = 1; w <= STABLE; w++) {
                b.worker(Worker.of(w));
            }
            Router router = b.build();
            ConcurrentLinkedQueue<RoutingDecision> handoff = new ConcurrentLinkedQueue<>();
            List<RoutingDecision> kept = new ArrayList<>();
            List<Throwable> errors = new ArrayList<>();
            AtomicBoolean stop = new AtomicBoolean();
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();

            for (int t = 0; t < routers; t++) {
                long s = seed + t;
                threads.add(new Thread(guard(errors, start, () -> {
                    SplittableRandom rnd = new SplittableRandom(s);
                    List<RoutingDecision> mine = new ArrayList<>();
                    for (int i = 0; i < perThread; i++) {
                        RoutingDecision d = router.route(prompts[rnd.nextInt(prompts.length)]);
                        switch (rnd.nextInt(5)) {
                            case 0 -> {
                                d.prefillFinished();
                                d.finished();
                            }
                            case 1 -> {
                                d.finished();
                                d.finished();
                                d.prefillFinished();
                            }
                            case 2 -> {
                                d.prefillFinished();
                                handoff.add(d);
                            }
                            case 3 -> {
                                handoff.add(d);
                                handoff.add(d);
                            } // released twice, by others
                            default -> {
                                if (rnd.nextInt(50) == 0) mine.add(d);
                                else handoff.add(d);
                            }
                        }
                    }
                    synchronized (kept) {
                        kept.addAll(mine);
                    }
                })));
            }
            // finishers: release what the routers hand off, racing each other on the same decisions
            for (int t = 0; t < 2; t++) {
                threads.add(new Thread(guard(errors, start, () -> {
                    while (!stop.get() || !handoff.isEmpty()) {
                        RoutingDecision d = handoff.poll();
                        if (d == null) {
                            Thread.onSpinWait();
                            continue;
                        }
                        d.prefillFinished();
                        d.finished();
                    }
                })));
            }
            // engine events for the event-fed index: one writer, as the index requires per worker
            Thread events = new Thread(guard(errors, start, () -> {
                SplittableRandom rnd = new SplittableRandom(seed ^ 0x5EED);
                BlockHasher h = index.hasher();
                while (!stop.get()) {
                    Worker w = Worker.of(1 + rnd.nextInt(STABLE + 1));
                    int[] p = prompts[rnd.nextInt(prompts.length)];
                    long[] local = h.localHashes(p);
                    index.apply(KvEvent.Stored.root(w, h.chainHashes(local), local));
                    if (rnd.nextInt(4) == 0) {
                        index.apply(new KvEvent.Cleared(w));
                    }
                }
            }));
            // membership churn
            Thread churn = new Thread(guard(errors, start, () -> {
                while (!stop.get()) {
                    router.addWorker(CHURN);
                    router.addWorker(HEAVY, 2.0);
                    Thread.yield();
                    router.removeWorker(CHURN);
                    router.removeWorker(HEAVY);
                }
                router.addWorker(CHURN);
            }));
            for (Thread t : threads) {
                t.start();
            }
            events.start();
            churn.start();
            start.countDown();
            for (int t = 0; t < routers; t++) {
                threads.get(t).join();
            }
            stop.set(true);
            for (Thread t : threads) {
                t.join();
            }
            events.join();
            churn.join();
            assertTrue(errors.isEmpty(), () -> "failures with " + TestScale.replay(seed) + ": " + errors);

            // the decisions still open are exactly the reported load (for the workers never removed)
            Map<Worker, long[]> open = new HashMap<>();
            for (RoutingDecision d : kept) {
                long[] l = open.computeIfAbsent(d.worker(), w -> new long[3]);
                l[0] += d.prefillTokens();
                l[1] += d.decodeBlocks();
                l[2]++;
            }
            for (int w = 1; w <= STABLE; w++) {
                Worker worker = Worker.of(w);
                long[] l = open.getOrDefault(worker, new long[3]);
                assertEquals(l[0], router.activePrefillTokens(worker), "prefill of " + worker);
                assertEquals(l[1], router.activeDecodeBlocks(worker), "decode of " + worker);
                assertEquals(l[2], router.activeRequests(worker), "requests of " + worker);
            }
            for (RoutingDecision d : kept) {
                d.finished();
            }
            for (Worker w : router.workers()) {
                assertEquals(0, router.activePrefillTokens(w), "prefill of " + w);
                assertEquals(0, router.activeDecodeBlocks(w), "decode of " + w);
                assertEquals(0, router.activeRequests(w), "requests of " + w);
            }
            assertEquals(STABLE + 1, router.workers().size());
            if (router.isPredicted()) {
                long bound = mode.contains("+predicted") ? 300 : 500;
                assertTrue(router.predictedBlocks() <= bound, router.predictedBlocks() + " > " + bound);
                assertTrue(router.predictedBlocks() > 0);
            }
            router.close();
        }
    }

    private static Runnable guard(List<Throwable> errors, CountDownLatch start, ThrowingRunnable body) {
        return () -> {
            try {
                start.await();
                body.run();
            } catch (Throwable e) {
                synchronized (errors) {
                    errors.add(e);
                }
            }
        };
    }

    private interface ThrowingRunnable {
        void run() throws Exception;
    }
}
