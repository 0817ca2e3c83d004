package io.kvprefix;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * How an {@link EventSink} spreads worker ids over its writers: balanced by the number of workers
 * (a hash of sixteen consecutive ids gave nine and seven), sticky, and the same answer for every
 * producer that races on a new id.
 */
class EventSinkTest {

    private static int[] workersPerLane(EventSink sink, long[] ids) {
        int[] n = new int[sink.threads()];
        for (long id : ids) {
            n[sink.laneOf(id)]++;
        }
        return n;
    }

    @Test
    void consecutiveWorkerIdsSplitEvenlyAndStay() {
        long[] ids = new long[16];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = i;
        }
        try (PrefixIndex ix = PrefixIndex.heap(IndexConfig.defaults())) {
            for (int writers : new int[] {2, 3, 4, 8}) {
                try (EventSink sink = EventSink.create(ix, writers, null)) {
                    int[] n = workersPerLane(sink, ids);
                    int min = java.util.Arrays.stream(n).min().orElseThrow();
                    int max = java.util.Arrays.stream(n).max().orElseThrow();
                    assertTrue(max - min <= 1, writers + " writers: " + java.util.Arrays.toString(n));
                    for (int i = 0; i < ids.length; i++) {
                        assertEquals(i % writers, sink.laneOf(ids[i]), "first come, round robin, then sticky");
                    }
                }
            }
        }
    }

    @Test
    void randomWorkerIdsSplitEvenlyWhateverTheirBits() {
        SplittableRandom r = new SplittableRandom(13);
        long[] ids = new long[1000];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = r.nextLong() << 12; // low bits all zero, as ids built from a shifted counter may be
        }
        try (PrefixIndex ix = PrefixIndex.heap(IndexConfig.defaults());
                EventSink sink = EventSink.create(ix, 4, null)) {
            assertArrayEquals(new int[] {250, 250, 250, 250}, workersPerLane(sink, ids));
        }
    }

    @Test
    void producersRacingOnNewWorkersAgreeOnTheirLanes() throws Exception {
        try (PrefixIndex ix = PrefixIndex.heap(IndexConfig.defaults());
                EventSink sink = EventSink.create(ix, 3, null)) {
            int producers = 4;
            ConcurrentHashMap<Long, Integer> seen = new ConcurrentHashMap<>();
            List<String> failures = java.util.Collections.synchronizedList(new ArrayList<>());
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            for (int p = 0; p < producers; p++) {
                threads.add(new Thread(() -> {
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                    for (long id = 0; id < 5000; id++) { // the table grows several times meanwhile
                        int lane = sink.laneOf(id * 7919);
                        Integer before = seen.putIfAbsent(id, lane);
                        if (before != null && before != lane) {
                            failures.add("worker " + id + ": lane " + before + " and " + lane);
                        }
                    }
                }));
            }
            threads.forEach(Thread::start);
            go.countDown();
            for (Thread t : threads) {
                t.join();
            }
            assertTrue(failures.isEmpty(), failures.toString());
            int[] n = new int[3];
            for (long id = 0; id < 5000; id++) {
                n[sink.laneOf(id * 7919)]++;
            }
            assertArrayEquals(new int[] {1667, 1667, 1666}, n);
        }
    }
}
