package io.kvprefix.opstream;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.EventStatus;
import io.kvprefix.Implementation;
import io.kvprefix.IndexConfig;
import io.kvprefix.PrefixIndex;
import io.kvprefix.opstream.testing.Differential;
import io.kvprefix.opstream.testing.OpStreamGenerator;
import io.kvprefix.testing.TestScale;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every index (heap, off-heap with the Java search, off-heap with the native kernel) against the
 * oracle over random op streams ({@link OpStreamGenerator}), in several
 * configurations: every jump size that matters (1, 2, 8, 64), worker slots of 64, 256 and 1,024 with
 * as many workers or more, tiny slot limits (capacity_exceeded and slot reuse all the time), and
 * non-default seeds. Hundreds of streams in the default suite, thousands under {@code -Plong}.
 *
 * <p>Each setup prints its master seed; {@code -Dkvprefix.test.seed=N} replays a setup's streams and
 * {@code -Dkvprefix.test.stream=I} runs only its stream {@code I}. A failure names both, and writes the
 * failing stream as JSON lines (see {@link Differential}). After the streams, each setup checks that
 * they exercised what it is there for (statuses, depths, worker counts), so a generator that drifts
 * into easy streams fails too.
 */
class DifferentialTest {

    /** One configuration and how many streams to run on it. */
    record Setup(String name, IndexConfig config, int minIds, int maxIds, int streams, int longStreams) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Setup> setups() {
        return Stream.of(
                new Setup("jump1", IndexConfig.builder().jumpSize(1).build(), 1, 8, 120, 1500),
                new Setup("jump2", IndexConfig.builder().jumpSize(2).build(), 1, 8, 120, 1500),
                new Setup("jump8", IndexConfig.builder().jumpSize(8).build(), 1, 8, 120, 1500),
                new Setup("jump64", IndexConfig.builder().jumpSize(64).build(), 1, 8, 120, 1500),
                new Setup(
                        "slots64-jump8-wide",
                        IndexConfig.builder().maxWorkers(64).jumpSize(8).build(),
                        48,
                        72,
                        20,
                        250),
                new Setup(
                        "slots256-jump2-wide",
                        IndexConfig.builder().maxWorkers(256).jumpSize(2).build(),
                        200,
                        280,
                        10,
                        120),
                new Setup(
                        "slots1024-jump64-wide",
                        IndexConfig.builder().maxWorkers(1024).jumpSize(64).build(),
                        330,
                        400,
                        6,
                        80),
                new Setup(
                        "slots2-jump1",
                        IndexConfig.builder().maxWorkers(2).jumpSize(1).build(),
                        0,
                        0,
                        100,
                        1200),
                new Setup(
                        "slots3-jump8",
                        IndexConfig.builder().maxWorkers(3).jumpSize(8).build(),
                        0,
                        0,
                        100,
                        1200),
                new Setup(
                        "slots5-jump64",
                        IndexConfig.builder().maxWorkers(5).jumpSize(64).build(),
                        0,
                        0,
                        100,
                        1200),
                new Setup(
                        "seed7-chainSeed0-jump2",
                        IndexConfig.builder().seed(7).chainSeed(0).jumpSize(2).build(),
                        1,
                        12,
                        80,
                        800));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("setups")
    void everyIndexAgreesWithTheOracle(Setup setup) {
        long master = TestScale.seed();
        System.out.println("DifferentialTest " + setup.name() + ": master " + TestScale.replay(master));
        String only = System.getProperty("kvprefix.test.stream");
        int streams = TestScale.iterations(setup.streams(), setup.longStreams());
        Differential differential = Differential.against(
                setup.config(),
                new Differential.Candidate("heap", PrefixIndex::heap),
                new Differential.Candidate(
                        "offheap-java",
                        c -> PrefixIndex.offHeap(c.toBuilder()
                                .implementation(Implementation.PORTABLE)
                                .build())),
                new Differential.Candidate(
                        "offheap-native",
                        c -> PrefixIndex.offHeap(c.toBuilder()
                                .implementation(Implementation.NATIVE)
                                .build())));
        SplittableRandom seeds = new SplittableRandom(master);
        Differential.Summary total = Differential.Summary.empty();
        long start = System.nanoTime();
        for (int i = 0; i < streams; i++) {
            long seed = seeds.nextLong();
            if (only != null && !only.isBlank() && Integer.parseInt(only.strip()) != i) {
                continue;
            }
            OpStreamGenerator.Options options = OpStreamGenerator.Options.random(
                    new SplittableRandom(seed ^ 0x5DEECE66DL), setup.config(), setup.minIds(), setup.maxIds());
            List<Op> ops = new OpStreamGenerator(seed, options).generate();
            String label = setup.name() + " stream " + i + " (master " + TestScale.replay(master)
                    + ", -Dkvprefix.test.stream=" + i + ") " + options;
            total = total.plus(differential.run(label, seed, ops));
        }
        System.out.printf(
                "DifferentialTest %s: %d streams, %d ops in %.1f s: %s%n",
                setup.name(), streams, total.ops(), (System.nanoTime() - start) / 1e9, total);
        if (only == null || only.isBlank()) {
            checkCoverage(setup, total);
        }
    }

    /** The streams of a setup must have exercised what the setup is for. */
    private static void checkCoverage(Setup setup, Differential.Summary s) {
        String why = setup.name() + " streams were too easy: " + s;
        assertTrue(s.count(EventStatus.OK) > 0, why);
        assertTrue(s.count(EventStatus.BLOCK_NOT_FOUND) > 0, why);
        assertTrue(s.count(EventStatus.PARENT_BLOCK_NOT_FOUND) > 0, why);
        assertTrue(s.count(EventStatus.INVALID_BLOCK_SEQUENCE) > 0, why);
        assertTrue(s.nonEmptyMatches() * 2 > s.matches(), why + " (most matches should find some worker)");
        assertTrue(s.maxDepth() >= 8, why);
        if (setup.config().maxWorkers() <= 16) {
            assertTrue(s.count(EventStatus.CAPACITY_EXCEEDED) > 0, why);
        } else {
            assertTrue(
                    s.count(EventStatus.CAPACITY_EXCEEDED) == 0
                            || setup.maxIds() > setup.config().maxWorkers(),
                    why);
        }
        int slots = setup.config().maxWorkers();
        if (setup.minIds() > 40) {
            // dense slots: more known workers than 64 * k means some slot lies in word k or beyond
            int wanted = Math.min(slots, setup.minIds()) * 3 / 4;
            assertTrue(s.maxKnownWorkers() > wanted, why + " (at least " + wanted + " workers known at once)");
            assertTrue(s.maxMatchWorkers() > Math.min(64, wanted / 2), why + " (wide answers)");
        }
        if (setup.minIds() > 300) {
            assertTrue(s.maxKnownWorkers() > 256, why + " (wider than four 64-bit words)");
        }
    }
}
