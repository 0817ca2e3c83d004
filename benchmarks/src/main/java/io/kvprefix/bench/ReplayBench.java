package io.kvprefix.bench;

import io.kvprefix.BlockHasher;
import io.kvprefix.EventSink;
import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.opstream.Op;
import io.kvprefix.opstream.OpStreamReader;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The saturation replay of docs/BENCHMARKS.md section 2, modelled on the harness behind the Flash
 * Indexer figures.
 *
 * <p>One pass: a fresh index is built outside the timed region; the stream's events are split
 * among {@code writers} threads by worker id (the same sticky routing as {@link EventSink}), each
 * writer applying its share in stream order; its matches are dealt round-robin to {@code readers}
 * threads. Every thread waits at a start line; the wall time runs from the moment they are released
 * until the last writer and the last reader are done, all running as fast as they can ("free
 * order"). With {@code traceOrder}, a reader first waits (untimed) until every event that precedes
 * its match in the stream has been applied, so each match sees at least its trace-order state;
 * the wall time still counts everything.
 *
 * <p>The wall time ends when the last writer has applied its last event, so it includes what
 * Dynamo's corrected harness calls draining the event queues; {@link OpStream} has both accountings.
 * With no readers a pass measures the write path alone; {@link #runSink} drives the events through
 * an {@link EventSink} instead, as a deployment does. Match latency is each call's
 * {@code System.nanoTime()} span.
 *
 * <p>Thread-safety: a pass runs its own threads; a {@code ReplayBench} object is used by one thread.
 */
public final class ReplayBench {

    /**
     * One pass: its wall time, and when the last writer and the last reader finished (from the same
     * start), which says which side set the pace.
     */
    public record Pass(
            String impl,
            long wallNanos,
            long[] latencies,
            Map<EventStatus, Long> statuses,
            long finalPairs,
            int finalWorkers,
            long matchedBlocks,
            long writersNanos,
            long readersNanos,
            long finalBytes) {
        double seconds() {
            return wallNanos / 1e9;
        }
    }

    private final OpStream stream;
    private final int writers;
    private final int readers;
    private final boolean traceOrder;
    private final IndexConfig config;

    public ReplayBench(OpStream stream, int writers, int readers, boolean traceOrder, IndexConfig config) {
        if (traceOrder && readers == 0) {
            throw new IllegalArgumentException("--order trace needs readers (--readers >= 1)");
        }
        if (writers < 1 || readers < 0) {
            throw new IllegalArgumentException("--writers must be >= 1 and --readers >= 0");
        }
        this.stream = stream;
        this.writers = writers;
        this.readers = readers;
        this.traceOrder = traceOrder;
        this.config = config;
    }

    /**
     * A fresh index for a pass, built after a full collection: the previous pass's garbage (the heap
     * index makes plenty) must not trigger a pause inside this one. Outside the timed region.
     */
    private PrefixIndex freshIndex(String impl) {
        System.gc();
        return Implementations.create(impl, config);
    }

    /** True if a pass runs no matches (no readers): only the stream's events count as work. */
    public boolean writeOnly() {
        return readers == 0;
    }

    /** Runs one pass of {@code impl} as fast as possible. */
    public Pass run(String impl) throws InterruptedException {
        PrefixIndex index = freshIndex(impl);
        try {
            return run(impl, index, -1);
        } finally {
            index.close();
        }
    }

    /**
     * Runs one paced pass of {@code impl}: the stream's timestamps are compressed into
     * {@code windowNanos} and every op starts no earlier than its scaled time (late ops start at once).
     * Latency is each match call's own duration, as in Dynamo's harness: measured from the scheduled
     * time instead, it would be dominated on a 2-core machine by the operating system taking a core
     * from a spinning benchmark thread for a whole time slice (milliseconds).
     */
    public Pass runPaced(String impl, long windowNanos) throws InterruptedException {
        PrefixIndex index = freshIndex(impl);
        try {
            return run(impl, index, windowNanos);
        } finally {
            index.close();
        }
    }

    /** Scheduled start of each op, in nanoseconds from the start of a pass compressed into {@code window}. */
    private long[][] schedule(long window) {
        long lo = Long.MAX_VALUE, hi = Long.MIN_VALUE;
        for (long t : stream.matchTime) {
            lo = Math.min(lo, t);
            hi = Math.max(hi, t);
        }
        for (long t : stream.eventTime) {
            lo = Math.min(lo, t);
            hi = Math.max(hi, t);
        }
        long[] m = new long[stream.matches.length];
        long[] e = new long[stream.events.length];
        long ops = stream.ops();
        for (int i = 0; i < m.length; i++) {
            m[i] = hi > lo
                    ? (long) ((stream.matchTime[i] - lo) / (double) (hi - lo) * window)
                    : (long) (stream.matchPos[i] / (double) ops * window); // no timestamps: evenly by position
        }
        for (int i = 0; i < e.length; i++) {
            e[i] = hi > lo
                    ? (long) ((stream.eventTime[i] - lo) / (double) (hi - lo) * window)
                    : (long) (stream.eventPos[i] / (double) ops * window);
        }
        return new long[][] {m, e};
    }

    /**
     * Waits for {@code deadline}: parks while it is far away, spins for the last 1.5 ms. A parked
     * thread can wake up well past its time (timer slack, idle cores), and that oversleep would count
     * as match latency from the scheduled start; spinning near the deadline keeps it out.
     */
    private static void waitUntil(long deadline) {
        long now;
        while ((now = System.nanoTime()) < deadline) {
            long left = deadline - now;
            if (left > 2_000_000) {
                java.util.concurrent.locks.LockSupport.parkNanos(left - 1_500_000);
            } else {
                Thread.onSpinWait();
            }
        }
    }

    private Pass run(String impl, PrefixIndex index, long window) throws InterruptedException {
        long[][] sched = window > 0 ? schedule(window) : null;
        long[] matchAt = sched == null ? null : sched[0];
        long[] eventAt = sched == null ? null : sched[1];
        long[] base = new long[1];
        // Sticky split of the events, exactly as an EventSink with this many writers routes them.
        int lanes = writers;
        List<List<KvEvent>> parts = new ArrayList<>();
        for (int i = 0; i < lanes; i++) {
            parts.add(new ArrayList<>());
        }
        int[] laneOfEvent = new int[stream.events.length];
        for (int i = 0; i < stream.events.length; i++) {
            int lane = EventSink.laneOf(stream.events[i].workerId(), lanes);
            laneOfEvent[i] = lane;
            parts.get(lane).add(stream.events[i]);
        }
        KvEvent[][] work = new KvEvent[lanes][];
        long[][] workAt = new long[lanes][];
        for (int i = 0; i < lanes; i++) {
            work[i] = parts.get(i).toArray(new KvEvent[0]);
            workAt[i] = new long[work[i].length];
        }
        if (eventAt != null) {
            int[] k = new int[lanes];
            for (int i = 0; i < stream.events.length; i++) {
                int lane = laneOfEvent[i];
                workAt[lane][k[lane]++] = eventAt[i];
            }
        }
        // Matches dealt round-robin; for trace order, how many events of each lane precede each match.
        int[][] mine = new int[readers][];
        int[] counts = new int[readers];
        int dealt = readers == 0 ? 0 : stream.matches.length; // no readers: a write-only pass
        for (int m = 0; m < dealt; m++) {
            counts[m % readers]++;
        }
        for (int r = 0; r < readers; r++) {
            mine[r] = new int[counts[r]];
        }
        int[] fill = new int[readers];
        for (int m = 0; m < dealt; m++) {
            mine[m % readers][fill[m % readers]++] = m;
        }
        int[][] need = null;
        if (traceOrder) {
            need = new int[stream.matches.length][lanes];
            int[] seen = new int[lanes];
            int e = 0;
            for (int m = 0; m < stream.matches.length; m++) {
                while (e < stream.events.length && stream.eventPos[e] < stream.matchPos[m]) {
                    seen[laneOfEvent[e]]++;
                    e++;
                }
                need[m] = seen.clone();
            }
        }
        final int[][] needF = need;
        AtomicLongArray applied = new AtomicLongArray(lanes * 16); // padded: one counter per cache line
        long[][] statusCounts = new long[lanes][EventStatus.values().length];
        long[][] lat = new long[readers][];
        long[] ends = new long[lanes + readers];
        long[] matchedBlocks = new long[readers];
        CountDownLatch ready = new CountDownLatch(lanes + readers);
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        Throwable[] failure = new Throwable[1];
        for (int w = 0; w < lanes; w++) {
            final int lane = w;
            threads.add(new Thread(
                    () -> {
                        KvEvent[] evs = work[lane];
                        long[] at = workAt[lane];
                        long[] st = statusCounts[lane];
                        ready.countDown();
                        awaitQuietly(go);
                        long t0 = base[0];
                        for (int i = 0; i < evs.length; i++) {
                            if (eventAt != null) {
                                waitUntil(t0 + at[i]);
                            }
                            st[index.apply(evs[i]).ordinal()]++;
                            if (needF != null) {
                                applied.setRelease(lane * 16, i + 1);
                            }
                        }
                        ends[lane] = System.nanoTime();
                    },
                    "bench-writer-" + w));
        }
        for (int r = 0; r < readers; r++) {
            final int reader = r;
            threads.add(new Thread(
                    () -> {
                        int[] ms = mine[reader];
                        long[] l = new long[ms.length];
                        MatchResult result = new MatchResult(256);
                        long blocks = 0;
                        ready.countDown();
                        awaitQuietly(go);
                        long base0 = base[0];
                        for (int i = 0; i < ms.length; i++) {
                            int m = ms[i];
                            if (matchAt != null) {
                                waitUntil(base0 + matchAt[m]);
                            }
                            if (needF != null) {
                                int[] n = needF[m];
                                for (int lane = 0; lane < n.length; lane++) {
                                    while (applied.getAcquire(lane * 16) < n[lane]) {
                                        Thread.onSpinWait();
                                    }
                                }
                            }
                            long[] q = stream.matches[m];
                            long t0 = System.nanoTime();
                            index.match(q, 0, q.length, result);
                            l[i] = System.nanoTime() - t0;
                            blocks += result.maxDepth();
                        }
                        lat[reader] = l;
                        matchedBlocks[reader] = blocks;
                        ends[lanes + reader] = System.nanoTime();
                    },
                    "bench-reader-" + r));
        }
        for (Thread t : threads) {
            t.setUncaughtExceptionHandler((th, ex) -> failure[0] = ex);
            t.start();
        }
        ready.await();
        long start = System.nanoTime();
        base[0] = start + 1_000_000; // paced passes start 1 ms after release, so every thread is awake
        go.countDown();
        for (Thread t : threads) {
            t.join();
        }
        if (failure[0] != null) {
            throw new IllegalStateException("a benchmark thread failed: " + failure[0], failure[0]);
        }
        long end = Arrays.stream(ends).max().orElse(start);
        if (window > 0) {
            start = base[0];
        }
        Map<EventStatus, Long> statuses = new java.util.EnumMap<>(EventStatus.class);
        for (EventStatus s : EventStatus.values()) {
            long n = 0;
            for (long[] c : statusCounts) {
                n += c[s.ordinal()];
            }
            statuses.put(s, n);
        }
        long[] all = Arrays.stream(lat).flatMapToLong(Arrays::stream).toArray();
        long writersEnd = Arrays.stream(ends, 0, lanes).max().orElse(start);
        long readersEnd = Arrays.stream(ends, lanes, lanes + readers).max().orElse(start);
        return finish(
                impl,
                index,
                end - start,
                all,
                statuses,
                Arrays.stream(matchedBlocks).sum(),
                writersEnd - start,
                readersEnd - start);
    }

    private static Pass finish(
            String impl,
            PrefixIndex index,
            long wall,
            long[] latencies,
            Map<EventStatus, Long> statuses,
            long matched,
            long writersNanos,
            long readersNanos) {
        var stats = index.stats();
        return new Pass(
                impl,
                wall,
                latencies,
                statuses,
                stats.blocks(),
                index.workers().size(),
                matched,
                writersNanos,
                readersNanos,
                stats.bytesUsed());
    }

    /**
     * One write-only pass through an {@link EventSink} of {@code writers} lanes: one producer thread
     * submits every event in stream order, and the wall time runs until {@link EventSink#flush()}
     * returns (every event applied).
     */
    public Pass runSink(String impl) {
        PrefixIndex index = freshIndex(impl);
        try {
            long[][] counts = new long[writers][EventStatus.values().length];
            EventSink.StatusListener count = (e, st) -> counts[EventSink.laneOf(e.workerId(), writers)][st.ordinal()]++;
            long start;
            long end;
            try (EventSink sink = EventSink.create(index, writers, count)) {
                start = System.nanoTime();
                for (KvEvent e : stream.events) {
                    sink.submit(e);
                }
                sink.flush();
                end = System.nanoTime();
            }
            Map<EventStatus, Long> statuses = new java.util.EnumMap<>(EventStatus.class);
            for (EventStatus st : EventStatus.values()) {
                long n = 0;
                for (long[] c : counts) {
                    n += c[st.ordinal()];
                }
                statuses.put(st, n);
            }
            return finish(impl, index, end - start, new long[0], statuses, 0, end - start, 0);
        } finally {
            index.close();
        }
    }

    private static void awaitQuietly(CountDownLatch l) {
        try {
            l.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Loads an op-stream file (docs/SPEC.md section 5) into memory: events as they are, hash-form
     * matches as they are, token-form matches hashed once here (so the benchmark measures matching).
     * Invalid lines are counted and skipped.
     */
    public static OpStream loadOps(Path file, IndexConfig config, int[] invalidOut) throws IOException {
        List<Object> ops = new ArrayList<>();
        Map<String, BlockHasher> hashers = new HashMap<>();
        int invalid = 0;
        try (InputStream in = Files.newInputStream(file)) {
            OpStreamReader reader = new OpStreamReader(in); // lines end at \n only (docs/SPEC.md section 5)
            for (Op op; (op = reader.next()) != null; ) {
                switch (op) {
                    case Op.Event e -> ops.add(e.event());
                    case Op.HashMatch h -> ops.add(h.localHashes());
                    case Op.TokenMatch t -> {
                        String k = t.blockSize() + "/" + t.loraName() + "/" + t.cacheNamespace();
                        BlockHasher h = hashers.computeIfAbsent(k, x -> t.hasher(config));
                        long[][] mm = h.multimodalExtras(t.tokenIds().length, t.mm());
                        ops.add(
                                mm == null
                                        ? h.localHashes(t.tokenIds())
                                        : h.localHashes(t.tokenIds(), 0, t.tokenIds().length, mm));
                    }
                    case Op.Explain x -> {} // a debugging aid, not a measured op
                    case Op.Invalid i -> invalid++;
                }
            }
        }
        if (invalidOut != null && invalidOut.length > 0) {
            invalidOut[0] = invalid;
        }
        return OpStream.of(file.getFileName().toString(), ops, null);
    }
}
