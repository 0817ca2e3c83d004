package io.kvprefix.simulator;

import io.kvprefix.KvEvent;
import io.kvprefix.Worker;
import io.kvprefix.simulator.internal.Policies;
import io.kvprefix.simulator.internal.Policy;
import io.kvprefix.simulator.internal.SimRequest;
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
 * ({@link Engine}), replaying a trace in simulated time: arrivals, engine work, event delivery after
 * the delay, metrics snapshots, a late join (the package description, <i>The loop</i>). The same trace
 * and settings give the same simulated results.
 *
 * <p>Thread-safety: not thread-safe; one instance runs once, on one thread ({@link #run} is safe to call
 * from several threads at once: each call has its own instance).
 */
public final class Simulator implements EngineHost {
    private final Trace trace;
    private final SimSettings settings;
    private final Engine[] engines;
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
        this.engines = new Engine[n];
        this.joined = new boolean[n];
        for (int w = 0; w < n; w++) {
            MockEngine cache = new MockEngine(Worker.of(w), settings.cacheBlocks(), settings.cpuBlocks(), hashes);
            double slowness = w == 0 ? settings.slowFactor() : 1.0;
            engines[w] = Engine.create(settings.engineSettings(slowness), cache, this);
        }
        this.ttftNs = new long[trace.size()];
        this.decisionNs = new long[trace.size()];
        this.requestsPerWorker = new long[n];
        this.trackElsewhere = n <= ELSEWHERE_MAX_WORKERS;
        this.policy = Policies.create(kind, settings, trace.tokensPerBlock(), () -> now);
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
        for (int w = 0; w < engines.length; w++) {
            if (joined[w]) {
                Engine e = engines[w];
                policy.metrics(w, e.waitingRequests(), e.runningRequests(), e.kvUsage());
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
        q.routedTo(w);
        requestsPerWorker[w]++;
        engines[w].submit(q);
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
    public void publish(EngineRequest source, int firstBlock, List<KvEvent> events) {
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
    public void admitted(EngineRequest er, AdmitResult a) {
        SimRequest r = (SimRequest) er;
        inputTokens += r.inputTokens();
        reusedTokens += r.cachedTokens();
        if (trackElsewhere) {
            int full = r.trace().fullBlocks(trace.tokensPerBlock());
            int best = 0;
            for (int w = 0; w < engines.length; w++) {
                if (w != r.worker() && joined[w]) {
                    best = Math.max(
                            best,
                            engines[w].cache().cachedPrefixAnyTier(r.trace().hashIds(), full));
                }
            }
            int own = a.cachedBlocks() + a.lowerTierBlocks();
            heldElsewhereTokens += (long) Math.max(0, best - own) * trace.tokensPerBlock();
        }
    }

    @Override
    public void firstToken(EngineRequest er) {
        SimRequest r = (SimRequest) er;
        ttftNs[r.trace().index()] = now - r.arrivalNs();
        policy.prefillDone(r);
    }

    @Override
    public void finished(EngineRequest r) {
        policy.finished((SimRequest) r);
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
            if (s.engine() == EngineModel.VLLM_CHUNKED) {
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
