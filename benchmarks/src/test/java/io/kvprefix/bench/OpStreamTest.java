package io.kvprefix.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kvprefix.KvEvent;
import io.kvprefix.Worker;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What an op stream says about its size: the stored total, and the most pairs held at once. */
class OpStreamTest {
    private static KvEvent.Stored store(long worker, long first, int n) {
        long[] names = new long[n];
        long[] locals = new long[n];
        for (int i = 0; i < n; i++) {
            names[i] = first + i;
            locals[i] = 1000 + first + i;
        }
        return KvEvent.Stored.root(Worker.of(worker), names, locals);
    }

    @Test
    void thePeakCountsStoresAndRemovalsAsTheyComeAndClearsEmptyAWorker() {
        List<Object> ops = new ArrayList<>();
        ops.add(store(1, 1, 10)); // 10
        ops.add(store(2, 100, 5)); // 15
        ops.add(new KvEvent.Removed(Worker.of(1), new long[] {1, 2, 3, 4})); // 11
        ops.add(new long[] {1, 2}); // a match changes nothing
        ops.add(store(1, 20, 3)); // 14
        ops.add(new KvEvent.Removed(Worker.of(2), new long[] {100, 101, 102, 103, 104, 105, 106})); // 9: not below 0
        ops.add(new KvEvent.Cleared(Worker.of(1))); // 0
        ops.add(store(1, 30, 12)); // 12
        ops.add(store(3, 50, 4)); // 16: the peak
        ops.add(new KvEvent.RemoveWorker(3)); // 12
        OpStream s = OpStream.of("t", ops, null);
        assertEquals(10 + 5 + 3 + 12 + 4, s.storedBlocks());
        assertEquals(16, s.peakLiveBlocks());
    }
}
