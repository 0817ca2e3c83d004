import io.kvprefix.EventStatus;
import io.kvprefix.Implementation;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.SplittableRandom;

/**
 * Counts what one write costs in instructions (benchmarks/JOURNAL.md section 13.6): the cycle of
 * {@code EventsBenchmark.storeRemove} (the same index, prefill and events, seed 11) or a fill of N
 * pairs as {@code FillTiming} makes it, run under {@code valgrind --tool=callgrind} with the counters
 * zeroed once the JIT is warm and dumped after the counted region ({@code cgmark.c}'s client
 * requests; outside valgrind they do nothing and the printed ns are the figure).
 *
 * <p>Thread-safety: a program of one thread.
 */
public class RunOpenCount {
    static final int WORKERS = 16;
    static final int PREFILL = 4096;
    static final int CYCLE = 1024;
    static MethodHandle zero;
    static MethodHandle dump;

    public static void main(String[] args) throws Throwable {
        if (args.length < 3) {
            System.err.println("usage: RunOpenCount LIBCGMARK store-remove BATCH WARM COUNT ROUNDS | LIBCGMARK fill PAIRS sized|default");
            System.exit(2);
        }
        SymbolLookup lib = SymbolLookup.libraryLookup(Path.of(args[0]), Arena.global());
        Linker l = Linker.nativeLinker();
        zero = l.downcallHandle(lib.find("cgmark_zero").orElseThrow(), FunctionDescriptor.ofVoid());
        dump = l.downcallHandle(lib.find("cgmark_dump").orElseThrow(), FunctionDescriptor.ofVoid(ValueLayout.ADDRESS));
        if (args[1].equals("store-remove")) {
            storeRemove(Integer.parseInt(args[2]), Long.parseLong(args[3]), Long.parseLong(args[4]), Integer.parseInt(args[5]));
        } else {
            fill(Long.parseLong(args[2]), args[3].equals("sized"));
        }
    }

    /** The label made before the counters are zeroed, so that the counted region ends at the dump. */
    static MemorySegment label(String label) {
        return Arena.global().allocateFrom(label);
    }

    static void mark(MemorySegment label) throws Throwable {
        dump.invokeExact(label);
    }

    static void storeRemove(int batch, long warm, long count, int rounds) throws Throwable {
        IndexConfig config = IndexConfig.builder().maxWorkers(64).implementation(Implementation.PORTABLE).build();
        try (PrefixIndex index = PrefixIndex.offHeap(config)) {
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
                    ok(index.apply(KvEvent.Stored.root(Worker.of(w), he, hl)));
                    parents[pi++] = he[63];
                }
            }
            KvEvent.Stored[] stores = new KvEvent.Stored[CYCLE];
            KvEvent.Removed[] removes = new KvEvent.Removed[CYCLE];
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
            }
            long before = index.stats().blocks();
            int oks = cycles(index, stores, removes, 0, warm);
            for (int round = 0; round < rounds; round++) {
                MemorySegment label = label("store-remove batch " + batch + " round " + round + " cycles " + count);
                zero.invokeExact();
                long t0 = System.nanoTime();
                oks += cycles(index, stores, removes, warm + round * count, count);
                long t = System.nanoTime() - t0;
                mark(label);
                System.out.printf("store-remove batch %d round %d: %d cycles, %.1f ns/cycle%n", batch, round, count, t / (double) count);
            }
            if (oks != 2 * (warm + rounds * count) || index.stats().blocks() != before) {
                throw new IllegalStateException("a cycle was refused or changed the block count");
            }
        }
    }

    static int cycles(PrefixIndex index, KvEvent.Stored[] stores, KvEvent.Removed[] removes, long from, long count) {
        int oks = 0;
        for (long k = from; k < from + count; k++) {
            int c = (int) k & (CYCLE - 1);
            oks += index.apply(stores[c]) == EventStatus.OK ? 1 : 0;
            oks += index.apply(removes[c]) == EventStatus.OK ? 1 : 0;
        }
        return oks;
    }

    static void fill(long n, boolean sized) throws Throwable {
        SplittableRandom r = new SplittableRandom(7);
        long name = 1;
        KvEvent.Stored[] events = new KvEvent.Stored[(int) (n / 64)];
        for (int s = 0; s < events.length; s++) {
            long[] names = new long[64];
            long[] locals = new long[64];
            for (int i = 0; i < 64; i++) {
                names[i] = name++;
                locals[i] = r.nextLong();
            }
            events[s] = KvEvent.Stored.root(Worker.of(s % WORKERS), names, locals);
        }
        IndexConfig.Builder b = sized ? IndexConfig.builder().expectedBlocks(n).maxWorkers(WORKERS) : IndexConfig.defaults().toBuilder();
        try (PrefixIndex index = PrefixIndex.offHeap(b.implementation(Implementation.PORTABLE).build())) {
            MemorySegment label = label("fill " + n + (sized ? " sized" : " default"));
            zero.invokeExact();
            long t0 = System.nanoTime();
            for (KvEvent.Stored e : events) {
                ok(index.apply(e));
            }
            long t = System.nanoTime() - t0;
            mark(label);
            System.out.printf("fill %d %s: %.1f ms, %.1f ns/pair%n", n, sized ? "sized" : "default", t / 1e6, t / (double) n);
        }
    }

    static void ok(EventStatus s) {
        if (s != EventStatus.OK) {
            throw new AssertionError(s);
        }
    }
}
