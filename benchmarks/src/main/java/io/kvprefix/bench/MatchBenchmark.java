package io.kvprefix.bench;

import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.opstream.Implementations;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Match suite (docs/BENCHMARKS.md section 1): one request of local hashes against an index where every
 * worker also holds {@link #FILLER} (2,048) unrelated blocks, for 16 and 256 workers, prefix depths
 * 8, 64 and 512, and the scenarios {@code all-hit}, {@code early-divergence} (every worker holds the
 * first {@code depth / 8} blocks, at least 1, then others) and {@code holes} (every other worker has
 * removed one middle block, its descendants still held).
 *
 * <p>{@link #setup()} checks every worker's depth against the scenario's construction and refuses
 * to run otherwise; {@code BenchmarkSetupTest} runs it for every parameter combination.
 *
 * <p>Thread-safety: JMH state shared by the benchmark threads ({@link Scope#Benchmark}); each
 * thread uses its own {@link MatchResult}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 2,
        jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class MatchBenchmark {
    /** Unrelated blocks per worker (tests lower it to keep setup checks quick). */
    public static int FILLER = 2048;

    @Param({"heap", "offheap-java", "offheap-native"})
    public String impl;

    @Param({"16", "256"})
    public int workers;

    @Param({"8", "64", "512"})
    public int depth;

    @Param({"all-hit", "early-divergence", "holes"})
    public String scenario;

    PrefixIndex index;
    long[] query;
    int[] expected;

    @Setup(Level.Trial)
    public void setup() {
        index = Implementations.create(
                impl, IndexConfig.builder().maxWorkers(Math.max(64, workers)).build());
        SplittableRandom r = new SplittableRandom(7);
        query = new long[depth];
        for (int i = 0; i < depth; i++) {
            query[i] = r.nextLong();
        }
        expected = new int[workers];
        long e = 1;
        int shared = Math.max(1, depth / 8);
        for (int w = 0; w < workers; w++) {
            Worker worker = Worker.of(w);
            long[] hashes = new long[depth];
            long[] locals = query.clone();
            for (int i = 0; i < depth; i++) {
                hashes[i] = e++;
            }
            expected[w] = depth;
            if (scenario.equals("early-divergence")) {
                for (int i = shared; i < depth; i++) {
                    locals[i] = r.nextLong();
                }
                expected[w] = shared;
            }
            BenchFixtures.ok(index.apply(KvEvent.Stored.root(worker, hashes, locals)));
            if (scenario.equals("holes") && w % 2 == 1 && depth > 1) {
                int hole = 1 + (w % (depth - 1));
                BenchFixtures.ok(index.apply(new KvEvent.Removed(worker, new long[] {hashes[hole]})));
                expected[w] = hole;
            }
            e = BenchFixtures.filler(index, worker, FILLER, r, e);
        }
        MatchResult m = index.match(query);
        BenchFixtures.checkDepths(m, expected, impl + "/" + scenario);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        index.close();
    }

    /** Per-thread reusable result. */
    @State(Scope.Thread)
    public static class Result {
        public final MatchResult result = new MatchResult(256);
    }

    @Benchmark
    public MatchResult match(Result r) {
        index.match(query, 0, query.length, r.result);
        return r.result;
    }
}
