package io.kvprefix;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.internal.offheap.OffHeapPrefixIndex;
import io.kvprefix.testing.SnapshotStates;
import io.kvprefix.testing.TestScale;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Snapshots and restores (docs/SNAPSHOT.md) on every implementation and every pair of them: a
 * restored index answers, counts and goes on exactly like the one it was saved from; metadata comes
 * back; writes that fail keep the previous snapshot. Bad files are in {@link SnapshotRefusalTest},
 * concurrency in {@link SnapshotConcurrencyTest}, crashes in {@link SnapshotCrashTest}.
 */
class SnapshotTest {
    @TempDir
    Path dir;

    /** The implementations by name: a new index, and a restore. */
    record Impl(
            String name,
            Function<IndexConfig, PrefixIndex> create,
            BiFunction<Path, IndexConfig, PrefixIndex> restore) {
        @Override
        public String toString() {
            return name;
        }
    }

    static final List<Impl> IMPLS = List.of(
            new Impl("heap", PrefixIndex::heap, PrefixIndex::restoreHeap),
            new Impl(
                    "offheap-java",
                    c -> PrefixIndex.offHeap(portable(c)),
                    (p, c) -> PrefixIndex.restore(p, portable(c))),
            new Impl( // the copy path, held to the in-place one (docs/SNAPSHOT.md section 7)
                    "offheap-copy",
                    c -> PrefixIndex.offHeap(portable(c)),
                    (p, c) -> OffHeapPrefixIndex.restore(p, portable(c), false)),
            new Impl(
                    "offheap-native",
                    c -> PrefixIndex.offHeap(
                            c.toBuilder().implementation(Implementation.NATIVE).build()),
                    (p, c) -> PrefixIndex.restore(
                            p,
                            c.toBuilder().implementation(Implementation.NATIVE).build())));

    static IndexConfig portable(IndexConfig c) {
        return c.toBuilder().implementation(Implementation.PORTABLE).build();
    }

    @Test
    void everyImplementationRestoresWhatEveryOneSaved() {
        long seed = TestScale.seed();
        IndexConfig config = IndexConfig.builder().maxWorkers(64).build();
        int rounds = TestScale.iterations(3, 20);
        for (int round = 0; round < rounds; round++) {
            long s = seed + round;
            for (Impl from : IMPLS) {
                for (Impl to : IMPLS) {
                    String what = from + " -> " + to + ", " + TestScale.replay(seed) + " round " + round;
                    SnapshotStates states = new SnapshotStates(s, 12, 40, 90);
                    List<KvEvent> before = states.events(3000);
                    List<KvEvent> after = states.events(1500);
                    Path file = dir.resolve(from + "-" + to + "-" + round + ".snap");
                    try (PrefixIndex original = from.create().apply(config);
                            PrefixIndex reference = to.create().apply(config)) {
                        SnapshotStates.apply(before, original, reference);
                        original.snapshot(file, Map.of("engine-a", "41", "engine-b", "7"));
                        try (PrefixIndex restored = to.restore().apply(file, config)) {
                            if (from == to) {
                                assertEquals(
                                        original.stats().entries(),
                                        restored.stats().entries(),
                                        what);
                            }
                            assertEquals(states.fingerprint(reference), states.fingerprint(restored), what);
                            assertEquals(states.fingerprint(original), states.fingerprint(restored), what);
                            assertEquals(Map.of("engine-a", "41", "engine-b", "7"), restored.snapshotMetadata(), what);
                            SnapshotStates.apply(after, reference, restored);
                            assertEquals(
                                    states.fingerprint(reference), states.fingerprint(restored), what + ", then on");
                        }
                    }
                }
            }
        }
    }

    /**
     * Name maps of many segments (split by the chain index, cut at one depth by the heap index), and
     * any-tier views as large: restored on every implementation, they answer as the
     * original and as a reference fed the same events, then and after more events.
     */
    @Test
    void nameMapsOfManySegmentsRoundTrip() throws IOException {
        long seed = TestScale.seed();
        IndexConfig config = IndexConfig.defaults();
        for (Impl from : IMPLS) {
            for (Impl to : IMPLS) {
                String what = from + " -> " + to + ", " + TestScale.replay(seed);
                SnapshotStates states = new SnapshotStates(seed, 4, 700, 90);
                List<KvEvent> before = new java.util.ArrayList<>(states.events(1000));
                before.addAll(states.fill()); // last, so that no clear shrinks a map again before the snapshot
                List<KvEvent> after = states.events(1000);
                Path file = dir.resolve(from + "-" + to + "-segments.snap");
                try (PrefixIndex original = from.create().apply(config);
                        PrefixIndex reference = to.create().apply(config)) {
                    SnapshotStates.apply(before, original, reference);
                    original.snapshot(file);
                    java.nio.ByteBuffer b =
                            java.nio.ByteBuffer.wrap(Files.readAllBytes(file)).order(java.nio.ByteOrder.LITTLE_ENDIAN);
                    int worker0 = (int) b.getLong(64 + 32 * 2 + 8); // the workers section
                    int segments = b.getInt(worker0 + 24);
                    assertTrue(
                            segments > 1, what + ": " + segments + " segments"); // several depths: SnapshotLayoutTest
                    try (PrefixIndex restored = to.restore().apply(file, config)) {
                        assertEquals(states.fingerprint(original), states.fingerprint(restored), what);
                        SnapshotStates.apply(after, reference, restored);
                        assertEquals(states.fingerprint(reference), states.fingerprint(restored), what + ", then on");
                    }
                }
            }
        }
    }

    @Test
    void aRestoredIndexSnapshotsTheSameStateAgain() throws IOException {
        SnapshotStates states = new SnapshotStates(7, 8, 30, 70);
        List<KvEvent> events = states.events(2000);
        IndexConfig config = IndexConfig.defaults();
        for (Impl impl : IMPLS) {
            Path a = dir.resolve(impl + "-a.snap");
            Path b = dir.resolve(impl + "-b.snap");
            try (PrefixIndex original = impl.create().apply(config)) {
                SnapshotStates.apply(events, original);
                original.snapshot(a);
                try (PrefixIndex restored = impl.restore().apply(a, config)) {
                    restored.snapshot(b);
                }
            }
            byte[] x = Files.readAllBytes(a);
            byte[] y = Files.readAllBytes(b);
            if (impl.name().startsWith("offheap")) {
                // the chain index keeps run ids, name maps and entry positions: the same bytes
                assertArrayEquals(x, y, impl.name());
            } else { // the heap index cuts its tree into runs afresh each time: the same state, maybe other runs
                try (PrefixIndex again = impl.restore().apply(b, config);
                        PrefixIndex reference = impl.create().apply(config)) {
                    SnapshotStates.apply(events, reference);
                    assertEquals(states.fingerprint(reference), states.fingerprint(again));
                }
            }
        }
    }

    @Test
    void emptyIndexesRoundTrip() {
        for (Impl from : IMPLS) {
            for (Impl to : IMPLS) {
                Path file = dir.resolve("empty-" + from + "-" + to + ".snap");
                try (PrefixIndex empty = from.create().apply(IndexConfig.defaults())) {
                    empty.snapshot(file);
                }
                try (PrefixIndex restored = to.restore().apply(file, IndexConfig.defaults())) {
                    assertEquals(List.of(), restored.workers());
                    assertEquals(Map.of(), restored.snapshotMetadata());
                    assertEquals(
                            EventStatus.OK,
                            restored.apply(KvEvent.Stored.root(Worker.of(1), new long[] {1}, new long[] {5})));
                    assertEquals(1, restored.match(new long[] {5, 6}).depthOf(Worker.of(1)));
                }
            }
        }
    }

    @Test
    void aFreshIndexHasNoSnapshotMetadata() {
        for (Impl impl : IMPLS) {
            try (PrefixIndex index = impl.create().apply(IndexConfig.defaults())) {
                assertEquals(Map.of(), index.snapshotMetadata());
            }
        }
    }

    @Test
    void aSnapshotReplacesThePreviousOneAndLeavesNoTemporaryFile() throws IOException {
        Path file = dir.resolve("index.snap");
        try (PrefixIndex index = PrefixIndex.create(IndexConfig.defaults())) {
            index.snapshot(file, Map.of("n", "1"));
            index.apply(KvEvent.Stored.root(Worker.of(3), new long[] {1, 2}, new long[] {10, 20}));
            index.snapshot(file, Map.of("n", "2"));
        }
        assertFalse(Files.exists(dir.resolve("index.snap.tmp")));
        try (PrefixIndex r = PrefixIndex.restore(file, IndexConfig.defaults())) {
            assertEquals(Map.of("n", "2"), r.snapshotMetadata());
            assertEquals(2, r.match(new long[] {10, 20}).depthOf(Worker.of(3)));
        }
    }

    @Test
    void aFailedWriteKeepsThePreviousSnapshot() throws IOException {
        Path file = dir.resolve("index.snap");
        for (Impl impl : IMPLS) {
            PrefixIndex index = impl.create().apply(IndexConfig.defaults());
            {
                index.apply(KvEvent.Stored.root(Worker.of(3), new long[] {1}, new long[] {10}));
                index.snapshot(file, Map.of("kept", "yes"));
                byte[] before = Files.readAllBytes(file);
                index.apply(KvEvent.Stored.root(Worker.of(4), new long[] {1}, new long[] {11}));
                // another writer holds the temporary file: this snapshot must fail and change nothing
                try (FileChannel ch = FileChannel.open(
                                dir.resolve("index.snap.tmp"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                        FileLock lock = ch.lock()) {
                    SnapshotException e = assertThrows(SnapshotException.class, () -> index.snapshot(file));
                    assertTrue(e.getMessage().contains("another snapshot to this file is in progress"), e.getMessage());
                    assertEquals(file, e.file());
                    assertTrue(lock.isValid());
                }
                assertArrayEquals(before, Files.readAllBytes(file), impl.name());
                Files.delete(dir.resolve("index.snap.tmp"));
                index.close();
                assertThrows(IllegalStateException.class, () -> index.snapshot(file));
                assertArrayEquals(before, Files.readAllBytes(file), impl.name());
                assertFalse(Files.exists(dir.resolve("index.snap.tmp")), impl.name());
            }
        }
    }

    @Test
    void unwritablePlacesAreClearErrors() throws IOException {
        try (PrefixIndex index = PrefixIndex.create(IndexConfig.defaults())) {
            SnapshotException e = assertThrows(SnapshotException.class, () -> index.snapshot(dir));
            assertEquals("snapshot " + dir + ": is a directory", e.getMessage());
            Path missing = dir.resolve("no/such/dir/index.snap");
            e = assertThrows(SnapshotException.class, () -> index.snapshot(missing));
            assertTrue(e.getMessage().startsWith("snapshot " + missing + ": cannot write "), e.getMessage());
            assertTrue(e.getMessage().contains("no such file or directory"), e.getMessage());
        }
    }

    @Test
    void metadataIsChecked() {
        try (PrefixIndex index = PrefixIndex.create(IndexConfig.defaults())) {
            Path file = dir.resolve("m.snap");
            assertThrows(IllegalArgumentException.class, () -> index.snapshot(file, Map.of("", "x")));
            assertThrows(IllegalArgumentException.class, () -> index.snapshot(file, Map.of("k", "x".repeat(70_000))));
            assertFalse(Files.exists(file));
            index.snapshot(file, Map.of("k\u00e9\u4e2d", "v\n\"\u0000", "empty", ""));
            try (PrefixIndex r = PrefixIndex.restore(file, IndexConfig.defaults())) {
                assertEquals(Map.of("k\u00e9\u4e2d", "v\n\"\u0000", "empty", ""), r.snapshotMetadata());
            }
        }
    }

    @Test
    void theJumpSizeAndTheBudgetAreTheRestoringIndexsOwn() {
        Path file = dir.resolve("j.snap");
        SnapshotStates states = new SnapshotStates(11, 6, 20, 60);
        List<KvEvent> events = states.events(1500);
        try (PrefixIndex original =
                PrefixIndex.create(IndexConfig.builder().jumpSize(2).build())) {
            SnapshotStates.apply(events, original);
            original.snapshot(file);
            for (Impl impl : IMPLS) {
                IndexConfig other = IndexConfig.builder()
                        .jumpSize(64)
                        .memoryBudgetBytes(1L << 30)
                        .build();
                try (PrefixIndex r = impl.restore().apply(file, other)) {
                    assertEquals(states.fingerprint(original), states.fingerprint(r), impl.name());
                    assertEquals(64, r.config().jumpSize());
                }
            }
        }
    }
}
