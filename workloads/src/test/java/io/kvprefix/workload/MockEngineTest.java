package io.kvprefix.workload;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.BlockHasher;
import io.kvprefix.KvEvent;
import io.kvprefix.Worker;
import io.kvprefix.testing.TestScale;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The mock engine: hand-checked scenarios, then random request sequences against {@link LruModel}. */
class MockEngineTest {
    private static final int T = 4; // tokens per block in these tests
    private static final BlockHasher H4 = BlockHasher.of(T);
    private static final Worker W = Worker.of(7);

    private static MockEngine engine(int capacity) {
        return new MockEngine(W, capacity, new LocalHashTable(H4));
    }

    /** A request whose ids are all full blocks. */
    private static TraceRequest req(int index, long... ids) {
        return new TraceRequest(index, 0, ids.length * T, 1, ids, 0);
    }

    private static long e(long... prefix) {
        return MockEngine.engineHashes(prefix, prefix.length)[prefix.length - 1];
    }

    private static long l(long id) {
        return H4.localHashes(new int[] {(int) id, (int) id, (int) id, (int) id})[0];
    }

    @Test
    void lruScenarioByHand() {
        MockEngine m = engine(4);
        AdmitResult a = m.admit(req(1, 1, 2, 3));
        assertEquals(
                new AdmitResult(
                        0,
                        3,
                        0,
                        0,
                        List.of(new KvEvent.Stored(
                                W, OptionalLong.empty(), new long[] {e(1), e(1, 2), e(1, 2, 3)}, new long[] {
                                    l(1), l(2), l(3)
                                }))),
                a);
        assertEquals(3, m.blockCount());
        assertEquals(3, m.inUseBlocks());
        m.release(req(1, 1, 2, 3)); // queue, evicted first to last: [1,2,3], [1,2], [1]
        assertEquals(0, m.inUseBlocks());
        m.checkInvariants();

        // hits [1], needs 2 more, 1 slot free: evicts the leaf [1,2,3], not its parents
        AdmitResult b = m.admit(req(2, 1, 5, 6));
        assertEquals(
                new AdmitResult(
                        1,
                        2,
                        0,
                        1,
                        List.of(
                                new KvEvent.Removed(W, new long[] {e(1, 2, 3)}),
                                KvEvent.Stored.after(
                                        W, e(1), new long[] {e(1, 5), e(1, 5, 6)}, new long[] {l(5), l(6)}))),
                b);
        m.release(req(2, 1, 5, 6)); // queue: [1,2], [1,5,6], [1,5], [1]
        m.checkInvariants();

        AdmitResult c = m.admit(req(3, 7, 8, 9, 10));
        assertEquals(
                new AdmitResult(
                        0,
                        4,
                        0,
                        4,
                        List.of(
                                new KvEvent.Removed(W, new long[] {e(1, 2), e(1, 5, 6), e(1, 5), e(1)}),
                                KvEvent.Stored.root(
                                        W,
                                        new long[] {e(7), e(7, 8), e(7, 8, 9), e(7, 8, 9, 10)},
                                        new long[] {l(7), l(8), l(9), l(10)}))),
                c);
        m.release(req(3, 7, 8, 9, 10));
        // a full hit changes nothing and emits nothing
        assertEquals(new AdmitResult(4, 0, 0, 0, List.of()), m.admit(req(4, 7, 8, 9, 10)));
        m.release(req(4, 7, 8, 9, 10));
        assertEquals(9, m.storedTotal());
        assertEquals(5, m.evictedTotal());
        assertEquals(5, m.hitTotal());
        m.checkInvariants();
    }

    @Test
    void touchingAPrefixMakesItRecent() {
        MockEngine m = engine(4);
        m.admit(req(1, 1, 2));
        m.release(req(1, 1, 2)); // queue: [1,2], [1]
        m.admit(req(2, 3, 4));
        m.release(req(2, 3, 4)); // queue: [1,2], [1], [3,4], [3]
        m.admit(req(3, 1, 2)); // touch [1] and [1,2]
        m.release(req(3, 1, 2)); // queue: [3,4], [3], [1,2], [1]
        AdmitResult a = m.admit(req(4, 5, 6));
        assertEquals(
                new KvEvent.Removed(W, new long[] {e(3, 4), e(3)}), a.events().get(0));
        assertEquals(2, m.cachedPrefix(new long[] {1, 2}, 2));
    }

    @Test
    void onlyFullBlocksAreStored() {
        MockEngine m = engine(16);
        // 10 tokens at 4 per block: blocks [1] and [1,2] are full, id 3 covers 2 tokens
        TraceRequest r = new TraceRequest(0, 0, 10, 1, new long[] {1, 2, 3}, 0);
        AdmitResult a = m.admit(r);
        assertEquals(2, a.fullBlocks());
        KvEvent.Stored s = assertInstanceOf(KvEvent.Stored.class, a.events().get(0));
        assertArrayEquals(new long[] {e(1), e(1, 2)}, s.blockHashes());
        assertEquals(2, m.cachedPrefix(new long[] {1, 2, 3}, 3));
        m.release(r);
        // a request shorter than one block stores nothing
        TraceRequest tiny = new TraceRequest(1, 0, 3, 1, new long[] {9}, 0);
        assertEquals(new AdmitResult(0, 0, 0, 0, List.of()), m.admit(tiny));
        m.release(tiny);
        assertEquals(2, m.blockCount());
    }

    @Test
    void whatDoesNotFitIsNotCached() {
        MockEngine m = engine(3);
        AdmitResult big = m.admit(req(0, 1, 2, 3, 4, 5));
        assertEquals(
                new AdmitResult(
                        0, 3, 2, 0, List.of(KvEvent.Stored.root(W, new long[] {e(1), e(1, 2), e(1, 2, 3)}, new long[] {
                            l(1), l(2), l(3)
                        }))),
                big);
        m.release(req(0, 1, 2, 3, 4, 5));
        m.checkInvariants();
        // a running request pins two blocks; the next can use only the third slot
        m.admit(req(1, 1, 2));
        AdmitResult squeezed = m.admit(req(2, 8, 9));
        assertEquals(
                new AdmitResult(
                        0,
                        1,
                        1,
                        1,
                        List.of(
                                new KvEvent.Removed(W, new long[] {e(1, 2, 3)}),
                                KvEvent.Stored.root(W, new long[] {e(8)}, new long[] {l(8)}))),
                squeezed);
        // all three slots pinned: nothing fits, nothing is evicted, no event
        assertEquals(new AdmitResult(0, 0, 2, 0, List.of()), m.admit(req(3, 5, 6)));
        assertEquals(3, m.inUseBlocks());
        assertEquals(3, m.runningRequests());
        m.checkInvariants();
        m.release(req(3, 5, 6));
        m.release(req(2, 8, 9));
        m.release(req(1, 1, 2));
        assertEquals(0, m.inUseBlocks());
        m.checkInvariants();
    }

    @Test
    void requestsAreAdmittedOnceAndReleasedOnce() {
        MockEngine m = engine(8);
        m.admit(req(5, 1));
        var twice = assertThrows(IllegalStateException.class, () -> m.admit(req(5, 2)));
        assertTrue(twice.getMessage().contains("already running"), twice.getMessage());
        m.release(req(5, 1));
        var again = assertThrows(IllegalStateException.class, () -> m.release(req(5, 1)));
        assertTrue(again.getMessage().contains("not running"), again.getMessage());
        assertThrows(IllegalArgumentException.class, () -> engine(0));
    }

    @Test
    void engineHashesAreTheEnginesOwn() {
        long[] ids = {0, 1, 2};
        long[] e = MockEngine.engineHashes(ids, 3);
        BlockHasher h512 = BlockHasher.of(512);
        LocalHashTable t = new LocalHashTable(h512);
        long[] local = t.localHashes(ids);
        long[] chain = h512.chainHashes(local);
        for (int i = 0; i < 3; i++) {
            assertNotEquals(local[i], e[i]);
            assertNotEquals(chain[i], e[i]);
        }
        // position and prefix matter: the same id after another prefix has another name
        assertNotEquals(e(5), e(5, 5));
        assertNotEquals(e(1, 2), e(2));
        assertNotEquals(e(1, 2), e(3, 2));
        assertEquals(3, new HashSet<>(List.of(e[0], e[1], e[2])).size());
    }

    /** Random request sequences, with several running at once, against the model and the event rules. */
    @Test
    void randomSequencesAgreeWithTheModel() {
        long base = TestScale.seed();
        int runs = TestScale.iterations(40, 400);
        for (int run = 0; run < runs; run++) {
            long seed = base + run;
            System.out.println("MockEngineTest.randomSequencesAgreeWithTheModel " + TestScale.replay(seed));
            try {
                randomSequence(seed, TestScale.iterations(400, 2000));
            } catch (AssertionError | RuntimeException ex) {
                throw new AssertionError(TestScale.replay(base) + ", run " + run + ": " + ex.getMessage(), ex);
            }
        }
    }

    private static void randomSequence(long seed, int steps) {
        SplittableRandom rnd = new SplittableRandom(seed);
        int capacity = 1 + rnd.nextInt(24);
        MockEngine engine = engine(capacity);
        LruModel model = new LruModel(capacity);
        List<long[]> history = new ArrayList<>();
        Map<Integer, TraceRequest> running = new HashMap<>();
        long nextId = 0;
        int nextRequest = 0;
        // shadow of what the events say the engine holds
        Map<Long, List<Long>> names = new HashMap<>(); // engine hash -> prefix, from stored events
        Map<Long, Long> parentOf = new HashMap<>(); // held engine hash -> parent engine hash (null for a root)
        Map<Long, Integer> children = new HashMap<>(); // held engine hash -> held children
        Map<Integer, Integer> heldCount = new HashMap<>(); // running request -> blocks it holds (from the model)
        for (int step = 0; step < steps; step++) {
            boolean admit = running.isEmpty() || (running.size() < 4 && rnd.nextInt(10) < 6);
            if (!admit) {
                List<Integer> keys = new ArrayList<>(running.keySet());
                keys.sort(null);
                int k = keys.get(rnd.nextInt(keys.size()));
                TraceRequest r = running.remove(k);
                heldCount.remove(k);
                engine.release(r);
                model.release(k);
            } else {
                long[] ids = newIds(rnd, history, nextId);
                for (long id : ids) {
                    nextId = Math.max(nextId, id + 1);
                }
                history.add(ids);
                int input = ids.length == 0
                        ? 0
                        : rnd.nextBoolean() ? ids.length * T : (ids.length - 1) * T + 1 + rnd.nextInt(T - 1);
                TraceRequest r = new TraceRequest(nextRequest++, step, input, 1, ids, 0);
                int full = r.fullBlocks(T);
                LruModel.Admission want = model.admit(r.index(), ids, full);
                AdmitResult got = engine.admit(r);
                running.put(r.index(), r);
                String where = "step " + step + ", capacity " + capacity + ", request " + r;
                assertEquals(want.cached(), got.cachedBlocks(), where);
                assertEquals(want.stored().size(), got.storedBlocks(), where);
                assertEquals(want.uncached(), got.uncachedBlocks(), where);
                assertEquals(want.evicted().size(), got.evictedBlocks(), where);
                int i = 0;
                if (!want.evicted().isEmpty()) {
                    KvEvent.Removed rm =
                            assertInstanceOf(KvEvent.Removed.class, got.events().get(i++), where);
                    assertEquals(W, rm.worker());
                    List<List<Long>> evicted = new ArrayList<>();
                    for (long h : rm.blockHashes()) {
                        assertTrue(
                                parentOf.containsKey(h),
                                where + ": removed a block not held (never stored, or removed since)");
                        assertEquals(0, children.getOrDefault(h, 0), where + ": evicted a block with cached children");
                        List<Long> p = names.get(h);
                        for (TraceRequest other : running.values()) {
                            int held = heldCount.getOrDefault(
                                    other.index(), want.cached() + want.stored().size());
                            assertFalse(
                                    p.size() <= held
                                            && LruModel.prefix(other.hashIds(), p.size())
                                                    .equals(p),
                                    where + ": evicted a block of running request " + other.index());
                        }
                        evicted.add(p);
                        Long parent = parentOf.remove(h);
                        if (parent != null) {
                            children.merge(parent, -1, Integer::sum);
                        }
                        children.remove(h);
                    }
                    assertEquals(want.evicted(), evicted, where + ": eviction order");
                }
                if (!want.stored().isEmpty()) {
                    KvEvent.Stored st =
                            assertInstanceOf(KvEvent.Stored.class, got.events().get(i++), where);
                    int from = got.cachedBlocks();
                    if (from == 0) {
                        assertTrue(st.parentHash().isEmpty(), where);
                    } else {
                        long parent = st.parentHash().orElseThrow();
                        assertTrue(parentOf.containsKey(parent), where + ": parent not held");
                        assertEquals(LruModel.prefix(ids, from), names.get(parent), where + ": wrong parent");
                    }
                    Long prev = from == 0 ? null : st.parentHash().orElseThrow();
                    for (int b = 0; b < st.size(); b++) {
                        long h = st.blockHashes()[b];
                        assertFalse(parentOf.containsKey(h), where + ": stored a block already held");
                        assertEquals(l(ids[from + b]), st.localHashes()[b], where + ": local hash");
                        List<Long> p = LruModel.prefix(ids, from + b + 1);
                        List<Long> old = names.put(h, p);
                        assertTrue(old == null || old.equals(p), where + ": one engine hash for two prefixes");
                        if (prev != null) {
                            parentOf.put(h, prev);
                            children.merge(prev, 1, Integer::sum);
                        } else {
                            parentOf.put(h, null);
                        }
                        prev = h;
                    }
                    assertEquals(want.stored(), storedPrefixes(st, names), where);
                }
                assertEquals(i, got.events().size(), where + ": extra events");
                heldCount.put(r.index(), want.cached() + want.stored().size());
                // blocks of running requests stay cached
                for (TraceRequest other : running.values()) {
                    assertTrue(
                            engine.cachedPrefix(other.hashIds(), other.fullBlocks(T)) >= heldCount.get(other.index()),
                            where + ": running request " + other.index() + " lost a block");
                }
            }
            engine.checkInvariants();
            assertTrue(engine.blockCount() <= capacity);
            assertEquals(model.size(), engine.blockCount(), "step " + step);
            assertEquals(model.inUse(), engine.inUseBlocks(), "step " + step);
            assertEquals(parentOf.size(), engine.blockCount(), "step " + step + ": events and engine disagree");
        }
        for (TraceRequest r : new ArrayList<>(running.values())) {
            engine.release(r);
        }
        engine.checkInvariants();
        assertEquals(0, engine.inUseBlocks());
    }

    private static List<List<Long>> storedPrefixes(KvEvent.Stored st, Map<Long, List<Long>> names) {
        List<List<Long>> out = new ArrayList<>();
        for (long h : st.blockHashes()) {
            out.add(names.get(h));
        }
        return out;
    }

    /** Mostly a prefix of an earlier request extended by fresh ids, sometimes all fresh, rarely empty. */
    private static long[] newIds(SplittableRandom rnd, List<long[]> history, long nextId) {
        if (rnd.nextInt(50) == 0) {
            return new long[0];
        }
        List<Long> ids = new ArrayList<>();
        if (!history.isEmpty() && rnd.nextInt(10) < 7) {
            long[] base = history.get(rnd.nextInt(history.size()));
            int keep = base.length == 0 ? 0 : 1 + rnd.nextInt(base.length);
            for (int i = 0; i < keep; i++) {
                ids.add(base[i]);
            }
        }
        int fresh = (ids.isEmpty() ? 1 : 0) + rnd.nextInt(6);
        for (int i = 0; i < fresh; i++) {
            ids.add(nextId++);
        }
        return ids.stream().mapToLong(Long::longValue).toArray();
    }
}
