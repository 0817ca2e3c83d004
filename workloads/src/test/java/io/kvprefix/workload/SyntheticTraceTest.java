package io.kvprefix.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The built-in workload: deterministic, and shaped like a chat trace in the Mooncake model. */
class SyntheticTraceTest {
    private static final int N = 3000;

    @Test
    void sameSeedSameTraceOtherSeedOtherTrace() {
        Trace a = SyntheticTrace.generate(N, 5);
        Trace b = SyntheticTrace.generate(N, 5);
        assertEquals(a.requests(), b.requests());
        assertNotEquals(a.requests(), SyntheticTrace.generate(N, 6).requests());
        assertEquals(512, a.tokensPerBlock());
        assertThrows(IllegalArgumentException.class, () -> SyntheticTrace.generate(0, 5));
        assertEquals(1, SyntheticTrace.generate(1, 5).size());
    }

    @Test
    void hasTheMooncakeFormatProperties() {
        Trace t = SyntheticTrace.generate(N, 42);
        assertEquals(N, t.size());
        Map<Long, Integer> position = new HashMap<>();
        Map<Long, Integer> uses = new HashMap<>();
        long nextNew = 0;
        long last = 0;
        for (TraceRequest r : t.requests()) {
            assertTrue(r.timestampMs() >= last);
            last = r.timestampMs();
            assertEquals((r.inputLength() + 511) / 512, r.blocks(), "ids = ceil(input / 512): " + r);
            assertTrue(r.inputLength() <= 131_072 && r.outputLength() >= 1 && r.outputLength() <= 2000, r.toString());
            long[] ids = r.hashIds();
            for (int i = 0; i < ids.length; i++) {
                if (!position.containsKey(ids[i])) {
                    assertEquals(nextNew++, ids[i], "ids are dense, in order of first appearance");
                    position.put(ids[i], i);
                }
                assertEquals(position.get(ids[i]), i, "an id never appears at two positions");
                uses.merge(ids[i], 1, Integer::sum);
            }
        }
        // a partial last block has an id of its own
        for (TraceRequest r : t.requests()) {
            if (r.inputLength() % 512 != 0) {
                assertEquals(1, uses.get(r.hashIds()[r.blocks() - 1]), r.toString());
            }
        }
        double perSecond = N / (last / 1000.0);
        assertTrue(perSecond > 2 && perSecond < 5, "arrival rate " + perSecond);
    }

    @Test
    void hasSharedPromptsGrowingConversationsAndALongTail() {
        Trace t = SyntheticTrace.generate(N, 42);
        List<TraceRequest> rs = t.requests();
        // a few shared system prompts: at least 3 first blocks each open 5% of the requests
        Map<Long, Integer> firsts = new HashMap<>();
        for (TraceRequest r : rs) {
            firsts.merge(r.hashIds()[0], 1, Integer::sum);
        }
        long popular = firsts.values().stream().filter(c -> c >= N / 20).count();
        assertTrue(popular >= 3 && popular <= SyntheticTrace.SYSTEM_PROMPTS, "popular first blocks: " + popular);
        // later turns extend earlier prompts: the full blocks of some earlier request are a proper prefix
        Set<String> fullPrefixes = new HashSet<>();
        int extending = 0;
        for (TraceRequest r : rs) {
            long[] ids = r.hashIds();
            boolean found = false;
            for (int k = ids.length - 1; k >= 2 && !found; k--) {
                found = fullPrefixes.contains(Arrays.toString(Arrays.copyOf(ids, k)));
            }
            if (found) {
                extending++;
            }
            int full = r.fullBlocks(512);
            fullPrefixes.add(Arrays.toString(Arrays.copyOf(ids, full)));
        }
        assertTrue(extending > N / 5, "requests extending an earlier prompt: " + extending);
        // long tail of lengths
        int[] in = rs.stream().mapToInt(TraceRequest::inputLength).sorted().toArray();
        int median = in[N / 2];
        assertTrue(
                in[N * 99 / 100] > 5 * median && in[N - 1] > 10 * median,
                "median " + median + ", p99 " + in[N * 99 / 100] + ", max " + in[N - 1]);
        double bound = t.prefixHitBound();
        assertTrue(bound > 0.3 && bound < 0.9, "prefix-hit bound " + bound);
    }
}
