package io.kvprefix.opstream;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.EventStatus;
import io.kvprefix.Implementation;
import io.kvprefix.IndexConfig;
import io.kvprefix.PrefixIndex;
import io.kvprefix.opstream.testing.Differential;
import io.kvprefix.opstream.testing.OpStreamGenerator;
import io.kvprefix.opstream.testing.RestartingIndex;
import io.kvprefix.testing.TestScale;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Restart in the middle of a stream (docs/SNAPSHOT.md): over seeded random op streams
 * ({@link OpStreamGenerator}), each implementation is snapshotted, closed and restored at one to
 * three random points ({@link RestartingIndex}), into the same implementation and into each other
 * one (the format is shared), and every later answer, status and counter is compared with the
 * oracle fed the whole stream ({@link Differential}). Implementations: heap, off-heap with the
 * Java search, off-heap with the native kernel (what {@code --impl offheap} is when the library
 * loads), so every {@code --impl}.
 *
 * <p>Each setup prints its master seed; {@code -Dkvprefix.test.seed=N} replays it.
 */
class SnapshotDifferentialTest {
    @TempDir
    Path dir;

    record Setup(String name, IndexConfig config, int minIds, int maxIds, int streams, int longStreams) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Setup> setups() {
        return Stream.of(
                new Setup("jump4", IndexConfig.builder().build(), 1, 8, 40, 600),
                new Setup(
                        "slots3-jump8",
                        IndexConfig.builder().maxWorkers(3).jumpSize(8).build(),
                        0,
                        0,
                        30,
                        400),
                new Setup(
                        "slots256-jump2-wide",
                        IndexConfig.builder().maxWorkers(256).jumpSize(2).build(),
                        100,
                        140,
                        4,
                        40),
                new Setup(
                        "seed7-chainSeed0",
                        IndexConfig.builder().seed(7).chainSeed(0).build(),
                        1,
                        12,
                        20,
                        300));
    }

    private static final List<String> IMPLS = List.of("heap", "offheap-java", "offheap-native");

    private static PrefixIndex create(String impl, IndexConfig c) {
        return switch (impl) {
            case "heap" ->
                PrefixIndex.heap(
                        c.toBuilder().implementation(Implementation.PORTABLE).build());
            case "offheap-java" ->
                PrefixIndex.offHeap(
                        c.toBuilder().implementation(Implementation.PORTABLE).build());
            default ->
                PrefixIndex.offHeap(
                        c.toBuilder().implementation(Implementation.NATIVE).build());
        };
    }

    private static PrefixIndex restore(String impl, Path file, IndexConfig c) {
        return switch (impl) {
            case "heap" ->
                PrefixIndex.restoreHeap(
                        file,
                        c.toBuilder().implementation(Implementation.PORTABLE).build());
            case "offheap-java" ->
                PrefixIndex.restore(
                        file,
                        c.toBuilder().implementation(Implementation.PORTABLE).build());
            default ->
                PrefixIndex.restore(
                        file,
                        c.toBuilder().implementation(Implementation.NATIVE).build());
        };
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("setups")
    void restoredIndexesAnswerLikeTheOracleFedTheWholeStream(Setup setup) throws IOException {
        long master = TestScale.seed();
        System.out.println("SnapshotDifferentialTest " + setup.name() + ": master " + TestScale.replay(master));
        SplittableRandom seeds = new SplittableRandom(master);
        int streams = TestScale.iterations(setup.streams(), setup.longStreams());
        Differential.Summary total = Differential.Summary.empty();
        int restarts = 0;
        for (int i = 0; i < streams; i++) {
            long seed = seeds.nextLong();
            OpStreamGenerator.Options options = OpStreamGenerator.Options.random(
                    new SplittableRandom(seed ^ 0x5DEECE66DL), setup.config(), setup.minIds(), setup.maxIds());
            List<Op> ops = new OpStreamGenerator(seed, options).generate();
            SplittableRandom r = new SplittableRandom(seed);
            int[] cuts = new int[1 + r.nextInt(3)];
            for (int k = 0; k < cuts.length; k++) {
                cuts[k] = r.nextInt(ops.size());
            }
            List<RestartingIndex> made = new ArrayList<>();
            List<Differential.Candidate> candidates = new ArrayList<>();
            for (String from : IMPLS) {
                for (String to : IMPLS) {
                    Path file = Files.createDirectories(dir.resolve(i + "-" + from + "-" + to))
                            .resolve("index.snap");
                    BiFunction<String, IndexConfig, PrefixIndex> f = (x, c) -> {
                        Function<Path, PrefixIndex> back = p -> restore(to, p, c);
                        RestartingIndex ri = new RestartingIndex(create(from, c), back, file, cuts);
                        made.add(ri);
                        return ri;
                    };
                    candidates.add(new Differential.Candidate(from + "->" + to, c -> f.apply(from, c)));
                }
            }
            String label = setup.name() + " stream " + i + " (master " + TestScale.replay(master) + ") restarts at "
                    + java.util.Arrays.toString(cuts) + " " + options;
            Differential d = Differential.against(setup.config(), candidates.toArray(Differential.Candidate[]::new))
                    .checkEvery(16);
            total = total.plus(d.run(label, seed, ops));
            for (RestartingIndex ri : made) {
                restarts += ri.restarts();
            }
        }
        System.out.printf(
                "SnapshotDifferentialTest %s: %d streams, %d restarts: %s%n", setup.name(), streams, restarts, total);
        assertTrue(restarts >= streams * IMPLS.size() * IMPLS.size(), "every stream restarted every candidate");
        assertTrue(total.count(EventStatus.OK) > 0 && total.count(EventStatus.BLOCK_NOT_FOUND) > 0, total.toString());
        assertTrue(total.nonEmptyMatches() * 2 > total.matches(), total.toString());
    }
}
