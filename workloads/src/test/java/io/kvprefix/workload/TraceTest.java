package io.kvprefix.workload;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.BlockHasher;
import io.kvprefix.testing.RepoPaths;
import io.kvprefix.testing.SharedData;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The Mooncake reader, the transforms and the trace statistics, on traces small enough to check by hand. */
class TraceTest {

    static Path resource(String name) {
        return RepoPaths.root().resolve("workloads/src/test/resources/traces").resolve(name);
    }

    static Trace small() throws Exception {
        return MooncakeTraceReader.read(resource("small.jsonl"));
    }

    @Test
    void readsTheSmallTrace() throws Exception {
        Trace t = small();
        assertEquals(5, t.size());
        assertEquals(512, t.tokensPerBlock());
        List<TraceRequest> r = t.requests();
        assertEquals(new TraceRequest(0, 0, 1300, 10, new long[] {0, 1, 2}, 1), r.get(0));
        assertEquals(new TraceRequest(1, 0, 2048, 20, new long[] {0, 1, 3, 4}, 2), r.get(1));
        assertEquals(new TraceRequest(2, 3000, 700, 5, new long[] {0, 5}, 3), r.get(2));
        // line 4 is blank: skipped but counted
        assertEquals(new TraceRequest(3, 3000, 512, 7, new long[] {6}, 5), r.get(3));
        assertEquals(new TraceRequest(4, 6000, 3000, 1, new long[] {0, 1, 3, 4, 7, 8}, 6), r.get(4));
        int[] full = r.stream().mapToInt(q -> q.fullBlocks(512)).toArray();
        assertArrayEquals(new int[] {2, 4, 1, 1, 5}, full);
        assertEquals(16, t.totalBlocks());
        assertEquals(13, t.totalFullBlocks());
        assertEquals(9, t.distinctIds());
        assertEquals(8, t.maxId());
        // hits by hand: r1 reuses [0,1], r2 [0], r4 [0,1,3,4]
        assertEquals(7, t.prefixHitBlocks());
        assertEquals(7.0 / 16, t.prefixHitBound(), 1e-12);
    }

    @Test
    void sortsByArrivalKeepsTiesInFileOrderAndReadsCrlf() throws Exception {
        Trace t = MooncakeTraceReader.read(resource("unordered_crlf.jsonl"));
        assertEquals(3, t.size());
        assertEquals(new TraceRequest(0, 10, 0, 2, new long[0], 2), t.requests().get(0));
        assertEquals(
                new TraceRequest(1, 20, 600, 1, new long[] {3, 4}, 1),
                t.requests().get(1));
        assertEquals(
                new TraceRequest(2, 20, 1024, 3, new long[] {3, 9}, 3),
                t.requests().get(2));
        assertEquals(0, t.requests().get(0).fullBlocks(512));
        // 9 is not a continuation of [3, 4]: only the first block is a prefix hit
        assertEquals(1, t.prefixHitBlocks());
    }

    @Test
    void splitMakesSubBlocks() throws Exception {
        Trace t = small().split(4);
        assertEquals(128, t.tokensPerBlock());
        assertArrayEquals(
                new long[] {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11},
                t.requests().get(0).hashIds());
        assertArrayEquals(new long[] {24, 25, 26, 27}, t.requests().get(3).hashIds());
        assertEquals(35, t.maxId());
        assertEquals(1300 / 128, t.requests().get(0).fullBlocks(128));
        assertEquals(64, t.totalBlocks());
        assertEquals(7 * 4, t.prefixHitBlocks());
        Trace one = small().split(512);
        assertEquals(1, one.tokensPerBlock());
        assertEquals(1300, one.requests().get(0).fullBlocks(1)); // 1536 sub-ids, 1300 full one-token blocks
        Trace s = small();
        assertSame(s, s.split(1));
        for (int bad : new int[] {0, 3, 1024, -2}) {
            var e = assertThrows(IllegalArgumentException.class, () -> small().split(bad));
            assertTrue(e.getMessage().contains("--split must be a divisor of 512"), e.getMessage());
        }
    }

    @Test
    void duplicateOffsetsEveryCopy() throws Exception {
        Trace t = small().duplicate(3);
        assertEquals(15, t.size());
        // request-major: each request then its copies, at the same time; copy j adds (8 + 1) * j
        assertArrayEquals(new long[] {0, 1, 2}, t.requests().get(0).hashIds());
        assertArrayEquals(new long[] {9, 10, 11}, t.requests().get(1).hashIds());
        assertArrayEquals(new long[] {18, 19, 20}, t.requests().get(2).hashIds());
        assertArrayEquals(new long[] {0, 1, 3, 4}, t.requests().get(3).hashIds());
        assertArrayEquals(new long[] {18, 23}, t.requests().get(8).hashIds());
        for (int i = 0; i < 15; i++) {
            assertEquals(i, t.requests().get(i).index());
        }
        assertEquals(3000, t.requests().get(8).timestampMs());
        assertEquals(26, t.maxId());
        assertEquals(27, t.distinctIds());
        assertEquals(21, t.prefixHitBlocks()); // the copies share nothing: 3 x 7
        // after a split the stride is the split trace's max id + 1
        assertArrayEquals(
                new long[] {18, 19, 20, 21, 22, 23},
                small().split(2).duplicate(2).requests().get(1).hashIds());
        assertThrows(IllegalArgumentException.class, () -> small().duplicate(0));
    }

    @Test
    void truncateKeepsTheFirstRequests() throws Exception {
        Trace t = small().duplicate(2).truncate(3);
        assertEquals(3, t.size());
        assertArrayEquals(new long[] {0, 1, 3, 4}, t.requests().get(2).hashIds());
        assertEquals(5, small().truncate(100).size());
        assertThrows(IllegalArgumentException.class, () -> small().truncate(0));
    }

    @Test
    void idsStayTokenValues() throws Exception {
        String line =
                "{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": [4294967295, 7]}\n";
        Trace t =
                MooncakeTraceReader.read(new ByteArrayInputStream(line.getBytes(StandardCharsets.UTF_8)), "max.jsonl");
        assertEquals(4294967295L, t.maxId());
        var e = assertThrows(IllegalArgumentException.class, () -> t.split(2));
        assertTrue(e.getMessage().contains("above 4294967295"), e.getMessage());
        var d = assertThrows(IllegalArgumentException.class, () -> t.duplicate(2));
        assertTrue(d.getMessage().contains("--duplicate 2 would need hash ids up to 8589934591"), d.getMessage());
    }

    @Test
    void localHashesOfMooncakeIds() throws Exception {
        LocalHashTable table = LocalHashTable.forTrace(small());
        assertEquals(9, table.size());
        // docs/SPEC.md section 2.3
        assertEquals(Long.parseUnsignedLong("16456450638077811066"), table.localHash(0));
        assertEquals(Long.parseUnsignedLong("10716031498429279048"), table.localHash(1));
        assertEquals(Long.parseUnsignedLong("11733219580547862099"), table.localHash(42)); // computed on demand
        assertEquals(10, table.size());
        // the batched path equals the one-id path
        LocalHashTable fresh = new LocalHashTable(BlockHasher.of(512));
        for (long id = 0; id <= 8; id++) {
            assertEquals(fresh.localHash(id), table.localHash(id), "id " + id);
        }
        // one-token blocks after --split 512: L(id) is the hash of the single token id
        Trace one = small().split(512);
        LocalHashTable t1 = LocalHashTable.forTrace(one);
        BlockHasher h1 = BlockHasher.of(1);
        for (long id : new long[] {0, 1, 511, 512, 4607}) {
            assertEquals(h1.localHashes(new int[] {(int) id})[0], t1.localHash(id), "id " + id);
        }
    }

    /** The figures of ../shared/traces/README.md (computed there with python3). */
    @Test
    void mooncakeTraceStatisticsMatchTheReadme() throws Exception {
        Trace conv = MooncakeTraceReader.read(SharedData.trace("conversation_trace.jsonl"));
        assertEquals(12_031, conv.size());
        assertEquals(288_500, conv.totalBlocks());
        assertEquals(182_790, conv.distinctIds());
        assertEquals(182_789, conv.maxId()); // dense ids
        assertEquals(0.3664, conv.prefixHitBound(), 5e-5);
        assertEquals(3_536_999, conv.requests().get(conv.size() - 1).timestampMs());
        Trace syn = MooncakeTraceReader.read(SharedData.trace("synthetic_trace.jsonl"));
        assertEquals(3_993, syn.size());
        assertEquals(121_877, syn.totalBlocks());
        assertEquals(43_924, syn.distinctIds());
        assertEquals(0.6396, syn.prefixHitBound(), 5e-5);
    }
}
