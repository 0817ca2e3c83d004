package io.kvprefix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kvprefix.internal.offheap.OffHeapPrefixIndex;
import io.kvprefix.testing.OracleIndex;
import io.kvprefix.testing.SnapshotStates;
import io.kvprefix.testing.TestScale;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A restore in place (docs/SNAPSHOT.md section 7): the snapshot mapped copy-on-write and its pages
 * used as the index's memory. Held to the oracle mid-stream, restore after restore, and to the copy
 * path; a file replaced (as kvprefix and {@code mv} replace it) or deleted after the mapping leaves
 * the index as it was; a write into the same file is seen by the mapping, as Linux documents (and
 * not by the copy path), which is also this suite's proof that it can see a change; damaged files
 * are refused by both paths alike.
 */
class SnapshotInPlaceTest {
    @TempDir
    Path dir;

    private static final IndexConfig CONFIG =
            IndexConfig.builder().maxWorkers(64).build();

    @Test
    void restoredInPlaceAgainAndAgainItAnswersAsTheOracleMidStream() {
        long seed = TestScale.seed();
        SnapshotStates states = new SnapshotStates(seed, 10, 60, 130);
        PrefixIndex live = PrefixIndex.offHeap(CONFIG);
        try (PrefixIndex oracle = new OracleIndex(CONFIG)) {
            for (int stage = 0; stage < TestScale.iterations(6, 30); stage++) {
                String what = "stage " + stage + ", " + TestScale.replay(seed);
                SnapshotStates.apply(stage == 0 ? states.fill() : states.events(1200), live, oracle);
                Path file = dir.resolve("state.snap"); // from the second stage on, over the file in use
                live.snapshot(file, Map.of("stage", "" + stage));
                PrefixIndex restored = OffHeapPrefixIndex.restore(file, CONFIG, true);
                live.close();
                live = restored;
                assertEquals(states.fingerprint(oracle), states.fingerprint(live), what);
                try (PrefixIndex copied = OffHeapPrefixIndex.restore(file, CONFIG, false)) {
                    assertEquals(states.fingerprint(copied), states.fingerprint(live), what + ", the copy path");
                    assertEquals(copied.stats().entries(), live.stats().entries(), what);
                }
                List<KvEvent> more = states.events(600); // writes into the mapped pages: private copies
                SnapshotStates.apply(more, live, oracle);
                assertEquals(states.fingerprint(oracle), states.fingerprint(live), what + ", then on");
            }
        } finally {
            live.close();
        }
    }

    @Test
    void aFileReplacedOrDeletedAfterTheRestoreLeavesTheIndexAsItWas() throws IOException {
        Path file = dir.resolve("state.snap");
        SnapshotStates states = new SnapshotStates(TestScale.seed(), 6, 40, 90);
        try (PrefixIndex original = PrefixIndex.offHeap(CONFIG);
                PrefixIndex other = PrefixIndex.offHeap(CONFIG)) {
            SnapshotStates.apply(states.fill(), original);
            original.snapshot(file);
            SnapshotStates.apply(states.events(2000), other);
            try (PrefixIndex restored = OffHeapPrefixIndex.restore(file, CONFIG, true)) {
                String before = states.fingerprint(restored);
                assertEquals(states.fingerprint(original), before);
                other.snapshot(file); // a new file renamed over the mapped one: the mapping keeps the old
                assertNotEquals(before, states.fingerprint(other));
                assertEquals(before, states.fingerprint(restored), "after a snapshot over its file");
                restored.snapshot(file); // over its own file, while reading from it
                Files.delete(file);
                assertEquals(before, states.fingerprint(restored), "after its file was deleted");
                List<KvEvent> more = states.events(1500);
                SnapshotStates.apply(more, original, restored);
                assertEquals(states.fingerprint(original), states.fingerprint(restored), "then on");
            }
        }
    }

    @Test
    void aWriteIntoTheMappedFileIsSeenInPlaceButNotByACopy() throws IOException {
        Path file = dir.resolve("one-run.snap");
        long[] locals = new long[64];
        long[] hashes = new long[64];
        for (int i = 0; i < 64; i++) {
            locals[i] = 1000 + i;
            hashes[i] = 1 + i;
        }
        Worker w = Worker.of(7);
        try (PrefixIndex original = PrefixIndex.offHeap(CONFIG)) {
            original.apply(KvEvent.Stored.root(w, hashes, locals)); // one full run: restored in place
            original.snapshot(file);
        }
        try (PrefixIndex inPlace = OffHeapPrefixIndex.restore(file, CONFIG, true);
                PrefixIndex copied = OffHeapPrefixIndex.restore(file, CONFIG, false)) {
            assertEquals(64, depth(inPlace, locals, w));
            // The local hash of block 10, written into the same file (not a new file renamed over it).
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                ByteBuffer at = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
                ch.read(at, 64 + 3 * 32 + 8); // the runs section's offset (docs/SNAPSHOT.md section 3.2)
                long hash10 = at.flip().getLong() + 16 + 56 + 8 * 10;
                ch.write(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, 99), hash10);
            }
            // Linux shows a write into the file in every page of a MAP_PRIVATE mapping this process has not written.
            assertEquals(10, depth(inPlace, locals, w), "the mapping sees a write into its file");
            assertEquals(64, depth(copied, locals, w), "a copy does not");
        }
    }

    private static int depth(PrefixIndex index, long[] locals, Worker w) {
        MatchResult m = new MatchResult();
        index.match(locals, 0, locals.length, m);
        return m.depthOf(w);
    }

    @Test
    void damagedFilesAreRefusedByBothPathsAlike() throws IOException {
        Path file = dir.resolve("good.snap");
        SnapshotStates states = new SnapshotStates(TestScale.seed(), 4, 30, 70);
        try (PrefixIndex original = PrefixIndex.offHeap(CONFIG)) {
            SnapshotStates.apply(states.fill(), original);
            original.snapshot(file);
            String before = states.fingerprint(original);
            byte[] good = Files.readAllBytes(file);
            Path bad = dir.resolve("bad.snap");
            for (int cut : new int[] {good.length - 8, good.length / 2, 300}) {
                Files.write(bad, java.util.Arrays.copyOf(good, cut));
                assertSameRefusal(bad);
            }
            for (int at : new int[] {good.length - 20, good.length / 2, 290}) {
                byte[] b = good.clone();
                b[at] ^= 0x10;
                Files.write(bad, b);
                assertSameRefusal(bad);
            }
            assertEquals(before, states.fingerprint(original), "the index in use is unchanged");
        }
    }

    private static void assertSameRefusal(Path bad) {
        SnapshotException inPlace =
                assertThrows(SnapshotException.class, () -> OffHeapPrefixIndex.restore(bad, CONFIG, true));
        SnapshotException copied =
                assertThrows(SnapshotException.class, () -> OffHeapPrefixIndex.restore(bad, CONFIG, false));
        assertEquals(copied.getMessage(), inPlace.getMessage());
    }
}
