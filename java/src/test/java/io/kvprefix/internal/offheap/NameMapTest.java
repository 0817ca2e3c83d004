package io.kvprefix.internal.offheap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.testing.TestScale;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The segmented name map against a {@link HashMap} on seeded random operations, and under a budget. */
class NameMapTest {

    @Test
    void itAnswersAsAHashMapWhileItsSegmentsDoubleAndSplit() {
        long seed = TestScale.seed();
        SplittableRandom r = new SplittableRandom(seed);
        MemoryPool pool = new MemoryPool(Long.MAX_VALUE);
        NameMap map = NameMap.create(pool, 0);
        assertNotNull(map);
        Map<Long, Integer> ref = new HashMap<>();
        List<Long> keys = new ArrayList<>();
        int ops = TestScale.iterations(100_000, 1_000_000);
        for (int op = 0; op < ops; op++) {
            int kind = r.nextInt(10);
            if (kind < 6 || keys.isEmpty()) { // a store of 1..24 names, some already known
                int n = 1 + r.nextInt(24);
                long[] batch = new long[n];
                for (int i = 0; i < n; i++) {
                    batch[i] = !keys.isEmpty() && r.nextInt(5) == 0 ? keys.get(r.nextInt(keys.size())) : r.nextLong();
                }
                assertTrue(map.ensureRoomFor(batch, n), TestScale.replay(seed));
                boolean claims = r.nextBoolean(); // as a store does: claim every record, then fill (or give back)
                boolean giveBack = claims && r.nextInt(8) == 0;
                long[] records = new long[n];
                int[] olds = new int[n];
                for (int i = 0; i < n && claims; i++) {
                    olds[i] = map.claim(batch[i]) - 1;
                    records[i] = map.claimed();
                }
                for (int i = n - 1; i >= 0 && giveBack; i--) {
                    map.unclaim(batch[i], olds[i]);
                }
                for (int i = 0; i < n && !giveBack; i++) {
                    int block = r.nextInt(1 << 30);
                    Integer before = ref.put(batch[i], block);
                    if (before == null) {
                        keys.add(batch[i]);
                    }
                    if (claims) {
                        map.setAt(records[i], block);
                    } else {
                        assertEquals(before == null ? -1 : before, map.put(batch[i], block), TestScale.replay(seed));
                    }
                }
            } else if (kind < 9) {
                int at = r.nextInt(keys.size());
                long k = keys.get(at);
                keys.set(at, keys.get(keys.size() - 1));
                keys.remove(keys.size() - 1);
                assertEquals(ref.remove(k), Integer.valueOf(map.remove(k)), TestScale.replay(seed));
            } else {
                long k = r.nextInt(2) == 0 && !keys.isEmpty() ? keys.get(r.nextInt(keys.size())) : r.nextLong();
                assertEquals(ref.getOrDefault(k, -1), map.get(k), TestScale.replay(seed));
            }
        }
        assertEquals(ref.size(), map.size());
        assertTrue(map.capacity() > NameMap.MAX_SEGMENT, "split at least once: " + map.capacity());
        for (Map.Entry<Long, Integer> e : ref.entrySet()) {
            assertEquals(e.getValue(), map.get(e.getKey()));
        }
        int[] blocks = new int[map.size()];
        assertEquals(ref.size(), map.blocks(blocks));
        int[] want = ref.values().stream().mapToInt(Integer::intValue).sorted().toArray();
        Arrays.sort(blocks);
        assertTrue(Arrays.equals(want, blocks));
        // segments between 53% and 80% full (60% after a split): at most about 23 bytes a name
        assertTrue(map.bytes() <= 23.0 * map.size() + 12L * NameMap.MAX_SEGMENT * 2, map.bytes() + " bytes");
        map.clear();
        assertEquals(0, map.size());
        assertEquals(-1, map.get(keys.get(0)));
        map.free();
    }

    @Test
    void aTaggedMapKeepsEveryTagThroughGrowthSplitsAndRemovals() {
        long seed = TestScale.seed();
        SplittableRandom r = new SplittableRandom(seed);
        MemoryPool pool = new MemoryPool(Long.MAX_VALUE);
        NameMap map = NameMap.create(pool, 0, true);
        Map<Long, Integer> tags = new HashMap<>();
        List<Long> keys = new ArrayList<>();
        for (int op = 0; op < 60_000; op++) {
            if (keys.isEmpty() || r.nextInt(4) != 0) { // a new name, tagged as the any-tier view does
                long[] k = {r.nextLong()};
                assertTrue(map.ensureRoomFor(k, 1), TestScale.replay(seed));
                map.put(k[0], op);
                int tag = 1 + r.nextInt(7);
                map.setTag(k[0], tag);
                tags.put(k[0], tag);
                keys.add(k[0]);
            } else { // a removal shifts later records of the probe run back: their tags must move with them
                int at = r.nextInt(keys.size());
                long k = keys.get(at);
                keys.set(at, keys.get(keys.size() - 1));
                keys.remove(keys.size() - 1);
                map.remove(k);
                tags.remove(k);
                assertEquals(0, map.tag(k), TestScale.replay(seed));
            }
        }
        assertTrue(map.capacity() > NameMap.MAX_SEGMENT, "split at least once: " + map.capacity());
        for (Map.Entry<Long, Integer> e : tags.entrySet()) {
            assertEquals(e.getValue().intValue(), map.tag(e.getKey()), TestScale.replay(seed));
        }
        long[] k = {keys.get(0)};
        map.put(k[0], 5); // a name it holds keeps its tag when its block changes
        assertEquals(tags.get(k[0]).intValue(), map.tag(k[0]));
        int[] seen = {0};
        map.forEach((name, block) -> seen[0]++);
        assertEquals(tags.size(), seen[0]);
        map.free();
        assertEquals(0, pool.used());
    }

    @Test
    void aMapMadeForManyNamesHasTheirSegmentsAtOnce() {
        MemoryPool pool = new MemoryPool(Long.MAX_VALUE);
        NameMap map = NameMap.create(pool, 100_000);
        long before = pool.used();
        long[] keys = new SplittableRandom(TestScale.seed()).longs(100_000).toArray();
        assertTrue(map.ensureRoomFor(keys, keys.length));
        assertEquals(before, pool.used(), "no segment had to grow");
        for (int i = 0; i < keys.length; i++) {
            map.put(keys[i], i);
        }
        assertEquals(keys.length, map.size());
        assertEquals(77, map.get(keys[77]));
        map.free();
        assertEquals(0, pool.used());
    }

    @Test
    void underABudgetARefusedRoomLeavesTheNamesAndTheLastSegmentsAreUsed() {
        long budget = 4L << 20;
        MemoryPool pool = new MemoryPool(budget);
        NameMap map = NameMap.create(pool, 0);
        assertNotNull(map);
        SplittableRandom r = new SplittableRandom(TestScale.seed());
        Map<Long, Integer> ref = new HashMap<>();
        long[] batch = new long[16];
        while (true) {
            for (int i = 0; i < batch.length; i++) {
                batch[i] = r.nextLong();
            }
            if (!map.ensureRoomFor(batch, batch.length)) {
                break;
            }
            for (long k : batch) {
                int v = ref.size();
                map.put(k, v);
                ref.put(k, v);
            }
        }
        // refused: every name is still there, and the budget is nearly all used
        assertEquals(ref.size(), map.size());
        for (Map.Entry<Long, Integer> e : ref.entrySet()) {
            assertEquals(e.getValue().intValue(), map.get(e.getKey()));
        }
        assertTrue(pool.used() > 0.9 * budget, "only " + pool.used() + " of " + budget + " bytes used");
        assertFalse(map.ensureRoomFor(batch, batch.length));
        // names it holds already need no room
        long[] known =
                ref.keySet().stream().limit(16).mapToLong(Long::longValue).toArray();
        assertTrue(map.ensureRoomFor(known, known.length));
        map.free();
        assertEquals(0, pool.used());
    }
}
