package io.kvprefix.internal.offheap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.internal.snapshot.SnapshotFormat;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The snapshot format stores run headers and name maps as the chain index lays them out, so that a
 * restore copies them whole: the offsets, sizes and bit fields of {@link SnapshotFormat} are
 * {@link ChainLayout}'s, and a {@link NameMap}'s segments and records sit where the format's
 * segment and home functions say.
 */
class SnapshotLayoutTest {
    @Test
    void runHeadersAreChainLayoutsOwn() {
        assertEquals(ChainLayout.RUN_LOCALS, SnapshotFormat.RUN_HEADER_BYTES);
        assertEquals(ChainLayout.RUN_LENGTH, SnapshotFormat.R_LENGTH);
        assertEquals(ChainLayout.RUN_ENTRIES, SnapshotFormat.R_ENTRIES);
        assertEquals(ChainLayout.RUN_CHUNKS, SnapshotFormat.R_CHUNKS);
        assertEquals(ChainLayout.RUN_ENTRY0, SnapshotFormat.R_ENTRY0);
        assertEquals(ChainLayout.RUN_START, SnapshotFormat.R_START);
        assertEquals(ChainLayout.RUN_PARENT, SnapshotFormat.R_PARENT);
        assertEquals(ChainLayout.RUN_LOCK, SnapshotFormat.R_LOCK);
        assertEquals(ChainLayout.RUN_CAPACITY, SnapshotFormat.R_CAPACITY);
        assertEquals(ChainLayout.RUN_CHILDREN, SnapshotFormat.R_CHILDREN);
        assertEquals(ChainLayout.RUN_HOLDERS, SnapshotFormat.R_HOLDERS);
        assertEquals(ChainLayout.INLINE_ENTRIES, SnapshotFormat.INLINE_ENTRIES);
        assertArrayEquals(ChainLayout.RUN_CAPACITIES, SnapshotFormat.RUN_CAPACITIES);
        assertEquals(ChainLayout.MAX_RUN, SnapshotFormat.MAX_RUN);
        assertEquals(ChainLayout.OFFSET_BITS, SnapshotFormat.OFFSET_BITS);
        assertEquals(ChainLayout.MAX_RUN_ID, SnapshotFormat.MAX_RUN_ID);
        assertEquals(NameMap.MIN_CAPACITY, SnapshotFormat.MIN_NAME_CAPACITY);
        SplittableRandom r = new SplittableRandom(1);
        for (int i = 0; i < 1000; i++) {
            int slot = r.nextInt(1 << 16);
            int cut = r.nextInt(65);
            int un = r.nextInt(65);
            long e = ChainLayout.entry(slot, cut, un, 0);
            assertEquals(e, SnapshotFormat.entry(slot, cut, un));
            assertEquals(ChainLayout.entrySlot(e), SnapshotFormat.entrySlot(e));
            assertEquals(ChainLayout.entryCutoff(e), SnapshotFormat.entryCutoff(e));
            assertEquals(ChainLayout.entryUnreachable(e), SnapshotFormat.entryUnreachable(e));
        }
    }

    @Test
    void nameMapSegmentsLieWhereTheFormatsFunctionsSay() {
        for (boolean tagged : new boolean[] {false, true}) {
            MemoryPool pool = new MemoryPool(1L << 30);
            NameMap m = NameMap.create(pool, 1000, tagged);
            SplittableRandom r = new SplittableRandom(2);
            int n = 3 * NameMap.MAX_SEGMENT; // enough to split: several segments, of several depths
            for (int i = 0; i < n; i++) {
                long key = r.nextLong();
                m.ensureRoomFor(new long[] {key}, 1);
                m.put(key, i);
                if (tagged) {
                    m.setTag(key, 1 + (i % 7));
                }
            }
            assertTrue(m.segmentCount() > 1, "split: " + m.segmentCount());
            int[] found = {0};
            long[] covered = {0};
            m.forEachSegment((cap, names, depth, prefix, table) -> {
                assertEquals(covered[0], (long) prefix << (m.depth() - depth), "segments in directory order");
                covered[0] += 1L << (m.depth() - depth);
                assertEquals(SnapshotFormat.segmentTableBytes(cap, tagged), table.byteSize());
                int inSegment = 0;
                for (int i = 0; i < cap; i++) {
                    int v = table.get(ValueLayout.JAVA_INT, 8L * cap + 4L * i);
                    if (v == 0) {
                        continue;
                    }
                    long key = table.get(ValueLayout.JAVA_LONG, 8L * i);
                    long h = SnapshotFormat.nameMix(key);
                    assertEquals(prefix, depth == 0 ? 0 : (int) (h >>> (64 - depth)), "its segment's prefix");
                    assertEquals(
                            m.depth() == 0 ? 0 : (int) (h >>> (64 - m.depth())),
                            SnapshotFormat.nameSegment(h, m.depth()));
                    int j = SnapshotFormat.nameHome(h, cap); // linear probing from home reaches i without a gap
                    while (j != i) {
                        assertNotEquals(0, table.get(ValueLayout.JAVA_INT, 8L * cap + 4L * j), "a gap before " + i);
                        j = j + 1 == cap ? 0 : j + 1;
                    }
                    assertEquals(v - 1, m.get(key));
                    if (tagged) {
                        assertEquals(m.tag(key), table.get(ValueLayout.JAVA_BYTE, 12L * cap + i) & 0xFF);
                    }
                    inSegment++;
                }
                assertEquals(names, inSegment);
                found[0] += inSegment;
            });
            assertEquals(1L << m.depth(), covered[0]);
            assertEquals(n, found[0]);
            m.free();
        }
    }

    /** Whether {@code m} has segments of more than one depth (a split left the others as they were). */
    private static boolean mixedDepths(NameMap m) {
        java.util.Set<Integer> depths = new java.util.HashSet<>();
        m.forEachSegment((cap, names, depth, prefix, table) -> depths.add(depth));
        return depths.size() > 1;
    }

    /** The segments of {@code m} as a snapshot stores their headers: capacity, names, depth, prefix. */
    private static java.util.List<java.util.List<Integer>> layout(NameMap m) {
        java.util.List<java.util.List<Integer>> out = new java.util.ArrayList<>();
        m.forEachSegment((cap, names, depth, prefix, table) -> out.add(java.util.List.of(cap, names, depth, prefix)));
        return out;
    }

    /**
     * A worker whose name map a split has left with segments of two depths: restored by the chain
     * index, its segments are what they were; restored by either index, every stored sequence
     * matches as deep as in the original.
     */
    @Test
    void aMapWithSegmentsOfSeveralDepthsRestoresAsItWas(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
        io.kvprefix.IndexConfig config = io.kvprefix.IndexConfig.defaults();
        io.kvprefix.Worker w = io.kvprefix.Worker.of(1);
        java.nio.file.Path file = dir.resolve("mixed.snap");
        SplittableRandom r = new SplittableRandom(3);
        java.util.List<long[]> stored = new java.util.ArrayList<>();
        try (OffHeapPrefixIndex index = new OffHeapPrefixIndex(config)) {
            long name = 1;
            while (stored.size() < 10 || !mixedDepths(index.holdings(w).names)) {
                long[] locals = r.longs(16).toArray();
                long[] hashes = new long[16];
                for (int i = 0; i < 16; i++) {
                    hashes[i] = name++;
                }
                index.apply(new io.kvprefix.KvEvent.Stored(
                        w, java.util.OptionalLong.empty(), hashes, locals, io.kvprefix.Medium.GPU));
                stored.add(locals);
                assertTrue(stored.size() < 100_000, "no split left two depths");
            }
            index.snapshot(file);
            var want = layout(index.holdings(w).names);
            try (OffHeapPrefixIndex back = (OffHeapPrefixIndex) io.kvprefix.PrefixIndex.restore(file, config);
                    io.kvprefix.PrefixIndex heap = io.kvprefix.PrefixIndex.restoreHeap(file, config)) {
                assertEquals(want, layout(back.holdings(w).names));
                io.kvprefix.MatchResult a = new io.kvprefix.MatchResult();
                io.kvprefix.MatchResult b = new io.kvprefix.MatchResult();
                io.kvprefix.MatchResult c = new io.kvprefix.MatchResult();
                for (long[] locals : stored) {
                    index.match(locals, 0, locals.length, a);
                    back.match(locals, 0, locals.length, b);
                    heap.match(locals, 0, locals.length, c);
                    assertEquals(16, a.depthOf(w));
                    assertEquals(a.scores(), b.scores());
                    assertEquals(a.scores(), c.scores());
                }
                for (int i = 0; i < stored.size(); i += 7) { // and every name is found: removals by name
                    long first = 1 + 16L * i;
                    var removed = new io.kvprefix.KvEvent.Removed(w, new long[] {first}, io.kvprefix.Medium.GPU);
                    assertEquals(index.apply(removed), back.apply(removed));
                    assertEquals(index.blockCount(w), back.blockCount(w));
                }
            }
        }
    }
}
