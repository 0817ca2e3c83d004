package io.kvprefix.cli.internal.sim;

import io.kvprefix.KvEvent;
import io.kvprefix.Worker;
import io.kvprefix.workload.AdmitResult;
import io.kvprefix.workload.LocalHashTable;
import io.kvprefix.workload.MockEngine;
import io.kvprefix.workload.Trace;
import io.kvprefix.workload.TraceRequest;
import it.unimi.dsi.fastutil.longs.LongOpenHashSet;
import java.util.List;
import java.util.PriorityQueue;
import java.util.function.LongConsumer;

/**
 * A discrete-event simulation of one routing policy in front of {@code N} simulated engines
 * ({@link SimEngine}), replaying a trace in simulated time.
 *
 * <ul>
 *   <li><b>Arrival</b> (the request's timestamp divided by {@link SimSettings#rate()}): the policy
 *       picks one of the registered workers (this call is timed on the wall clock: the policy's cost per
 *       decision) and the request joins that engine's waiting queue.
 *   <li><b>Engine work</b>: the engine model ({@link SimSettings.EngineModel}) admits requests into
 *       its {@link MockEngine} (which finds the cached prefix, evicts and stores), computes prefill
 *       and decode, and publishes KV events; the time to first token is taken when the prefill's last
 *       token is computed; the policy hears of it ({@code prefillDone}) and of the request's end
 *       ({@code finished}).
 *   <li><b>Event delivery</b>: what an engine publishes reaches the policy's index
 *       {@link SimSettings#eventDelayNs()} later, in publication order.
 *   <li><b>Metrics</b>: policies that read engine metrics (llm-d's scorers) get a snapshot of every
 *       engine's waiting requests, running requests and KV usage every
 *       {@link SimSettings#METRICS_REFRESH}.
 *   <li><b>Join</b>: with {@link SimSettings#joinAt()} the last worker registers with the policy at
 *       that fraction of the arrival span; with {@link SimSettings#slowFactor()} worker 0 runs slower.
 * </ul>
 * Timers at the same simulated time run in the order they were set, all before an arrival at that
 * time; the same trace and settings give the same simulated results.
 *
 * <p>Thread-safety: not thread-safe; one instance runs once, on one thread.
 */
public final class Simulator implements SimEngine.Host {
    private final Trace trace;
    private final SimSettings settings;
    private final SimEngine[] engines;
    private final boolean[] joined;
    private final PriorityQueue<Timer> timers = new PriorityQueue<>();
    private final Policy policy;
    private long now;
    private long sequence;
    private int[] tokens = new int[1 << 14];
    private int arrived;

    /** Above this many workers the per-admission scan of every engine is skipped. */
    static final int ELSEWHERE_MAX_WORKERS = 256;

    private final boolean trackElsewhere;
    private long heldElsewhereTokens;
    private long inputTokens;
    private long reusedTokens;
    private final long[] ttftNs;
    private final long[] decisionNs;
    private final long[] requestsPerWorker;
    private long lastDone;

    /** A timer: simulated time, then its rank (metrics snapshots after engine work), then the order it was set in. */
    private record Timer(long time, int rank, long seq, Runnable action) implements Comparable<Timer> {
        @Override
        public int compareTo(Timer o) {
            int c = Long.compare(time, o.time);
            if (c == 0) {
                c = Integer.compare(rank, o.rank);
            }
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    private Simulator(Trace trace, LocalHashTable hashes, SimSettings settings, PolicyKind kind) {
        if (hashes.tokensPerBlock() != trace.tokensPerBlock()) {
            throw new IllegalArgumentException("local hashes are for " + hashes.tokensPerBlock()
                    + "-token blocks, the trace has " + trace.tokensPerBlock());
        }
        this.trace = trace;
        this.settings = settings;
        int n = settings.workers();
        this.engines = new SimEngine[n];
        this.joined = new boolean[n];
        for (int w = 0; w < n; w++) {
            MockEngine cache = new MockEngine(Worker.of(w), settings.cacheBlocks(), settings.cpuBlocks(), hashes);
            double slowness = w == 0 ? settings.slowFactor() : 1.0;
            engines[w] = SimEngine.create(w, cache, trace.tokensPerBlock(), this, settings, slowness);
        }
        this.ttftNs = new long[trace.size()];
        this.decisionNs = new long[trace.size()];
        this.requestsPerWorker = new long[n];
        this.trackElsewhere = n <= ELSEWHERE_MAX_WORKERS;
        this.policy = kind.create(settings, trace.tokensPerBlock(), () -> now);
    }

    /**
     * Simulates {@code kind} on {@code trace}; {@code progress} hears of each request as it arrives.
     *
     * @param hashes local hashes of the trace's ids, at its tokens per block, precomputed
     */
    public static PolicyResult run(
            Trace trace, LocalHashTable hashes, SimSettings settings, PolicyKind kind, LongConsumer progress) {
        Simulator s = new Simulator(trace, hashes, settings, kind);
        try (Policy p = s.policy) {
            return s.run(progress, p);
        }
    }

    private long arrivalNs(TraceRequest r) {
        return Math.round(r.timestampMs() * 1e6 / settings.rate());
    }

    private PolicyResult run(LongConsumer progress, Policy p) {
        List<TraceRequest> requests = trace.requests();
        long first = requests.isEmpty() ? 0 : arrivalNs(requests.get(0));
        long last = requests.isEmpty() ? 0 : arrivalNs(requests.get(requests.size() - 1));
        int n = engines.length;
        boolean late = settings.joinAt() > 0 && n > 1;
        now = first;
        for (int w = 0; w < (late ? n - 1 : n); w++) {
            join(w);
        }
        if (late) {
            schedule(first + Math.round(settings.joinAt() * (last - first)), () -> join(n - 1));
        }
        if (p.wantsMetrics()) {
            scheduleScrape(first);
        }
        while (arrived < requests.size() || !timers.isEmpty()) {
            long arrival = arrived < requests.size() ? arrivalNs(requests.get(arrived)) : Long.MAX_VALUE;
            Timer t = timers.peek();
            if (t != null && t.time() <= arrival) {
                timers.poll();
                now = t.time();
                t.action().run();
            } else {
                now = arrival;
                arrive(requests.get(arrived++));
                progress.accept(1);
            }
        }
        return new PolicyResult(
                p.name(),
                requests.size(),
                inputTokens,
                reusedTokens,
                trackElsewhere ? heldElsewhereTokens : -1,
                ttftNs,
                decisionNs,
                requestsPerWorker,
                lastDone - first);
    }

    private void join(int w) {
        joined[w] = true;
        policy.join(w);
    }

    private void scrape() {
        for (SimEngine e : engines) {
            if (joined[e.index]) {
                policy.metrics(e.index, e.waitingRequests(), e.runningRequests(), e.kvUsage());
            }
        }
        if (arrived < trace.size()) {
            scheduleScrape(now + SimSettings.METRICS_REFRESH.toNanos());
        }
    }

    /** A snapshot runs after whatever else the engines do at the same instant. */
    private void scheduleScrape(long at) {
        timers.add(new Timer(at, 1, sequence++, this::scrape));
    }

    private void arrive(TraceRequest r) {
        SimRequest q = new SimRequest(r, now);
        int length = fillTokens(r);
        long t0 = System.nanoTime();
        int w = policy.route(q, tokens, length);
        decisionNs[r.index()] = System.nanoTime() - t0;
        if (w < 0 || w >= engines.length || !joined[w]) {
            throw new IllegalStateException(policy.name() + " chose worker " + w + ", which is not registered");
        }
        q.worker = w;
        requestsPerWorker[w]++;
        engines[w].enqueue(q);
    }

    /** The request's tokens: block {@code i} is {@code tokensPerBlock} copies of its id (docs/SPEC.md section 2.3). */
    private int fillTokens(TraceRequest r) {
        int tpb = trace.tokensPerBlock();
        long[] ids = r.hashIds();
        int length = (int) Math.min(r.inputLength(), (long) ids.length * tpb);
        if (tokens.length < length) {
            tokens = new int[Math.max(length, tokens.length * 2)];
        }
        for (int b = 0, at = 0; at < length; b++) {
            int end = Math.min(length, at + tpb);
            java.util.Arrays.fill(tokens, at, end, (int) ids[b]);
            at = end;
        }
        return length;
    }

    @Override
    public long now() {
        return now;
    }

    @Override
    public void schedule(long at, Runnable action) {
        timers.add(new Timer(Math.max(at, now), 0, sequence++, action));
    }

    @Override
    public void publish(List<KvEvent> events) {
        if (events.isEmpty() || !policy.wantsEvents()) {
            return;
        }
        schedule(now + settings.eventDelayNs(), () -> {
            for (KvEvent e : events) {
                policy.apply(e);
            }
        });
    }

    @Override
    public void admitted(SimRequest r, AdmitResult a) {
        inputTokens += r.trace.inputLength();
        reusedTokens += r.cachedTokens;
        if (trackElsewhere) {
            int full = r.trace.fullBlocks(trace.tokensPerBlock());
            int best = 0;
            for (SimEngine e : engines) {
                if (e.index != r.worker && joined[e.index]) {
                    best = Math.max(best, e.cache.cachedPrefixAnyTier(r.trace.hashIds(), full));
                }
            }
            int own = a.cachedBlocks() + a.lowerTierBlocks();
            heldElsewhereTokens += (long) Math.max(0, best - own) * trace.tokensPerBlock();
        }
    }

    @Override
    public void firstToken(SimRequest r) {
        ttftNs[r.trace.index()] = now - r.arrivalNs;
        policy.prefillDone(r);
    }

    @Override
    public void finished(SimRequest r) {
        policy.finished(r);
        lastDone = now;
    }

    /**
     * Per request, its leading full blocks whose whole prefix (the block and all before it) appeared in
     * an earlier request: what one infinite cache shared by all workers would have reused.
     */
    static int[] infiniteCacheHitBlocks(Trace trace) {
        int tpb = trace.tokensPerBlock();
        LongOpenHashSet seen = new LongOpenHashSet();
        int[] out = new int[trace.size()];
        for (TraceRequest r : trace.requests()) {
            long[] ids = r.hashIds();
            int full = r.fullBlocks(tpb);
            long key = 0;
            boolean prefixSeen = true;
            for (int i = 0; i < full; i++) {
                key = MockEngine.engineHash(i > 0, key, ids[i]);
                if (prefixSeen && seen.contains(key)) {
                    out[r.index()]++;
                } else {
                    prefixSeen = false;
                    seen.add(key);
                }
            }
        }
        return out;
    }

    /**
     * The infinite-cache bound in tokens: the tokens of every full block whose whole prefix appeared in
     * an earlier request ({@link #infiniteCacheHitBlocks}). Divided by the input tokens it bounds every
     * policy's hit rate.
     */
    public static long infiniteCacheHitTokens(Trace trace) {
        long blocks = 0;
        for (int b : infiniteCacheHitBlocks(trace)) {
            blocks += b;
        }
        return blocks * trace.tokensPerBlock();
    }

    /**
     * The TTFT floor of each request, nanoseconds: its own prefill of the tokens the infinite cache
     * would not have held, alone on an idle engine of the settings' model at full speed (no queueing,
     * no other request in its steps). No policy gives a request a shorter TTFT, so these bound every
     * policy's TTFT percentiles from below.
     */
    public static long[] ttftFloorNs(Trace trace, SimSettings s) {
        int[] hit = infiniteCacheHitBlocks(trace);
        long[] out = new long[trace.size()];
        for (TraceRequest r : trace.requests()) {
            long u = r.inputLength() - (long) hit[r.index()] * trace.tokensPerBlock();
            double seconds;
            if (s.engine() == SimSettings.EngineModel.VLLM_CHUNKED) {
                u = Math.max(1, u);
                long steps = (u + s.maxBatchedTokens() - 1) / s.maxBatchedTokens();
                seconds = steps / s.decodeTokensPerS() + u / s.prefillTokensPerS();
            } else {
                seconds = Math.max(0, u) / s.prefillTokensPerS();
            }
            out[r.index()] = Math.round(seconds * 1e9);
        }
        return out;
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
