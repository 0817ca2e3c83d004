package io.kvprefix.bench;

import io.kvprefix.EventStatus;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The threads of one {@link ReplayBench#run} pass and what they count: the stream's events split over
 * the writer lanes as an {@link io.kvprefix.EventSink} routes them, its matches dealt round-robin to
 * the readers (with, in trace order, how many events of each lane must be applied before each match),
 * and per thread its statuses, latencies, finish time and CPU time. Everything but the threads' loops
 * is built before the start line.
 *
 * <p>Thread-safety: built by the pass's thread; each writer and reader thread writes only its own
 * slots, which the pass's thread reads after joining them.
 */
final class ReplayPass {
    private final OpStream stream;
    private final int lanes;
    private final int readers;
    /** Each lane's events and their scheduled times (paced passes). */
    private final KvEvent[][] work;

    private final long[][] workAt;
    /** Each reader's matches, by index into the stream. */
    private final int[][] mine;
    /** Trace order: per match, how many events of each lane precede it (null in free order). */
    private final int[][] need;
    /** Events applied per lane, padded: one counter per cache line. */
    private final AtomicLongArray applied;
    /**
     * Statuses per lane, padded: each lane counts per event, and two small arrays allocated one after
     * the other share a cache line, which the two writers' cores would then pass back and forth.
     */
    final long[][] statusCounts;

    final long[] laneBlocks;
    final long[] laneCpu;
    final long[][] latencies;
    /** When each writer, then each reader, finished. */
    final long[] ends;

    final long[] matchedBlocks;

    ReplayPass(OpStream stream, int lanes, int readers, boolean traceOrder, long[] eventAt) {
        this.stream = stream;
        this.lanes = lanes;
        this.readers = readers;
        int[] laneOfEvent = ReplayBench.lanesOf(stream.events, lanes);
        this.work = new KvEvent[lanes][];
        this.workAt = new long[lanes][];
        split(laneOfEvent, eventAt);
        this.mine = deal();
        this.need = traceOrder ? need(laneOfEvent) : null;
        this.applied = new AtomicLongArray(lanes * 16);
        this.statusCounts = new long[lanes][EventStatus.values().length + 16];
        this.laneBlocks = new long[lanes];
        for (int i = 0; i < lanes; i++) {
            for (KvEvent e : work[i]) {
                laneBlocks[i] += ReplayBench.blocksOf(e);
            }
        }
        this.laneCpu = new long[lanes];
        this.latencies = new long[readers][];
        this.ends = new long[lanes + readers];
        this.matchedBlocks = new long[readers];
    }

    /** Sticky split of the events, exactly as an EventSink with this many writers routes them. */
    private void split(int[] laneOfEvent, long[] eventAt) {
        List<List<KvEvent>> parts = new ArrayList<>();
        for (int i = 0; i < lanes; i++) {
            parts.add(new ArrayList<>());
        }
        for (int i = 0; i < stream.events.length; i++) {
            parts.get(laneOfEvent[i]).add(stream.events[i]);
        }
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
    }

    /** The matches dealt round-robin (none without readers: a write-only pass). */
    private int[][] deal() {
        int[][] out = new int[readers][];
        int[] counts = new int[readers];
        int dealt = readers == 0 ? 0 : stream.matches.length;
        for (int m = 0; m < dealt; m++) {
            counts[m % readers]++;
        }
        for (int r = 0; r < readers; r++) {
            out[r] = new int[counts[r]];
        }
        int[] fill = new int[readers];
        for (int m = 0; m < dealt; m++) {
            out[m % readers][fill[m % readers]++] = m;
        }
        return out;
    }

    /** For trace order: how many events of each lane precede each match. */
    private int[][] need(int[] laneOfEvent) {
        int[][] out = new int[stream.matches.length][lanes];
        int[] seen = new int[lanes];
        int e = 0;
        for (int m = 0; m < stream.matches.length; m++) {
            while (e < stream.events.length && stream.eventPos[e] < stream.matchPos[m]) {
                seen[laneOfEvent[e]]++;
                e++;
            }
            out[m] = seen.clone();
        }
        return out;
    }

    /**
     * The loop of writer {@code lane}: applies its events to {@code target} in stream order, each no
     * earlier than its scheduled time when paced ({@code eventAt}), from {@code base[0]}.
     */
    Runnable writer(
            int lane, PrefixIndex target, long[] eventAt, long[] base, CountDownLatch ready, CountDownLatch go) {
        KvEvent[] evs = work[lane];
        long[] at = workAt[lane];
        long[] st = statusCounts[lane];
        int[][] needF = need;
        AtomicLongArray appliedF = applied;
        return () -> {
            ready.countDown();
            ReplayBench.awaitQuietly(go);
            long cpu0 = ReplayBench.cpuNow();
            long t0 = base[0];
            for (int i = 0; i < evs.length; i++) {
                if (eventAt != null) {
                    ReplayBench.waitUntil(t0 + at[i]);
                }
                st[target.apply(evs[i]).ordinal()]++;
                if (needF != null) {
                    appliedF.setRelease(lane * 16, i + 1);
                }
            }
            ends[lane] = System.nanoTime();
            laneCpu[lane] = ReplayBench.cpuNow() - cpu0;
        };
    }

    /**
     * The loop of reader {@code reader}: runs its matches against {@code index}, timing each call, each
     * no earlier than its scheduled time when paced ({@code matchAt}) and, in trace order, after the
     * events before it.
     */
    Runnable reader(
            int reader, PrefixIndex index, long[] matchAt, long[] base, CountDownLatch ready, CountDownLatch go) {
        int[] ms = mine[reader];
        int[][] needF = need;
        AtomicLongArray appliedF = applied;
        long[][] matches = stream.matches;
        return () -> {
            long[] l = new long[ms.length];
            MatchResult result = new MatchResult(256);
            long blocks = 0;
            ready.countDown();
            ReplayBench.awaitQuietly(go);
            long base0 = base[0];
            for (int i = 0; i < ms.length; i++) {
                int m = ms[i];
                if (matchAt != null) {
                    ReplayBench.waitUntil(base0 + matchAt[m]);
                }
                if (needF != null) {
                    int[] n = needF[m];
                    for (int lane = 0; lane < n.length; lane++) {
                        while (appliedF.getAcquire(lane * 16) < n[lane]) {
                            Thread.onSpinWait();
                        }
                    }
                }
                long[] q = matches[m];
                long t0 = System.nanoTime();
                index.match(q, 0, q.length, result);
                l[i] = System.nanoTime() - t0;
                blocks += result.maxDepth();
            }
            latencies[reader] = l;
            matchedBlocks[reader] = blocks;
            ends[lanes + reader] = System.nanoTime();
        };
    }

    /** The statuses of every lane, summed. */
    static Map<EventStatus, Long> statuses(long[][] counts) {
        Map<EventStatus, Long> out = new EnumMap<>(EventStatus.class);
        for (EventStatus s : EventStatus.values()) {
            long n = 0;
            for (long[] c : counts) {
                n += c[s.ordinal()];
            }
            out.put(s, n);
        }
        return out;
    }
}
