package io.kvprefix.bench;

import io.kvprefix.BlockHasher;
import io.kvprefix.EventSink;
import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.PrefixIndex;
import io.kvprefix.opstream.Implementations;
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

/**
 * The saturation replay of docs/BENCHMARKS.md section 2, modelled on the harness behind the Flash
 * Indexer figures: a fresh index per pass, built outside the timed region; the events split among
 * {@code writers} threads by worker id (the sticky routing of {@link EventSink}) and the matches
 * dealt to {@code readers} threads; a start line, and a wall time from the release until the last
 * writer and reader are done, in free or trace order. Section 2 states each step and the
 * accountings ({@link OpStream}); with no readers a pass measures the write path alone, and
 * {@link #runSink} drives the events through an {@link EventSink} as a deployment does.
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
            long finalBytes,
            Lanes lanes,
            Map<String, Long> contention) {
        double seconds() {
            return wallNanos / 1e9;
        }
    }

    /**
     * What each writer lane of a pass did, the diagnostic of a split: the blocks of its events
     * (stored and removed), when it finished from the common start, and the CPU time its thread used
     * meanwhile (0 if the JVM does not measure thread CPU time, or through an {@link EventSink}, whose
     * threads are its own). A lane whose CPU time is well below its wall time was off its core.
     */
    public record Lanes(long[] blocks, long[] doneNanos, long[] cpuNanos) {
        /** One line: per lane its share of the blocks, its finish and CPU times in ms. */
        public String describe() {
            long total = Arrays.stream(blocks).sum();
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < blocks.length; i++) {
                b.append(String.format(
                        java.util.Locale.ROOT,
                        "%slane %d: %d blocks (%.1f%%), done %.2f ms, cpu %.2f ms",
                        i == 0 ? "" : "; ",
                        i,
                        blocks[i],
                        total == 0 ? 0 : 100.0 * blocks[i] / total,
                        doneNanos[i] / 1e6,
                        cpuNanos[i] / 1e6));
            }
            return b.toString();
        }
    }

    /**
     * The writer lane of each event, as an {@link EventSink} of {@code writers} lanes fed these events
     * in this order assigns them: a worker id seen for the first time goes to the lane with the
     * fewest worker ids, the first such on a tie, and stays there.
     */
    public static int[] lanesOf(KvEvent[] events, int writers) {
        Map<Long, Integer> assigned = new HashMap<>();
        int[] workersOf = new int[writers];
        int[] out = new int[events.length];
        for (int i = 0; i < events.length; i++) {
            out[i] = assigned.computeIfAbsent(events[i].workerId(), id -> {
                int lane = 0;
                for (int l = 1; l < writers; l++) {
                    if (workersOf[l] < workersOf[lane]) {
                        lane = l;
                    }
                }
                workersOf[lane]++;
                return lane;
            });
        }
        return out;
    }

    /** Blocks an event carries: stored or removed (Dynamo's corrected accounting counts both). */
    static long blocksOf(KvEvent e) {
        return switch (e) {
            case KvEvent.Stored s -> s.size();
            case KvEvent.StoredTokens t -> t.size();
            case KvEvent.Removed r -> r.blockHashes().length;
            default -> 0;
        };
    }

    private static final java.lang.management.ThreadMXBean THREADS =
            java.lang.management.ManagementFactory.getThreadMXBean();

    /** This thread's CPU time in ns, or 0 if the JVM does not measure it. */
    static long cpuNow() {
        return THREADS.isCurrentThreadCpuTimeSupported() ? THREADS.getCurrentThreadCpuTime() : 0;
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

    private boolean privateIndexes;

    /**
     * A diagnostic of write-only passes: each writer lane applies its share to an index of its own,
     * so two lanes share no memory at all. Beside a normal pass of the same split, it tells what
     * sharing one index costs from what the machine's two cores cost each other. Statuses and final
     * pairs are the same as one index's (the lanes' workers are disjoint).
     */
    public ReplayBench withPrivateIndexes() {
        if (readers != 0) {
            throw new IllegalArgumentException("--private-indexes times the write path alone: give --readers 0");
        }
        privateIndexes = true;
        return this;
    }

    /** Runs one pass of {@code impl} as fast as possible. */
    public Pass run(String impl) throws InterruptedException {
        PrefixIndex[] perLane = new PrefixIndex[writers];
        perLane[0] = freshIndex(impl);
        for (int i = 1; i < writers; i++) {
            perLane[i] = privateIndexes ? Implementations.create(impl, config) : perLane[0];
        }
        try {
            return run(impl, perLane, -1);
        } finally {
            for (int i = 0; i < writers; i++) {
                if (i == 0 || privateIndexes) {
                    perLane[i].close();
                }
            }
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
        PrefixIndex[] perLane = new PrefixIndex[writers];
        Arrays.fill(perLane, index);
        try {
            return run(impl, perLane, windowNanos);
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
    static void waitUntil(long deadline) {
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

    private Pass run(String impl, PrefixIndex[] perLane, long window) throws InterruptedException {
        PrefixIndex index = perLane[0]; // the readers' (passes with readers have one index)
        long[][] sched = window > 0 ? schedule(window) : null;
        long[] matchAt = sched == null ? null : sched[0];
        long[] eventAt = sched == null ? null : sched[1];
        long[] base = new long[1];
        int lanes = writers;
        ReplayPass pass = new ReplayPass(stream, lanes, readers, traceOrder, eventAt);
        CountDownLatch ready = new CountDownLatch(lanes + readers);
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        Throwable[] failure = new Throwable[1];
        for (int w = 0; w < lanes; w++) {
            threads.add(new Thread(pass.writer(w, perLane[w], eventAt, base, ready, go), "bench-writer-" + w));
        }
        for (int r = 0; r < readers; r++) {
            threads.add(new Thread(pass.reader(r, index, matchAt, base, ready, go), "bench-reader-" + r));
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
        long[] ends = pass.ends;
        long end = Arrays.stream(ends).max().orElse(start);
        if (window > 0) {
            start = base[0];
        }
        long[] all = Arrays.stream(pass.latencies).flatMapToLong(Arrays::stream).toArray();
        long writersEnd = Arrays.stream(ends, 0, lanes).max().orElse(start);
        long readersEnd = Arrays.stream(ends, lanes, lanes + readers).max().orElse(start);
        long[] laneDone = new long[lanes];
        for (int i = 0; i < lanes; i++) {
            laneDone[i] = ends[i] - start;
        }
        return finish(
                impl,
                privateIndexes ? perLane : new PrefixIndex[] {index},
                end - start,
                all,
                ReplayPass.statuses(pass.statusCounts),
                Arrays.stream(pass.matchedBlocks).sum(),
                writersEnd - start,
                readersEnd - start,
                new Lanes(pass.laneBlocks, laneDone, pass.laneCpu));
    }

    private static Pass finish(
            String impl,
            PrefixIndex[] indexes,
            long wall,
            long[] latencies,
            Map<EventStatus, Long> statuses,
            long matched,
            long writersNanos,
            long readersNanos,
            Lanes lanes) {
        long blocks = 0, bytes = 0;
        int workers = 0;
        Map<String, Long> contention = new java.util.TreeMap<>();
        for (PrefixIndex index : indexes) {
            var stats = index.stats();
            blocks += stats.blocks();
            bytes += stats.bytesUsed();
            workers += index.workers().size();
            stats.contention().forEach((k, v) -> contention.merge(k, v, Long::sum));
        }
        return new Pass(
                impl,
                wall,
                latencies,
                statuses,
                blocks,
                workers,
                matched,
                writersNanos,
                readersNanos,
                bytes,
                lanes,
                contention);
    }

    /**
     * One write-only pass through an {@link EventSink} of {@code writers} lanes: one producer thread
     * submits every event in stream order, and the wall time runs until {@link EventSink#flush()}
     * returns (every event applied).
     */
    public Pass runSink(String impl) {
        PrefixIndex index = freshIndex(impl);
        try {
            // Per lane (padded, see run): statuses, [seen] events applied, [last] when its last one was.
            int seen = EventStatus.values().length;
            int last = seen + 1;
            long[][] counts = new long[writers][last + 16];
            long[] laneBlocks = new long[writers];
            long[] laneEvents = new long[writers];
            int[] laneOfEvent = lanesOf(stream.events, writers);
            Map<Long, Integer> laneOfWorker = new HashMap<>();
            for (int i = 0; i < stream.events.length; i++) {
                int lane = laneOfEvent[i];
                laneBlocks[lane] += blocksOf(stream.events[i]);
                laneEvents[lane]++;
                laneOfWorker.put(stream.events[i].workerId(), lane);
            }
            EventSink[] holder = new EventSink[1];
            EventSink.StatusListener count = (e, st) -> {
                int lane = holder[0].laneOf(e.workerId()); // the sink's own routing (set before any submit)
                long[] c = counts[lane];
                c[st.ordinal()]++;
                if (++c[seen] == laneEvents[lane]) {
                    c[last] = System.nanoTime();
                }
            };
            long start;
            long end;
            try (EventSink sink = EventSink.create(index, writers, count)) {
                holder[0] = sink;
                start = System.nanoTime();
                for (KvEvent e : stream.events) {
                    sink.submit(e);
                }
                sink.flush();
                end = System.nanoTime();
            }
            long[] laneDone = new long[writers];
            for (int i = 0; i < writers; i++) {
                laneDone[i] = counts[i][last] == 0 ? 0 : counts[i][last] - start;
            }
            checkRouting(holder[0], laneOfWorker);
            return finish(
                    impl,
                    new PrefixIndex[] {index},
                    end - start,
                    new long[0],
                    ReplayPass.statuses(counts),
                    0,
                    end - start,
                    0,
                    new Lanes(laneBlocks, laneDone, new long[writers]));
        } finally {
            index.close();
        }
    }

    /** The sink must have routed every worker as {@link #lanesOf} splits them (the split the passes time). */
    private static void checkRouting(EventSink sink, Map<Long, Integer> laneOfWorker) {
        for (var w : laneOfWorker.entrySet()) {
            if (sink.laneOf(w.getKey()) != w.getValue()) {
                throw new IllegalStateException("the sink routed worker " + w.getKey() + " to lane "
                        + sink.laneOf(w.getKey()) + ", the split says " + w.getValue());
            }
        }
    }

    static void awaitQuietly(CountDownLatch l) {
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
