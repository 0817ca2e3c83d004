package io.kvprefix.testing;

import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import java.nio.file.Path;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The child process of SnapshotCrashTest: builds a deterministic state of a few hundred thousand
 * blocks, then forever applies one more round of events and snapshots to {@code args[0]}, printing
 * {@code saved N} after each snapshot of round {@code N} is in place. The test kills it with
 * {@code SIGKILL} at random moments, most of them in the middle of a write.
 *
 * <p>Thread-safety: a program; one thread.
 */
public final class SnapshotWriterMain {
    private SnapshotWriterMain() {}

    static final int WORKERS = 8;

    public static void main(String[] args) {
        Path file = Path.of(args[0]);
        try (PrefixIndex index = PrefixIndex.create(IndexConfig.defaults())) {
            base(index);
            for (int round = 0; ; round++) {
                round(index, round);
                index.snapshot(file, Map.of("round", Integer.toString(round)));
                System.out.println("saved " + round);
                System.out.flush();
            }
        }
    }

    /** 6,000 chains of 64 blocks over {@link #WORKERS} workers. */
    public static void base(PrefixIndex index) {
        SplittableRandom r = new SplittableRandom(17);
        for (int s = 0; s < 6000; s++) {
            store(index, s % WORKERS, r, 1L << 40 | (long) s << 8, 64);
        }
    }

    /** Round {@code k}: a new chain for worker {@code k % 8}, and the removal of a middle block of an old one. */
    public static void round(PrefixIndex index, int k) {
        SplittableRandom r = new SplittableRandom(1000 + k);
        store(index, k % WORKERS, r, 2L << 40 | (long) k << 8, 1 + r.nextInt(64));
        int old = r.nextInt(6000);
        index.apply(new KvEvent.Removed(Worker.of(old % WORKERS), new long[] {1L << 40 | (long) old << 8 | 10}));
    }

    private static void store(PrefixIndex index, int w, SplittableRandom r, long names, int n) {
        long[] locals = new long[n];
        long[] hashes = new long[n];
        for (int i = 0; i < n; i++) {
            locals[i] = r.nextLong();
            hashes[i] = names | i;
        }
        index.apply(KvEvent.Stored.root(Worker.of(w), hashes, locals));
    }

    /** What an index answers about the state: depths of the base chains' prefixes, and every worker's blocks. */
    public static String fingerprint(PrefixIndex index) {
        StringBuilder sb = new StringBuilder();
        SplittableRandom r = new SplittableRandom(17);
        MatchResult m = new MatchResult();
        for (int s = 0; s < 6000; s++) {
            long[] locals = new long[64];
            for (int i = 0; i < 64; i++) {
                locals[i] = r.nextLong();
            }
            index.match(locals, 0, 64, m);
            m.sortByWorker();
            sb.append(m.scores());
        }
        for (int w = 0; w < WORKERS; w++) {
            sb.append(' ').append(index.blockCount(Worker.of(w)));
        }
        return sb.append(' ')
                .append(index.eventCount(io.kvprefix.EventStatus.OK))
                .toString();
    }
}
