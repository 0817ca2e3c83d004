package io.kvprefix.bench;

import io.kvprefix.BlockHasher;
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
 * Hash-and-match suite (docs/BENCHMARKS.md section 1, issue 5): what a router pays per request, from
 * tokens to per-worker depths, with 16-token blocks: {@code offheap-native} hashes and matches in
 * one downcall; {@code offheap-java} hashes in Java and matches in Java; {@code heap} is the
 * baseline (Java hashing, on-heap index). Requests of 8k and 128k tokens (512 and 8,192 blocks);
 * 16 or 256 workers; in {@code all-hit} every worker holds the whole request, in {@code half}
 * worker w holds the first {@code (w+1)/workers} of it (so the deepest match is the full request
 * and depths spread out). Every worker also holds {@link MatchBenchmark#FILLER} unrelated blocks.
 *
 * <p>{@link #setup()} checks every worker's depth against the construction.
 *
 * <p>Thread-safety: JMH state shared by benchmark threads; each thread has its own result.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 2,
        jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class HashAndMatchBenchmark {
    static final int BLOCK = 16;

    @Param({"heap", "offheap-java", "offheap-native"})
    public String impl;

    @Param({"8192", "131072"})
    public int tokens;

    @Param({"16", "256"})
    public int workers;

    @Param({"all-hit", "half"})
    public String scenario;

    PrefixIndex index;
    int[] request;
    int[] expected;

    @Setup(Level.Trial)
    public void setup() {
        index = Implementations.create(
                impl,
                IndexConfig.builder()
                        .blockSize(BLOCK)
                        .maxWorkers(Math.max(64, workers))
                        .build());
        SplittableRandom r = new SplittableRandom(5);
        request = new int[tokens];
        for (int i = 0; i < tokens; i++) {
            request[i] = r.nextInt(150_000);
        }
        BlockHasher h = BlockHasher.builder().blockSize(BLOCK).build();
        long[] locals = h.localHashes(request);
        int blocks = locals.length;
        expected = new int[workers];
        long e = 1;
        for (int w = 0; w < workers; w++) {
            int held = scenario.equals("all-hit") ? blocks : Math.max(1, (int) ((long) blocks * (w + 1) / workers));
            long[] names = new long[held];
            for (int i = 0; i < held; i++) {
                names[i] = e++;
            }
            BenchFixtures.ok(
                    index.apply(KvEvent.Stored.root(Worker.of(w), names, java.util.Arrays.copyOf(locals, held))));
            expected[w] = held;
            e = BenchFixtures.filler(index, Worker.of(w), MatchBenchmark.FILLER, r, e);
        }
        MatchResult m = index.match(request);
        BenchFixtures.checkDepths(m, expected, impl);
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
    public MatchResult hashAndMatch(Result r) {
        index.match(request, 0, request.length, r.result);
        return r.result;
    }
}
