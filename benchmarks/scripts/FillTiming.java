import io.kvprefix.*;
import java.util.SplittableRandom;
/**
 * Times filling a fresh default index with N (worker, block) pairs: 16 workers, root stores of 64
 * blocks, the events made before the clock starts. One JVM per run:
 * {@code java --enable-native-access=ALL-UNNAMED -Xmx12g -cp cli/target/kvprefix-cli.jar
 * benchmarks/scripts/FillTiming.java 10000000 2} (benchmarks/RESULTS.md section 8).
 */
public class FillTiming {
    public static void main(String[] a) {
        long n = Long.parseLong(a[0]); int workers = 16; int reps = Integer.parseInt(a[1]);
        for (int rep = 0; rep < reps; rep++) {
            SplittableRandom r = new SplittableRandom(7);
            long name = 1;
            int seqs = (int) (n / 64);
            KvEvent.Stored[] ev = new KvEvent.Stored[seqs];
            for (int s = 0; s < seqs; s++) {
                long[] names = new long[64], locals = new long[64];
                for (int i = 0; i < 64; i++) { names[i] = name++; locals[i] = r.nextLong(); }
                ev[s] = KvEvent.Stored.root(Worker.of(s % workers), names, locals);
            }
            try (PrefixIndex index = PrefixIndex.create(IndexConfig.defaults())) {
                long t0 = System.nanoTime();
                for (KvEvent.Stored e : ev) { if (index.apply(e) != EventStatus.OK) throw new AssertionError(); }
                long t = System.nanoTime() - t0;
                System.out.printf("pairs %d rep %d: %.1f ms, %.1f ns/pair, blocks %d%n", n, rep, t / 1e6, t / (double) n, index.stats().blocks());
            }
        }
    }
}
