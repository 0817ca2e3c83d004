package io.kvprefix.testing;

import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.PrefixIndex;
import io.kvprefix.SnapshotException;
import io.kvprefix.Worker;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

/**
 * A child process for {@code ForgedSnapshotFuzzTest}: saves a real snapshot, then per round damages a
 * few bytes of its worker records or name maps, recomputes every CRC (so only the structural checks
 * of docs/SNAPSHOT.md section 4 stand between the damage and the memory), restores it and, when the
 * restore accepts it, uses the index the way a listener would next: a match, a {@code cleared} for
 * every worker, a store. A number placed in memory unchecked crashes this process (SIGSEGV), which
 * the parent sees as its exit status; each round is announced on standard output before it runs.
 *
 * <p>Arguments: seed, rounds, a scratch folder. Thread-safety: a program; one thread.
 */
public final class ForgedSnapshotMain {
    private static final IndexConfig CONFIG =
            IndexConfig.builder().maxWorkers(64).build();

    private ForgedSnapshotMain() {}

    public static void main(String[] args) throws Exception {
        long seed = Long.parseLong(args[0]);
        int rounds = Integer.parseInt(args[1]);
        Path dir = Path.of(args[2]);
        SnapshotStates states = new SnapshotStates(5, 10, 40, 120);
        Path good = dir.resolve("good.snap");
        try (PrefixIndex index = PrefixIndex.create(CONFIG)) {
            SnapshotStates.apply(states.events(4000), index);
            index.snapshot(good, Map.of("engine", "42"));
        }
        byte[] bytes = Files.readAllBytes(good);
        ByteBuffer h = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        long workers = h.getLong(64 + 32 * 2 + 8); // the workers section; the runs and names sections follow
        long names = h.getLong(64 + 32 * 4 + 8);
        long to = names + h.getLong(64 + 32 * 4 + 16);
        List<long[]> values = values(h, workers, names); // (file offset, worker) of every name's value
        SplittableRandom r = new SplittableRandom(seed);
        Path p = dir.resolve("forged.snap");
        int accepted = 0;
        for (int i = 0; i < rounds; i++) {
            byte[] b = bytes.clone();
            if (r.nextBoolean()) { // a name given another worker's block: it exists, but is it held?
                long[] to1 = values.get(r.nextInt(values.size()));
                long[] from1 = values.get(r.nextInt(values.size()));
                ByteBuffer x = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
                x.putInt((int) to1[0], x.getInt((int) from1[0]));
            } else {
                int flips = 1 + r.nextInt(4);
                long from = r.nextBoolean() ? names : workers; // half of these in the name maps alone
                for (int k = 0; k < flips; k++) {
                    int at = (int) (from + r.nextLong(to - from));
                    b[at] = (byte) (b[at] ^ (1 + r.nextInt(255)));
                }
            }
            forgeCrcs(b);
            Files.write(p, b);
            System.out.println("round " + i);
            System.out.flush();
            try (PrefixIndex x = (i & 1) == 0 ? PrefixIndex.restore(p, CONFIG) : PrefixIndex.restoreHeap(p, CONFIG)) {
                accepted++; // another valid state (a changed hash, say) cannot be told from the truth
                use(x, states);
            } catch (SnapshotException e) {
                if (!e.getMessage().startsWith("snapshot " + p + ": ")) {
                    throw e;
                }
            }
        }
        System.out.println("accepted " + accepted + " of " + rounds);
    }

    /** The file offset and worker of every non-empty value in the name maps (docs/SNAPSHOT.md section 3.3). */
    private static List<long[]> values(ByteBuffer h, long workers, long names) {
        List<long[]> out = new java.util.ArrayList<>();
        int n = (int) (h.getLong(64 + 32 * 2 + 16) / 56);
        long at = names;
        for (int w = 0; w < n; w++) {
            long rec = workers + 56L * w;
            boolean tagged = h.getInt((int) rec + 40) != 0;
            int segments = h.getInt((int) rec + 24);
            for (int k = 0; k < segments; k++) {
                int cap = h.getInt((int) at);
                long v = at + 16 + 8L * cap;
                for (int i = 0; i < cap; i++) {
                    if (h.getInt((int) (v + 4L * i)) != 0) {
                        out.add(new long[] {v + 4L * i, w});
                    }
                }
                long table = 12L * cap + (tagged ? cap : 0);
                at += 16 + table + (-table & 7);
            }
        }
        return out;
    }

    /** What a listener does next with a restored index: match, clear every worker, store. */
    private static void use(PrefixIndex x, SnapshotStates states) {
        x.match(states.query());
        List<Worker> workers = x.workers();
        for (Worker w : workers) {
            x.apply(new KvEvent.Cleared(w));
        }
        x.match(states.query());
        for (KvEvent e : states.events(50)) {
            x.apply(e);
        }
    }

    /** Recomputes every section's CRC and the header's: damage that the CRCs cannot see any more. */
    public static void forgeCrcs(byte[] b) {
        ByteBuffer h = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        for (int t = 0; t < 7; t++) {
            int e = 64 + 32 * t;
            CRC32C c = new CRC32C();
            c.update(b, (int) h.getLong(e + 8), (int) h.getLong(e + 16));
            h.putInt(e + 24, (int) c.getValue());
        }
        CRC32C c = new CRC32C();
        c.update(b, 0, 60);
        c.update(b, 64, 7 * 32);
        h.putInt(60, (int) c.getValue());
    }
}
