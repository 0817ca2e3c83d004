package io.kvprefix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kvprefix.testing.ThreadAllocation;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The off-heap index's write path allocates nothing in steady state (docs/BENCHMARKS.md section 1):
 * store and remove cycles, each store opening a run that its removal kills (the most allocation a
 * store can cause: a run record, a child-table record, a reclaimed run), run on one thread after a
 * warm-up, allocate well under one small object per cycle. The events themselves are made before.
 */
class EventAllocationTest {
    private static final int CYCLE = 4096;

    @ParameterizedTest
    @ValueSource(ints = {1, 16})
    void storeAndRemoveAllocateNothing(int batch) throws ReflectiveOperationException {
        ThreadAllocation allocation = ThreadAllocation.counter();
        assumeTrue(allocation != null, "needs HotSpot's allocation counter");
        try (PrefixIndex index = PrefixIndex.create(IndexConfig.defaults())) {
            SplittableRandom r = new SplittableRandom(5);
            long name = 1;
            long[] parents = new long[64];
            for (int s = 0; s < parents.length; s++) {
                long[] names = new long[64];
                long[] locals = new long[64];
                for (int i = 0; i < 64; i++) {
                    names[i] = name++;
                    locals[i] = r.nextLong();
                }
                assertEquals(EventStatus.OK, index.apply(KvEvent.Stored.root(Worker.of(s % 4), names, locals)));
                parents[s] = names[63];
            }
            KvEvent.Stored[] stores = new KvEvent.Stored[CYCLE];
            KvEvent.Removed[] removes = new KvEvent.Removed[CYCLE];
            for (int c = 0; c < CYCLE; c++) {
                int s = r.nextInt(parents.length);
                long[] names = new long[batch];
                long[] locals = new long[batch];
                for (int i = 0; i < batch; i++) {
                    names[i] = name++;
                    locals[i] = r.nextLong();
                }
                stores[c] = KvEvent.Stored.after(Worker.of(s % 4), parents[s], names, locals);
                removes[c] = new KvEvent.Removed(Worker.of(s % 4), names.clone());
            }
            for (int k = 0; k < 30 * CYCLE; k++) { // warm-up: the write path compiled
                cycle(index, stores, removes, k);
            }
            long blocks = index.stats().blocks();
            int n = 10 * CYCLE;
            long before = allocation.bytes();
            for (int k = 0; k < n; k++) {
                cycle(index, stores, removes, k);
            }
            long perCycle = (allocation.bytes() - before) / n;
            assertEquals(blocks, index.stats().blocks(), "each cycle leaves the index as it found it");
            assertTrue(perCycle < 8, "a store and remove of " + batch + " block(s) allocated " + perCycle + " bytes");
        }
    }

    private static void cycle(PrefixIndex index, KvEvent.Stored[] stores, KvEvent.Removed[] removes, int k) {
        int c = k & (CYCLE - 1);
        if (index.apply(stores[c]) != EventStatus.OK || index.apply(removes[c]) != EventStatus.OK) {
            throw new AssertionError("cycle " + k + " was refused");
        }
    }
}
