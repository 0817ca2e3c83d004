package io.kvprefix.cli;

import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.opstream.Implementations;
import it.unimi.dsi.fastutil.longs.LongArrayList;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a snapshot costs the index's other users (docs/BENCHMARKS.md section 6): one writer thread
 * stores and removes sequences of a worker of its own, one reader thread matches the state's
 * queries, and the main thread takes a snapshot every 300 ms. Each operation is timed and counted
 * as overlapping a snapshot or not (an epoch counter that a snapshot makes odd while it runs), and
 * the latency percentiles of the two sets are printed side by side.
 *
 * <p>Thread-safety: one instance per measurement; its threads share only atomics.
 */
final class SnapshotDuring {
    private static final int SNAPSHOTS = 10;

    private final String impl;
    private final IndexConfig config;
    private final SnapshotBenchCommand.State state;
    private final Path file;
    /** Even while no snapshot runs; a snapshot makes it odd when it starts and even again when it ends. */
    private final AtomicLong epoch = new AtomicLong();

    private final AtomicBoolean stop = new AtomicBoolean();

    SnapshotDuring(String impl, IndexConfig config, SnapshotBenchCommand.State state, Path file) {
        this.impl = impl;
        this.config = config;
        this.state = state;
        this.file = file;
    }

    /** Latencies in nanoseconds: [0] of operations that overlapped no snapshot, [1] of those that did. */
    private static LongArrayList[] lists() {
        return new LongArrayList[] {new LongArrayList(), new LongArrayList()};
    }

    void run(PrintStream out) {
        LongArrayList[] matches = lists();
        LongArrayList[] writes = lists();
        double[] snapshotMs = new double[SNAPSHOTS];
        try (PrefixIndex index = Implementations.create(impl, config)) {
            for (KvEvent e : state.events()) {
                index.apply(e);
            }
            List<Thread> threads = new ArrayList<>();
            threads.add(new Thread(() -> write(index, writes), "snapshot-bench-writer"));
            threads.add(new Thread(() -> read(index, matches), "snapshot-bench-reader"));
            threads.forEach(Thread::start);
            try {
                for (int i = 0; i < SNAPSHOTS; i++) {
                    Thread.sleep(300);
                    epoch.incrementAndGet();
                    long t0 = System.nanoTime();
                    index.snapshot(file);
                    snapshotMs[i] = (System.nanoTime() - t0) / 1e6;
                    epoch.incrementAndGet();
                }
                Thread.sleep(300);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                stop.set(true);
                for (Thread t : threads) {
                    join(t);
                }
            }
        }
        out.printf(
                Locale.ROOT,
                "# %s while snapshots are taken (%d snapshots, median %.1f ms):%n",
                impl,
                SNAPSHOTS,
                SnapshotBenchCommand.median(snapshotMs));
        out.println("ops\twhen\tcount\tp50_us\tp99_us\tp99.9_us\tmax_us");
        print(out, "matches", matches);
        print(out, "writes", writes);
    }

    private static void join(Thread t) {
        try {
            t.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void record(LongArrayList[] into, long e0, long t0) {
        long t1 = System.nanoTime();
        boolean overlapped = (e0 & 1) != 0 || epoch.get() != e0;
        into[overlapped ? 1 : 0].add(t1 - t0);
    }

    /** Stores sequences of 16 blocks for a worker of its own and removes each 64 stores later: the state stays the same size. */
    private void write(PrefixIndex index, LongArrayList[] into) {
        Worker w = Worker.of(1 << 20);
        SplittableRandom r = new SplittableRandom(5);
        for (long seq = 0; !stop.get(); seq++) {
            long[] locals = new long[16];
            long[] hashes = new long[16];
            for (int i = 0; i < 16; i++) {
                locals[i] = r.nextLong();
                hashes[i] = seq << 8 | i;
            }
            KvEvent e = KvEvent.Stored.root(w, hashes, locals);
            KvEvent gone = seq >= 64 ? new KvEvent.Removed(w, new long[] {(seq - 64) << 8}) : null;
            long e0 = epoch.get();
            long t0 = System.nanoTime();
            index.apply(e);
            record(into, e0, t0);
            if (gone != null) {
                e0 = epoch.get();
                t0 = System.nanoTime();
                index.apply(gone);
                record(into, e0, t0);
            }
        }
    }

    private void read(PrefixIndex index, LongArrayList[] into) {
        MatchResult m = new MatchResult();
        List<long[]> queries = state.queries();
        for (int i = 0; !stop.get() && !queries.isEmpty(); i++) {
            long[] q = queries.get(i % queries.size());
            long e0 = epoch.get();
            long t0 = System.nanoTime();
            index.match(q, 0, q.length, m);
            record(into, e0, t0);
        }
    }

    private static void print(PrintStream out, String what, LongArrayList[] lists) {
        String[] when = {"outside", "during"};
        for (int k = 0; k < 2; k++) {
            long[] v = lists[k].toLongArray();
            java.util.Arrays.sort(v);
            out.printf(
                    Locale.ROOT,
                    "%s\t%s\t%d\t%.1f\t%.1f\t%.1f\t%.1f%n",
                    what,
                    when[k],
                    v.length,
                    pct(v, 0.50),
                    pct(v, 0.99),
                    pct(v, 0.999),
                    v.length == 0 ? 0 : v[v.length - 1] / 1e3);
        }
    }

    private static double pct(long[] sorted, double p) {
        return sorted.length == 0 ? 0 : sorted[(int) Math.min(sorted.length - 1, Math.floor(p * sorted.length))] / 1e3;
    }
}
