package io.kvprefix.cli.internal.sim;

import io.kvprefix.KvEvent;
import io.kvprefix.Worker;
import io.kvprefix.workload.AdmitResult;
import io.kvprefix.workload.LocalHashTable;
import io.kvprefix.workload.MockEngine;
import io.kvprefix.workload.Trace;
import io.kvprefix.workload.TraceRequest;
import it.unimi.dsi.fastutil.longs.LongOpenHashSet;
import java.util.ArrayDeque;
import java.util.List;
import java.util.PriorityQueue;
import java.util.function.LongConsumer;

/**
 * A discrete-event simulation of one routing policy in front of {@code N} mock engines, replaying a
 * trace in simulated time (the cost model is {@link SimSettings}'s).
 *
 * <ul>
 *   <li><b>Arrival</b> (at the request's timestamp): the policy picks a worker (this call is timed on the
 *       wall clock: the policy's cost per decision); the request joins that worker's prefill queue.
 *   <li><b>Prefill start</b> (when the worker is free, first come first served): the worker's
 *       {@link MockEngine} admits the request, which finds its cached prefix (the reused tokens), evicts
 *       what it must and stores the rest. The prefill lasts {@code uncached tokens / prefill rate},
 *       plus {@code loaded tokens / onload rate} for the blocks its CPU tier gives back (they count as
 *       reused: not computed).
 *   <li><b>Prefill end</b>: the engine's KV events for the admission reach the event-fed index (so the
 *       index lags the engine by one prefill, as it would behind real engines); the time to first token
 *       is taken; decode starts.
 *   <li><b>Decode end</b> ({@code output tokens / decode rate} later): the engine releases the
 *       request's blocks (they become evictable) and the policy hears that the request finished.
 * </ul>
 * Events at the same simulated time are handled in the order they were scheduled, completions before
 * arrivals; the same trace and settings give the same simulated results.
 *
 * <p>Thread-safety: not thread-safe; one instance runs once, on one thread.
 */
public final class Simulator {
    private static final int PREFILL_DONE = 0;
    private static final int DECODE_DONE = 1;

    private final Trace trace;
    private final SimSettings settings;
    private final int tokensPerBlock;
    private final MockEngine[] engines;
    private final ArrayDeque<SimRequest>[] waiting;
    private final SimRequest[] prefilling;
    private final PriorityQueue<Step> steps = new PriorityQueue<>();
    private final Policy policy;
    private long now;
    private long sequence;
    private int[] tokens = new int[1 << 14];

    private long inputTokens;
    private long reusedTokens;
    private final long[] ttftNs;
    private final long[] decisionNs;
    private final long[] requestsPerWorker;
    private long lastDone;

    /** A scheduled completion: simulated time, then scheduling order. */
    private record Step(long time, long seq, int kind, SimRequest request) implements Comparable<Step> {
        @Override
        public int compareTo(Step o) {
            int c = Long.compare(time, o.time);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    @SuppressWarnings("unchecked")
    private Simulator(Trace trace, LocalHashTable hashes, SimSettings settings, Policy.Kind kind) {
        if (hashes.tokensPerBlock() != trace.tokensPerBlock()) {
            throw new IllegalArgumentException("local hashes are for " + hashes.tokensPerBlock()
                    + "-token blocks, the trace has " + trace.tokensPerBlock());
        }
        this.trace = trace;
        this.settings = settings;
        this.tokensPerBlock = trace.tokensPerBlock();
        int n = settings.workers();
        this.engines = new MockEngine[n];
        @SuppressWarnings({"unchecked", "rawtypes"}) // an array of a generic type: each element is set just below
        ArrayDeque<SimRequest>[] queues = new ArrayDeque[n];
        this.waiting = queues;
        this.prefilling = new SimRequest[n];
        for (int w = 0; w < n; w++) {
            engines[w] = new MockEngine(Worker.of(w), settings.cacheBlocks(), settings.cpuBlocks(), hashes);
            waiting[w] = new ArrayDeque<>();
        }
        this.ttftNs = new long[trace.size()];
        this.decisionNs = new long[trace.size()];
        this.requestsPerWorker = new long[n];
        this.policy = kind.create(settings, tokensPerBlock, () -> now);
    }

    /**
     * Simulates {@code kind} on {@code trace}; {@code progress} hears of each request as it arrives.
     *
     * @param hashes local hashes of the trace's ids, at its tokens per block, precomputed
     */
    public static PolicyResult run(
            Trace trace, LocalHashTable hashes, SimSettings settings, Policy.Kind kind, LongConsumer progress) {
        Simulator s = new Simulator(trace, hashes, settings, kind);
        try (Policy p = s.policy) {
            return s.run(progress, p);
        }
    }

    private PolicyResult run(LongConsumer progress, Policy p) {
        List<TraceRequest> requests = trace.requests();
        int next = 0;
        long first = requests.isEmpty() ? 0 : requests.get(0).timestampMs() * 1_000_000L;
        while (next < requests.size() || !steps.isEmpty()) {
            long arrival = next < requests.size() ? requests.get(next).timestampMs() * 1_000_000L : Long.MAX_VALUE;
            Step s = steps.peek();
            if (s != null && s.time() <= arrival) {
                steps.poll();
                now = s.time();
                if (s.kind() == PREFILL_DONE) {
                    prefillDone(s.request());
                } else {
                    decodeDone(s.request());
                }
            } else {
                now = arrival;
                arrive(requests.get(next++));
                progress.accept(1);
            }
        }
        return new PolicyResult(
                p.name(),
                requests.size(),
                inputTokens,
                reusedTokens,
                ttftNs,
                decisionNs,
                requestsPerWorker,
                lastDone - first);
    }

    private void arrive(TraceRequest r) {
        SimRequest q = new SimRequest(r, now);
        int length = fillTokens(r);
        long t0 = System.nanoTime();
        int w = policy.route(q, tokens, length);
        decisionNs[r.index()] = System.nanoTime() - t0;
        if (w < 0 || w >= engines.length) {
            throw new IllegalStateException(policy.name() + " chose worker " + w + " of " + engines.length);
        }
        q.worker = w;
        requestsPerWorker[w]++;
        waiting[w].add(q);
        if (prefilling[w] == null) {
            startPrefill(w);
        }
    }

    /** The request's tokens: block {@code i} is {@code tokensPerBlock} copies of its id (docs/SPEC.md section 2.3). */
    private int fillTokens(TraceRequest r) {
        long[] ids = r.hashIds();
        int length = (int) Math.min(r.inputLength(), (long) ids.length * tokensPerBlock);
        if (tokens.length < length) {
            tokens = new int[Math.max(length, tokens.length * 2)];
        }
        for (int b = 0, at = 0; at < length; b++) {
            int end = Math.min(length, at + tokensPerBlock);
            java.util.Arrays.fill(tokens, at, end, (int) ids[b]);
            at = end;
        }
        return length;
    }

    private void startPrefill(int w) {
        SimRequest q = waiting[w].poll();
        prefilling[w] = q;
        AdmitResult a = engines[w].admit(q.trace);
        long loaded = (long) a.lowerTierBlocks() * tokensPerBlock; // from the CPU tier: loaded, not computed
        long reused = (long) a.cachedBlocks() * tokensPerBlock + loaded;
        inputTokens += q.trace.inputLength();
        reusedTokens += reused;
        q.pendingEvents = a.events();
        long uncached = Math.max(0, q.trace.inputLength() - reused);
        schedule(
                now + nanos(uncached, settings.prefillTokensPerS()) + nanos(loaded, settings.onloadTokensPerS()),
                PREFILL_DONE,
                q);
    }

    private void prefillDone(SimRequest q) {
        if (policy.wantsEvents()) {
            for (KvEvent e : q.pendingEvents) {
                policy.apply(e);
            }
        }
        q.pendingEvents = null;
        policy.prefillDone(q);
        ttftNs[q.trace.index()] = now - q.arrivalNs;
        schedule(now + nanos(q.trace.outputLength(), settings.decodeTokensPerS()), DECODE_DONE, q);
        int w = q.worker;
        prefilling[w] = null;
        if (!waiting[w].isEmpty()) {
            startPrefill(w);
        }
    }

    private void decodeDone(SimRequest q) {
        engines[q.worker].release(q.trace);
        policy.finished(q);
        lastDone = now;
    }

    private void schedule(long time, int kind, SimRequest q) {
        steps.add(new Step(time, sequence++, kind, q));
    }

    private static long nanos(long tokens, double perSecond) {
        return Math.round(tokens * 1e9 / perSecond);
    }

    /**
     * The infinite-cache bound in tokens: the tokens of every full block whose whole prefix (this block
     * and all before it) appeared in an earlier request, as one infinite cache shared by all workers
     * would reuse them. Divided by the input tokens it bounds every policy's hit rate.
     */
    public static long infiniteCacheHitTokens(Trace trace) {
        int tpb = trace.tokensPerBlock();
        LongOpenHashSet seen = new LongOpenHashSet();
        long hits = 0;
        for (TraceRequest r : trace.requests()) {
            long[] ids = r.hashIds();
            int full = r.fullBlocks(tpb);
            long key = 0;
            boolean prefixSeen = true;
            for (int i = 0; i < full; i++) {
                key = MockEngine.engineHash(i > 0, key, ids[i]);
                if (prefixSeen && seen.contains(key)) {
                    hits += tpb;
                } else {
                    prefixSeen = false;
                    seen.add(key);
                }
            }
        }
        return hits;
    }

    /** Total input tokens of the trace. */
    public static long inputTokens(Trace trace) {
        long n = 0;
        for (TraceRequest r : trace.requests()) {
            n += r.inputLength();
        }
        return n;
    }
}
