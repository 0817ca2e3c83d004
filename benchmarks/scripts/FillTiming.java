import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import java.util.SplittableRandom;

/**
 * Times filling a fresh default index with N (worker, block) pairs: 16 workers, root stores of 64
 * blocks, the events made before the clock starts; prints one line per repetition. One JVM per run:
 * {@code java --enable-native-access=ALL-UNNAMED -Xmx12g -cp cli/target/kvprefix-cli.jar
 * benchmarks/scripts/FillTiming.java 10000000 2} (benchmarks/RESULTS.md section 8.1). A third
 * argument {@code sized} fills an index made for N blocks and 16 workers instead, so that the timed
 * region holds no growth of the index's tables (benchmarks/JOURNAL.md section 11.5).
 *
 * <p>Thread-safety: a program of one thread.
 */
public class FillTiming {
    public static void main(String[] args) {
        if (args.length < 2 || args.length > 3 || (args.length == 3 && !args[2].equals("sized"))) {
            System.err.println("usage: FillTiming PAIRS REPETITIONS [sized] (PAIRS a multiple of 64)");
            System.exit(2);
        }
        boolean sized = args.length == 3;
        long n = Long.parseLong(args[0]);
        int reps = Integer.parseInt(args[1]);
        int workers = 16;
        for (int rep = 0; rep < reps; rep++) {
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
                events[s] = KvEvent.Stored.root(Worker.of(s % workers), names, locals);
            }
            IndexConfig config = sized
                    ? IndexConfig.builder().expectedBlocks(n).maxWorkers(workers).build()
                    : IndexConfig.defaults();
            try (PrefixIndex index = PrefixIndex.create(config)) {
                long t0 = System.nanoTime();
                for (KvEvent.Stored e : events) {
                    if (index.apply(e) != EventStatus.OK) {
                        throw new AssertionError("refused: " + e);
                    }
                }
                long t = System.nanoTime() - t0;
                System.out.printf(
                        "pairs %d%s rep %d: %.1f ms, %.1f ns/pair, blocks %d%n",
                        n, sized ? " sized" : "", rep, t / 1e6, t / (double) n, index.stats().blocks());
            }
        }
    }
}
