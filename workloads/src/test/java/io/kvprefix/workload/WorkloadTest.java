package io.kvprefix.workload;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.KvEvent;
import io.kvprefix.Worker;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The simulation behind gen-ops: steps and Dynamo's accounting on a trace worked out by hand. */
class WorkloadTest {
    private static final Worker W0 = Worker.of(0);

    private static long e(long... prefix) {
        return MockEngine.engineHashes(prefix, prefix.length)[prefix.length - 1];
    }

    private static long l(long id) {
        return new LocalHashTable(io.kvprefix.BlockHasher.of(512)).localHash(id);
    }

    /**
     * small.jsonl on one worker with 3 blocks. Full blocks per request: 2, 4, 1, 1, 5.
     * r0 stores [0] [0,1]; r1 hits 2, has room for 1: stores [0,1,3], 1 uncached; r2 hits [0];
     * r3 evicts the leaf [0,1,3], stores [6]; r4 hits 2, evicts [6], stores [0,1,3], 2 uncached.
     */
    @Test
    void smallTraceOnOneTinyWorker() throws Exception {
        Workload w = Workload.load(TraceTest.small(), new Workload.Options(1, 3, 42));
        assertEquals(5, w.size());
        List<WorkloadStep> s = w.steps();
        assertEquals(
                List.of(KvEvent.Stored.root(W0, new long[] {e(0), e(0, 1)}, new long[] {l(0), l(1)})),
                s.get(0).events());
        assertEquals(
                List.of(KvEvent.Stored.after(W0, e(0, 1), new long[] {e(0, 1, 3)}, new long[] {l(3)})),
                s.get(1).events());
        assertEquals(List.of(), s.get(2).events());
        assertEquals(
                List.of(
                        new KvEvent.Removed(W0, new long[] {e(0, 1, 3)}),
                        KvEvent.Stored.root(W0, new long[] {e(6)}, new long[] {l(6)})),
                s.get(3).events());
        assertEquals(
                List.of(
                        new KvEvent.Removed(W0, new long[] {e(6)}),
                        KvEvent.Stored.after(W0, e(0, 1), new long[] {e(0, 1, 3)}, new long[] {l(3)})),
                s.get(4).events());
        assertEquals(new AdmitResult(2, 1, 2, 1, s.get(4).events()), s.get(4).admit());
        // every block is queried, the partial last one too
        assertArrayEquals(
                new long[] {
                    Long.parseUnsignedLong("16456450638077811066"),
                    Long.parseUnsignedLong("10716031498429279048"),
                    Long.parseUnsignedLong("17161484913955091167")
                },
                s.get(0).matchHashes());
        WorkloadTotals t = w.totals();
        assertEquals(5, t.requests());
        assertEquals(6, t.events());
        assertEquals(4, t.storedEvents());
        assertEquals(2, t.removedEvents());
        assertEquals(5, t.storedBlocks());
        assertEquals(2, t.removedBlocks());
        assertEquals(16, t.matchBlocks());
        assertEquals(11, t.ops()); // 5 matches + 6 events
        assertEquals(21, t.blockOps()); // 16 match blocks + 5 stored blocks
        assertEquals(13, t.fullBlocks());
        assertEquals(5, t.cachedBlocks());
        assertEquals(3, t.uncachedBlocks());
    }

    @Test
    void bigCachesStoreEveryNewFullBlockOnce() throws Exception {
        Workload w = Workload.load(TraceTest.small(), new Workload.Options(1, 1000, 1));
        WorkloadTotals t = w.totals();
        // one worker, no evictions: stored = full blocks - prefix hits (2 + 1 + 4)
        assertEquals(13 - 7, t.storedBlocks());
        assertEquals(0, t.removedBlocks());
        assertEquals(4, t.events());
    }

    @Test
    void spreadIsUniformAndSeeded() {
        Trace t = SyntheticTrace.generate(8000, 3);
        Workload a = Workload.load(t, new Workload.Options(16, 2000, 9));
        int[] perWorker = new int[16];
        for (WorkloadStep s : a.steps()) {
            perWorker[(int) s.worker().workerId()]++;
            assertEquals(0, s.worker().dpRank());
        }
        for (int c : perWorker) {
            assertTrue(c > 8000 / 16 * 0.8 && c < 8000 / 16 * 1.2, java.util.Arrays.toString(perWorker));
        }
        Workload b = Workload.load(t, new Workload.Options(16, 2000, 10));
        int same = 0;
        for (int i = 0; i < t.size(); i++) {
            if (a.step(i).worker().equals(b.step(i).worker())) {
                same++;
            }
        }
        assertTrue(same < 8000 / 8, "another seed spreads differently: " + same + " requests on the same worker");
        assertTrue(a.totals().removedBlocks() > 0, "2,000-block caches must evict");
    }
}
