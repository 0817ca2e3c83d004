package io.kvprefix.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.BlockHasher;
import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.Medium;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.testing.TestScale;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The mock engine's CPU tier (a victim cache of the GPU LRU) and the events it sends for it. */
class MockEngineTiersTest {
    private static final int T = 4;
    private static final BlockHasher H4 = BlockHasher.of(T);
    private static final Worker W = Worker.of(3);

    private static TraceRequest req(int index, long... ids) {
        return new TraceRequest(index, 0, ids.length * T, 1, ids, 0);
    }

    @Test
    void evictedBlocksMoveToTheCpuAndComeBack() {
        MockEngine m = new MockEngine(W, 2, 4, new LocalHashTable(H4));
        m.admit(req(1, 1, 2));
        m.release(req(1, 1, 2));
        AdmitResult b = m.admit(req(2, 8, 9)); // evicts 2 then 1 (tail first): both go to the CPU
        assertInstanceOf(KvEvent.Copied.class, b.events().get(0));
        assertEquals(Medium.CPU, ((KvEvent.Copied) b.events().get(0)).medium());
        assertInstanceOf(KvEvent.Removed.class, b.events().get(1));
        assertEquals(2, m.cpuBlockCount());
        m.release(req(2, 8, 9));
        AdmitResult c = m.admit(req(3, 1, 2));
        assertEquals(0, c.cachedBlocks());
        assertEquals(2, c.lowerTierBlocks(), "loaded back from the CPU, not computed");
        assertEquals(2, c.storedBlocks());
        m.checkInvariants();
    }

    /** Random admissions: an index fed the engine's events answers the engine's own GPU and any-tier prefixes. */
    @Test
    void anIndexFedItsEventsKnowsBothTiers() {
        long seed = TestScale.seed();
        SplittableRandom rnd = new SplittableRandom(seed);
        MockEngine m = new MockEngine(W, 12, 20, new LocalHashTable(H4));
        try (PrefixIndex index =
                PrefixIndex.create(IndexConfig.builder().blockSize(T).build())) {
            for (int r = 0; r < 600; r++) {
                long[] ids = new long[1 + rnd.nextInt(6)];
                for (int i = 0; i < ids.length; i++) {
                    ids[i] = rnd.nextInt(4) == 0 ? rnd.nextInt(40) : i * 7 + rnd.nextInt(3);
                }
                TraceRequest q = req(r, ids);
                for (KvEvent e : m.admit(q).events()) {
                    assertEquals(EventStatus.OK, index.apply(e), e + " " + TestScale.replay(seed));
                }
                m.release(q);
                m.checkInvariants();
                int[] tokens = new int[ids.length * T];
                for (int i = 0; i < tokens.length; i++) {
                    tokens[i] = (int) ids[i / T];
                }
                MatchResult res = new MatchResult();
                index.match(tokens, 0, tokens.length, res);
                assertEquals(m.cachedPrefix(ids, ids.length), res.depthOf(W), TestScale.replay(seed));
                assertEquals(m.cachedPrefixAnyTier(ids, ids.length), res.anyTierDepthOf(W), TestScale.replay(seed));
            }
            assertTrue(m.lowerTierTotal() > 0, "the CPU tier was used");
        }
    }

    @Test
    void withoutACpuTierNothingChanges() {
        MockEngine m = new MockEngine(W, 2, new LocalHashTable(H4));
        m.admit(req(1, 1, 2));
        m.release(req(1, 1, 2));
        AdmitResult b = m.admit(req(2, 8, 9));
        assertEquals(
                List.of(KvEvent.Removed.class, KvEvent.Stored.class),
                b.events().stream().map(Object::getClass).toList());
        assertEquals(0, b.lowerTierBlocks());
    }
}
