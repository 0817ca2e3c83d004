package io.kvprefix.internal.offheap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.Worker;
import io.kvprefix.testing.OracleIndex;
import io.kvprefix.testing.TestScale;
import it.unimi.dsi.fastutil.longs.LongArrayList;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The off-heap index under a memory budget, against the oracle on seeded random streams: every
 * event it refuses ({@code capacity_exceeded}) must have changed nothing, so the oracle, which skips
 * exactly those events, must answer every other event and every match the same; and the budget must
 * be nearly full (at least 85%) before the first refusal. Streams with few workers (one name map
 * holds most of the memory) and with evictions (memory is given back and used again) are included.
 */
class MemoryBudgetTest {
    /** One held chain: its names and local hashes in order, so a store can continue it and a match ask for it. */
    private record Chain(LongArrayList names, LongArrayList locals) {
        Chain() {
            this(new LongArrayList(), new LongArrayList());
        }
    }

    /** A worker's held chains. */
    private static final class Held {
        final List<Chain> chains = new ArrayList<>();
    }

    @ParameterizedTest(name = "{0} workers, {1} KiB, evictions {2}")
    @CsvSource({"1, 256, false", "1, 512, true", "3, 512, false", "4, 512, true", "16, 1024, true"})
    void refusedStoresChangeNothingAndTheBudgetFillsFirst(int workers, int budgetKiB, boolean evict) {
        long seed = TestScale.seed() ^ (workers * 31L + budgetKiB);
        String why = workers + " workers, " + budgetKiB + " KiB, evictions " + evict + ", " + TestScale.replay(seed);
        SplittableRandom r = new SplittableRandom(seed);
        long budget = budgetKiB * 1024L;
        IndexConfig cfg = IndexConfig.builder().memoryBudgetBytes(budget).build();
        try (OffHeapPrefixIndex index = new OffHeapPrefixIndex(cfg);
                OracleIndex oracle = new OracleIndex(IndexConfig.defaults())) {
            Map<Worker, Held> held = new HashMap<>();
            // local hashes: chains starting at multiples of 8 of a small pool, so workers share runs and a
            // run's holders outgrow its inline entries (entry chunks are allocated under the budget too)
            long[] pool = new long[1024];
            for (int i = 0; i < pool.length; i++) {
                pool[i] = r.nextLong();
            }
            long refused = 0;
            double fillAtFirstRefusal = -1;
            long next = 1;
            int ops = TestScale.iterations(8_000, 60_000);
            List<Chain> all = new ArrayList<>();
            for (int op = 0; op < ops || (refused == 0 && op < 5 * ops); op++) { // on past the first refusal
                Worker w = Worker.of(1 + r.nextInt(workers));
                Held h = held.computeIfAbsent(w, k -> new Held());
                KvEvent e;
                if (evict && !h.chains.isEmpty() && r.nextInt(3) == 0) {
                    Chain c = h.chains.get(r.nextInt(h.chains.size()));
                    int k = 1 + r.nextInt(Math.min(8, c.names().size()));
                    long[] tail = new long[k]; // the deepest blocks, as an engine evicts
                    for (int t = 0; t < k; t++) {
                        tail[t] = c.names().removeLong(c.names().size() - 1);
                        c.locals().removeLong(c.locals().size() - 1);
                    }
                    if (c.names().isEmpty()) {
                        h.chains.remove(c);
                    }
                    e = new KvEvent.Removed(w, tail);
                } else if (r.nextInt(400) == 0) {
                    h.chains.clear();
                    e = new KvEvent.Cleared(w);
                } else {
                    boolean extend = !h.chains.isEmpty() && r.nextInt(3) > 0;
                    Chain c = extend ? h.chains.get(r.nextInt(h.chains.size())) : new Chain();
                    int n = 1 + r.nextInt(r.nextInt(10) == 0 ? 200 : 24);
                    long[] names = new long[n];
                    long[] locals = new long[n];
                    int start = 8 * r.nextInt((pool.length - n) / 8);
                    for (int t = 0; t < n; t++) {
                        names[t] = next++;
                        locals[t] = pool[start + t];
                    }
                    OptionalLong parent = c.names().isEmpty()
                            ? OptionalLong.empty()
                            : OptionalLong.of(c.names().getLong(c.names().size() - 1));
                    e = new KvEvent.Stored(w, parent, names, locals);
                    EventStatus got = index.apply(e);
                    if (got == EventStatus.CAPACITY_EXCEEDED) {
                        refused++;
                        if (fillAtFirstRefusal < 0) {
                            fillAtFirstRefusal = index.bytesUsed() / (double) budget;
                        }
                        continue; // changed nothing: the oracle skips it too
                    }
                    assertEquals(oracle.apply(e), got, "op " + op + " " + why);
                    if (got == EventStatus.OK) {
                        c.names().addElements(c.names().size(), names);
                        c.locals().addElements(c.locals().size(), locals);
                        if (!extend) {
                            h.chains.add(c);
                            all.add(c);
                        }
                    }
                    check(index, oracle, all, r, op, why);
                    continue;
                }
                assertEquals(oracle.apply(e), index.apply(e), "op " + op + " " + why);
                assertTrue(index.bytesUsed() <= budget, "over the budget at op " + op + " " + why);
            }
            assertTrue(refused > 0, "the budget was never reached: make the stream longer " + why);
            assertTrue(
                    fillAtFirstRefusal >= 0.85,
                    "the first refusal came with " + Math.round(fillAtFirstRefusal * 100) + "% of the budget used "
                            + why);
            for (int k = 0; k < 500; k++) {
                check(index, oracle, all, r, -1, why);
            }
            for (Worker w : oracle.workers()) {
                assertEquals(oracle.blockCount(w), index.blockCount(w), w + " " + why);
            }
        }
    }

    /**
     * A worker joining a run two others hold needs an entry chunk; with no memory for one (the pool
     * full, the arena's chunks and carving room used up, only run records free, so the store passes
     * its headroom check) the store must be refused whole: the worker holds nothing more and the
     * others' depths are unchanged.
     */
    @Test
    void aStoreThatRunsOutOfMemoryForAnEntryHalfWayChangesNothing() {
        IndexConfig cfg = IndexConfig.builder().memoryBudgetBytes(256 << 10).build();
        try (OffHeapPrefixIndex index = new OffHeapPrefixIndex(cfg)) {
            long[] locals = {11, 12, 13, 14, 15, 16, 17, 18};
            Worker a = Worker.of(1);
            Worker b = Worker.of(2);
            Worker c = Worker.of(3);
            assertEquals(
                    EventStatus.OK, index.apply(new KvEvent.Stored(a, OptionalLong.empty(), names(100, 8), locals)));
            assertEquals(
                    EventStatus.OK, index.apply(new KvEvent.Stored(b, OptionalLong.empty(), names(200, 8), locals)));
            assertEquals(
                    EventStatus.OK,
                    index.apply(new KvEvent.Stored(c, OptionalLong.empty(), names(300, 1), new long[] {99})));
            RunArena arena = index.arena();
            List<long[]> given = new ArrayList<>();
            for (int i = 0; i < 40; i++) { // run records in the free lists: the headroom check passes on them
                int run = arena.allocateRun(4);
                given.add(new long[] {run, arena.address(run)});
            }
            for (long[] g : given) {
                arena.recycleRun((int) g[0], g[1]);
            }
            MemoryPool pool = index.pool();
            for (long size = 1 << 16; size >= 64; size /= 2) { // the rest of the budget, held here
                while (pool.allocate(size) != null) {
                    // kept until the index closes
                }
            }
            while (arena.allocateChunk(8) != 0) {
                // no chunk left to carve
            }
            EventStatus s = index.apply(new KvEvent.Stored(c, OptionalLong.empty(), names(400, 8), locals));
            assertEquals(EventStatus.CAPACITY_EXCEEDED, s);
            assertEquals(1, index.blockCount(c));
            MatchResult m = new MatchResult();
            index.match(locals, 0, locals.length, m);
            assertEquals(8, m.depthOf(a));
            assertEquals(8, m.depthOf(b));
            assertEquals(0, m.depthOf(c));
            assertEquals(EventStatus.OK, index.apply(new KvEvent.Removed(c, names(300, 1))));
            assertEquals(0, index.blockCount(c));
        }
    }

    private static long[] names(long from, int n) {
        long[] out = new long[n];
        for (int i = 0; i < n; i++) {
            out[i] = from + i;
        }
        return out;
    }

    /** A match of a chain stored at some time (held, evicted or cleared since, or a prefix of it): the same depths from both. */
    private static void check(
            OffHeapPrefixIndex index, OracleIndex oracle, List<Chain> all, SplittableRandom r, int op, String why) {
        if (all.isEmpty()) {
            return;
        }
        long[] q = all.get(r.nextInt(all.size())).locals().toLongArray();
        if (q.length == 0) {
            return;
        }
        int len = 1 + r.nextInt(q.length);
        MatchResult got = new MatchResult();
        MatchResult want = new MatchResult();
        index.match(q, 0, len, got);
        oracle.match(q, 0, len, want);
        assertEquals(want.scores(), got.scores(), "match after op " + op + " " + why);
    }
}
