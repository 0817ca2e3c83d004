package io.kvprefix.internal.offheap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kvprefix.internal.snapshot.SnapshotFormat;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The snapshot format stores run headers and name maps as the chain index lays them out, so that a
 * restore copies them whole: the offsets, sizes and bit fields of {@link SnapshotFormat} are
 * {@link ChainLayout}'s, and a {@link NameMap}'s records sit where the format's home function says.
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
    void nameMapsLieWhereTheFormatsHomeFunctionSays() {
        MemoryPool pool = new MemoryPool(1L << 30);
        NameMap m = NameMap.create(pool, 1000);
        SplittableRandom r = new SplittableRandom(2);
        for (int i = 0; i < 700; i++) {
            m.ensureRoomFor(1);
            m.put(r.nextLong(), i);
        }
        int cap = m.capacity();
        var mem = m.memory();
        int found = 0;
        for (int i = 0; i < cap; i++) {
            int v = mem.get(ValueLayout.JAVA_INT, 8L * cap + 4L * i);
            if (v == 0) {
                continue;
            }
            long key = mem.get(ValueLayout.JAVA_LONG, 8L * i);
            int j = SnapshotFormat.nameHome(key, cap); // linear probing from home reaches i without a gap
            while (j != i) {
                assertEquals(true, mem.get(ValueLayout.JAVA_INT, 8L * cap + 4L * j) != 0, "a gap before record " + i);
                j = j + 1 == cap ? 0 : j + 1;
            }
            assertEquals(v - 1, m.get(key));
            found++;
        }
        assertEquals(700, found);
        m.free();
    }
}
