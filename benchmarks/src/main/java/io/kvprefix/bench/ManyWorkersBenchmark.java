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
 * Many workers, few holders (issue 13, item 6): {@link #PAIRS} (worker, block) pairs in chains of
 * {@link #CHAIN} blocks, each chain held by {@code holders} of {@code workers} workers, and a match
 * of one stored chain (its holders answer with its full depth). Inline bitsets cost a bit per worker
 * slot in every entry whoever holds it; this measures what a match costs when the slots are many
 * and the holders few. Memory per pair of the same states: {@code kvprefix footprint --workers W
 * --sharing H}.
 *
 * <p>{@link #setup()} checks the answers of every query and refuses to run otherwise;
 * {@code BenchmarkSetupTest} runs it for every parameter combination.
 *
 * <p>Thread-safety: JMH state shared by the benchmark threads; each thread uses its own result.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 2,
        jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class ManyWorkersBenchmark {
    /** (worker, block) pairs in the index (tests lower it to keep setup checks quick). */
    public static int PAIRS = 1 << 20;

    static final int CHAIN = 64;
    static final int QUERIES = 64;

    @Param({"heap", "offheap-java", "offheap-native"})
    public String impl;

    @Param({"16", "1024", "10000"})
    public int workers;

    @Param({"1", "4"})
    public int holders;

    PrefixIndex index;
    long[][] queries;
    int next;

    @Setup(Level.Trial)
    public void setup() {
        index = Implementations.create(
                impl, IndexConfig.builder().maxWorkers(workers).build());
        SplittableRandom r = new SplittableRandom(11);
        int chains = Math.max(QUERIES, PAIRS / (CHAIN * holders));
        queries = new long[QUERIES][];
        long name = 1;
        for (int c = 0; c < chains; c++) {
            long[] locals = new long[CHAIN];
            for (int i = 0; i < CHAIN; i++) {
                locals[i] = r.nextLong();
            }
            for (int k = 0; k < holders; k++) {
                long[] names = new long[CHAIN];
                for (int i = 0; i < CHAIN; i++) {
                    names[i] = name++;
                }
                Worker w = Worker.of(((long) c * holders + k) % workers);
                BenchFixtures.ok(index.apply(KvEvent.Stored.root(w, names, locals)));
            }
            if (c < QUERIES) {
                queries[c] = locals;
            }
        }
        for (long[] q : queries) {
            MatchResult m = index.match(q);
            if (m.size() != holders || m.maxDepth() != CHAIN) {
                throw new IllegalStateException(impl + ": a stored chain matched " + m + ", expected " + holders
                        + " holders at depth " + CHAIN);
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        index.close();
    }

    /** Per-thread reusable result. */
    @State(Scope.Thread)
    public static class Result {
        public final MatchResult result = new MatchResult(16);
    }

    @Benchmark
    public MatchResult match(Result r) {
        long[] q = queries[next++ & (QUERIES - 1)];
        index.match(q, 0, q.length, r.result);
        return r.result;
    }
}
