package io.kvprefix.bench;

import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.opstream.Implementations;
import java.util.ArrayList;
import java.util.List;
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
 * Budget suite (docs/BENCHMARKS.md section 1): what a store refused for memory costs. An off-heap
 * index with a memory budget of {@link #BUDGET_MIB} MiB is filled by sixteen workers until it refuses
 * stores of 64, then 16, then 1 block; {@code refusedStore} then stores a batch of 16 blocks
 * continuing one of their sequences, answered {@code capacity_exceeded}. {@code acceptedStoreRemove}
 * does what {@link EventsBenchmark#storeRemove} does on an index without a budget that holds the same
 * blocks: the store is accepted and removed again (two events).
 *
 * <p>{@link #setup()} checks that every refused store is refused and changes nothing, and that an
 * accepted cycle answers ok and leaves the block count as it was.
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
public class BudgetBenchmark {
    static final int WORKERS = 16;
    /** The budget of the full index (tests lower it to keep setup checks quick). */
    public static int BUDGET_MIB = 64;

    static final int CYCLE = 1024;
    static final int BATCH = 16;

    @Param({"offheap-java", "offheap-native"})
    public String impl;

    PrefixIndex full;
    PrefixIndex open;
    KvEvent.Stored[] stores;
    KvEvent.Removed[] removes;
    int next;

    @Setup(Level.Trial)
    public void setup() {
        full = Implementations.create(
                impl,
                IndexConfig.builder()
                        .maxWorkers(64)
                        .memoryBudgetBytes((long) BUDGET_MIB << 20)
                        .build());
        open = Implementations.create(impl, IndexConfig.builder().maxWorkers(64).build());
        SplittableRandom r = new SplittableRandom(13);
        long[] name = {1};
        List<KvEvent.Stored> kept = new ArrayList<>();
        for (int size : new int[] {64, 16, 1}) { // fill the budget to its last bytes
            for (int w = 0; ; w = (w + 1) % WORKERS) {
                KvEvent.Stored s = chain(Worker.of(w), size, r, name);
                if (full.apply(s) != EventStatus.OK) {
                    break;
                }
                kept.add(s);
            }
        }
        for (KvEvent.Stored s : kept) {
            BenchFixtures.ok(open.apply(s));
        }
        stores = new KvEvent.Stored[CYCLE];
        removes = new KvEvent.Removed[CYCLE];
        for (int c = 0; c < CYCLE; c++) {
            KvEvent.Stored parent = kept.get(r.nextInt(kept.size()));
            long[] he = new long[BATCH];
            long[] hl = new long[BATCH];
            for (int i = 0; i < BATCH; i++) {
                he[i] = name[0]++;
                hl[i] = r.nextLong();
            }
            long last = parent.blockHashes()[parent.blockHashes().length - 1];
            stores[c] = KvEvent.Stored.after(parent.worker(), last, he, hl);
            removes[c] = new KvEvent.Removed(parent.worker(), he.clone());
        }
        check();
    }

    private static KvEvent.Stored chain(Worker w, int size, SplittableRandom r, long[] name) {
        long[] he = new long[size];
        long[] hl = new long[size];
        for (int i = 0; i < size; i++) {
            he[i] = name[0]++;
            hl[i] = r.nextLong();
        }
        return KvEvent.Stored.root(w, he, hl);
    }

    private void check() {
        long blocks = full.stats().blocks();
        long bytes = full.stats().bytesUsed();
        for (KvEvent.Stored s : stores) {
            if (full.apply(s) != EventStatus.CAPACITY_EXCEEDED) {
                throw new IllegalStateException("a store on the full index was not refused");
            }
        }
        if (full.stats().blocks() != blocks || full.stats().bytesUsed() != bytes) {
            throw new IllegalStateException("refused stores changed the full index");
        }
        if (open.stats().blocks() != blocks) {
            throw new IllegalStateException(
                    "the indexes hold different blocks: " + open.stats().blocks());
        }
        for (int c = 0; c < CYCLE; c++) {
            BenchFixtures.ok(open.apply(stores[c]));
            BenchFixtures.ok(open.apply(removes[c]));
        }
        if (open.stats().blocks() != blocks) {
            throw new IllegalStateException("a store/remove cycle changed the block count");
        }
    }

    /** The full index's blocks, for the setup test. */
    long blocksHeld() {
        return full.stats().blocks();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        full.close();
        open.close();
    }

    @Benchmark
    public EventStatus refusedStore() {
        return full.apply(stores[next++ & (CYCLE - 1)]);
    }

    @Benchmark
    public EventStatus acceptedStoreRemove() {
        int c = next++ & (CYCLE - 1);
        open.apply(stores[c]);
        return open.apply(removes[c]);
    }
}
