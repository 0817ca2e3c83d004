package io.kvprefix.bench;

import io.kvprefix.KvEvent;
import io.kvprefix.workload.Workload;
import io.kvprefix.workload.WorkloadStep;
import java.util.ArrayList;
import java.util.List;

/**
 * An op stream loaded into memory for replay benchmarks: the events and the matches, each with its
 * position in the stream, and two accountings of its work: the Flash Indexer blog's (block ops =
 * blocks in matches + blocks in stored events; ops = matches + events) and Dynamo's corrected one
 * of 2026 ({@link #blockOpsDynamo2}: removed blocks count too; docs/BENCHMARKS.md section 3).
 *
 * <p>Thread-safety: immutable once built; the arrays must not be modified.
 */
public final class OpStream {
    final String name;
    final KvEvent[] events;
    final int[] eventPos;
    final long[][] matches;
    final int[] matchPos;
    /** Time of each match, in the stream's own milliseconds (for sweeps). */
    final long[] matchTime;
    /** Time of each event, in the stream's own milliseconds. */
    final long[] eventTime;

    final long matchBlocks;
    final long storedBlocks;
    final long removedBlocks;
    /** The most (worker, block) pairs held at once, counting each store and removal at face value. */
    final long peakLiveBlocks;

    final int workers;

    private OpStream(
            String name,
            List<KvEvent> events,
            List<Integer> eventPos,
            List<Long> eventTime,
            List<long[]> matches,
            List<Integer> matchPos,
            List<Long> matchTime) {
        this.name = name;
        this.events = events.toArray(new KvEvent[0]);
        this.eventPos = eventPos.stream().mapToInt(Integer::intValue).toArray();
        this.eventTime = eventTime.stream().mapToLong(Long::longValue).toArray();
        this.matches = matches.toArray(new long[0][]);
        this.matchPos = matchPos.stream().mapToInt(Integer::intValue).toArray();
        this.matchTime = matchTime.stream().mapToLong(Long::longValue).toArray();
        long mb = 0;
        for (long[] m : this.matches) {
            mb += m.length;
        }
        long sb = 0;
        long rb = 0;
        java.util.Set<Long> ids = new java.util.HashSet<>();
        java.util.Map<Long, Long> live = new java.util.HashMap<>(); // per worker: stored minus removed, at least 0
        long liveNow = 0;
        long livePeak = 0;
        for (KvEvent e : this.events) {
            ids.add(e.workerId());
            long before = live.getOrDefault(e.workerId(), 0L);
            long after = before;
            if (e instanceof KvEvent.Stored s) {
                sb += s.size();
                after = before + s.size();
            } else if (e instanceof KvEvent.StoredTokens t) {
                sb += t.size();
                after = before + t.size();
            } else if (e instanceof KvEvent.Removed r) {
                rb += r.blockHashes().length;
                after = Math.max(0, before - r.blockHashes().length);
            } else if (e instanceof KvEvent.Cleared || e instanceof KvEvent.RemoveWorker) {
                after = 0;
            }
            live.put(e.workerId(), after);
            liveNow += after - before;
            livePeak = Math.max(livePeak, liveNow);
        }
        this.matchBlocks = mb;
        this.storedBlocks = sb;
        this.removedBlocks = rb;
        this.peakLiveBlocks = livePeak;
        this.workers = ids.size();
    }

    /** The stream of a simulated workload: each request's match, then its worker's events. */
    public static OpStream of(Workload w, String name) {
        List<Object> ops = new ArrayList<>();
        List<Long> times = new ArrayList<>();
        for (WorkloadStep s : w.steps()) {
            long t = s.request().timestampMs();
            ops.add(s.matchHashes());
            times.add(t);
            for (KvEvent e : s.events()) {
                ops.add(e);
                times.add(t);
            }
        }
        return of(name, ops, times.stream().mapToLong(Long::longValue).toArray());
    }

    /** A stream from explicit ops in order ({@code time} may be all zeros). */
    public static OpStream of(String name, List<Object> ops, long[] time) {
        List<KvEvent> events = new ArrayList<>();
        List<Integer> eventPos = new ArrayList<>();
        List<Long> eventTime = new ArrayList<>();
        List<long[]> matches = new ArrayList<>();
        List<Integer> matchPos = new ArrayList<>();
        List<Long> matchTime = new ArrayList<>();
        for (int i = 0; i < ops.size(); i++) {
            Object o = ops.get(i);
            long t = time == null ? 0 : time[i];
            if (o instanceof KvEvent e) {
                events.add(e);
                eventPos.add(i);
                eventTime.add(t);
            } else if (o instanceof long[] q) {
                matches.add(q);
                matchPos.add(i);
                matchTime.add(t);
            } else {
                throw new IllegalArgumentException("op " + i + " is neither an event nor a long[] match");
            }
        }
        return new OpStream(name, events, eventPos, eventTime, matches, matchPos, matchTime);
    }

    public String name() {
        return name;
    }

    public int eventCount() {
        return events.length;
    }

    public int matchCount() {
        return matches.length;
    }

    public long matchBlocks() {
        return matchBlocks;
    }

    public long storedBlocks() {
        return storedBlocks;
    }

    /** Dynamo's block ops: blocks in matches plus blocks in stored events. */
    public long blockOps() {
        return matchBlocks + storedBlocks;
    }

    /** Blocks named in removed events. */
    public long removedBlocks() {
        return removedBlocks;
    }

    /**
     * An upper estimate of the most (worker, block) pairs held at once: stores add their blocks,
     * removals take theirs away (never below 0 per worker), clears and worker removals empty a
     * worker. What an index is sized for, where {@link #storedBlocks} would oversize it on a stream
     * whose caches turn over.
     */
    public long peakLiveBlocks() {
        return peakLiveBlocks;
    }

    /**
     * Block ops as Dynamo's corrected harness (lib/bench/kv_router, 2026) counts them: request
     * blocks + stored blocks + removed blocks (a cleared worker counts 0).
     */
    public long blockOpsDynamo2() {
        return matchBlocks + storedBlocks + removedBlocks;
    }

    /** Dynamo's ops: matches plus events. */
    public long ops() {
        return (long) matches.length + events.length;
    }

    /** Distinct worker ids in the events. */
    public int workerIds() {
        return workers;
    }

    /** The span of the stream's own timestamps, in milliseconds (0 if it has none). */
    public long spanMillis() {
        long lo = Long.MAX_VALUE, hi = Long.MIN_VALUE;
        for (long t : matchTime) {
            lo = Math.min(lo, t);
            hi = Math.max(hi, t);
        }
        for (long t : eventTime) {
            lo = Math.min(lo, t);
            hi = Math.max(hi, t);
        }
        return lo > hi ? 0 : hi - lo;
    }
}
