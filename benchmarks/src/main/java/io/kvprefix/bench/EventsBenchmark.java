package io.kvprefix.bench;

import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
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
 * Events suite (docs/BENCHMARKS.md section 1): write throughput in steady state. Sixteen workers each
 * hold {@link #PREFILL} (4,096) blocks; one operation stores a batch of 1, 16 or 64 blocks continuing one
 * of the worker's sequences and then removes it again ({@code storeRemove}), or stores a batch for
 * a spare worker and clears that worker ({@code storeClear}). Divide by the batch size for a
 * per-block figure.
 *
 * <p>{@link #setup()} checks that a cycle answers ok and leaves the block counts as they were.
 *
 * <p>Thread-safety: JMH state for one benchmark thread (writes are single-writer here).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 2,
        jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class EventsBenchmark {
    static final int WORKERS = 16;
    /** Blocks per worker before measuring (tests lower it to keep setup checks quick). */
    public static int PREFILL = 4096;

    static final int CYCLE = 1024;

    @Param({"heap", "offheap-java", "offheap-native"})
    public String impl;

    @Param({"1", "16", "64"})
    public int batch;

    PrefixIndex index;
    KvEvent.Stored[] stores;
    KvEvent.Removed[] removes;
    KvEvent.Stored[] spareStores;
    KvEvent.Cleared spareClear;
    int next;

    @Setup(Level.Trial)
    public void setup() {
        index = Implementations.create(
                impl, IndexConfig.builder().maxWorkers(64).build());
        SplittableRandom r = new SplittableRandom(11);
        long e = 1;
        long[] parents = new long[WORKERS * (PREFILL / 64)];
        int pi = 0;
        for (int w = 0; w < WORKERS; w++) {
            for (int k = 0; k < PREFILL; k += 64) {
                long[] he = new long[64];
                long[] hl = new long[64];
                for (int i = 0; i < 64; i++) {
                    he[i] = e++;
                    hl[i] = r.nextLong();
                }
                BenchFixtures.ok(index.apply(KvEvent.Stored.root(Worker.of(w), he, hl)));
                parents[pi++] = he[63]; // the last block of this sequence: new batches continue it
            }
        }
        stores = new KvEvent.Stored[CYCLE];
        removes = new KvEvent.Removed[CYCLE];
        spareStores = new KvEvent.Stored[CYCLE];
        Worker spare = Worker.of(WORKERS);
        for (int c = 0; c < CYCLE; c++) {
            int seq = r.nextInt(pi);
            Worker w = Worker.of(seq / (PREFILL / 64));
            long[] he = new long[batch];
            long[] hl = new long[batch];
            for (int i = 0; i < batch; i++) {
                he[i] = e++;
                hl[i] = r.nextLong();
            }
            stores[c] = KvEvent.Stored.after(w, parents[seq], he, hl);
            removes[c] = new KvEvent.Removed(w, he.clone());
            spareStores[c] = KvEvent.Stored.root(spare, he.clone(), hl.clone());
        }
        spareClear = new KvEvent.Cleared(spare);
        long before = index.stats().blocks();
        for (int c = 0; c < CYCLE; c++) {
            BenchFixtures.ok(index.apply(stores[c]));
            BenchFixtures.ok(index.apply(removes[c]));
            BenchFixtures.ok(index.apply(spareStores[c]));
            BenchFixtures.ok(index.apply(spareClear));
        }
        if (index.stats().blocks() != before) {
            throw new IllegalStateException("a store/remove cycle changed the block count");
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        index.close();
    }

    @Benchmark
    public EventStatus storeRemove() {
        int c = next++ & (CYCLE - 1);
        index.apply(stores[c]);
        return index.apply(removes[c]);
    }

    @Benchmark
    public EventStatus storeClear() {
        int c = next++ & (CYCLE - 1);
        index.apply(spareStores[c]);
        return index.apply(spareClear);
    }
}
