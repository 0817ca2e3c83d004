package io.kvprefix.bench;

import io.kvprefix.BlockHasher;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchExplanation;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Router;
import io.kvprefix.RoutingDecision;
import io.kvprefix.Worker;
import io.kvprefix.metrics.PrefixIndexMetrics;
import io.kvprefix.metrics.RouterMetrics;
import io.kvprefix.opstream.Implementations;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What metrics cost on the match and routing paths (docs/BENCHMARKS.md section 1, the names in
 * docs/METRICS.md): {@link RouterBenchmark}'s fixture measured {@code bare}, with the match-timing
 * decorator ({@code timed}), with {@link RouterMetrics} observing the router ({@code observed}), and
 * with both. {@code hashAndMatch} is one token match, {@code routeAndFinish} a decision and its
 * release, {@code emptyMatch} and {@code observeOnly} isolate the decorator's and the observer's
 * own cost, {@code explainHashes} is one explain.
 *
 * <p>{@link #setup()} checks the answer (the worker holding the whole request wins, with every block)
 * and, with metrics bound, that they counted it.
 *
 * <p>Thread-safety: JMH state for one benchmark thread.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 2,
        jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class MetricsOverheadBenchmark {
    static final int WORKERS = 16;
    static final int BLOCK = 16;

    @Param({"bare", "timed", "observed", "both"})
    public String metrics;

    @Param({"offheap-native", "offheap-java"})
    public String impl;

    @Param({"8192"})
    public int tokens;

    PrefixIndex raw;
    PrefixIndex index;
    Router router;
    RouterMetrics observer;
    int[] request;
    long[] locals;
    RoutingDecision decision;
    final MatchResult result = new MatchResult();
    private static final long[] NO_BLOCKS = new long[0];

    @Setup(Level.Trial)
    public void setup() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        raw = Implementations.create(
                impl, IndexConfig.builder().blockSize(BLOCK).maxWorkers(64).build());
        boolean timed = metrics.equals("timed") || metrics.equals("both");
        boolean observed = metrics.equals("observed") || metrics.equals("both");
        index = timed ? PrefixIndexMetrics.timed(raw, registry) : raw;
        SplittableRandom r = new SplittableRandom(9);
        request = new int[tokens];
        for (int i = 0; i < tokens; i++) {
            request[i] = r.nextInt(150_000);
        }
        locals = BlockHasher.builder().blockSize(BLOCK).build().localHashes(request);
        Router.Builder b = Router.builder().index(index);
        long e = 1;
        for (int w = 0; w < WORKERS; w++) {
            Worker worker = Worker.of(w);
            b.worker(worker);
            int held = (int) ((long) locals.length * (w + 1) / WORKERS);
            long[] names = new long[held];
            for (int i = 0; i < held; i++) {
                names[i] = e++;
            }
            BenchFixtures.ok(index.apply(KvEvent.Stored.root(worker, names, Arrays.copyOf(locals, held))));
            e = BenchFixtures.filler(index, worker, MatchBenchmark.FILLER, r, e);
        }
        router = b.build();
        if (observed) {
            observer = new RouterMetrics(router);
            observer.bindTo(registry);
        }
        RoutingDecision d = router.route(request);
        d.finished();
        decision = d;
        index.match(request, 0, request.length, index.hasher(), result);
        if (!d.worker().equals(Worker.of(WORKERS - 1))
                || d.overlapBlocks() != locals.length
                || result.depthOf(Worker.of(WORKERS - 1)) != locals.length) {
            throw new IllegalStateException(
                    metrics + "/" + impl + ": routed to " + d.worker() + " with " + d.overlapBlocks()
                            + " cached blocks; expected worker " + (WORKERS - 1) + " with " + locals.length);
        }
        MatchExplanation x = index.explain(locals, 0, locals.length);
        if (x.of(Worker.of(WORKERS - 1)).orElseThrow().stop() != MatchExplanation.Stop.COMPLETE
                || x.of(Worker.of(0)).orElseThrow().depth() != locals.length / WORKERS) {
            throw new IllegalStateException(metrics + "/" + impl + ": wrong explanation " + x);
        }
        String text = registry.scrape();
        if (timed != text.contains("kvprefix_index_match_seconds_count 2")
                || observed != text.contains("kvprefix_router_decisions_total{worker=\"15/0\"} 1.0")) {
            throw new IllegalStateException(metrics + ": the metrics did not count the setup's match and decision");
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (observer != null) {
            observer.close();
        }
        router.close();
        raw.close();
    }

    @Benchmark
    public MatchResult hashAndMatch() {
        index.match(request, 0, request.length, index.hasher(), result);
        return result;
    }

    /**
     * A match of an empty request: the index does next to nothing, so what {@code timed} adds over
     * {@code bare} is the decorator's own cost, out of the noise of a real match.
     */
    @Benchmark
    public MatchResult emptyMatch() {
        index.match(NO_BLOCKS, 0, 0, result);
        return result;
    }

    /**
     * One explain of the request given as local hashes (no salt is tried): how long the off-heap
     * index holds its writers out for the walk, at most (docs/SPEC.md section 4.1).
     */
    @Benchmark
    public MatchExplanation explainHashes() {
        return index.explain(locals, 0, locals.length);
    }

    /** The observer's own cost per decision (nothing for {@code bare} and {@code timed}: no observer). */
    @Benchmark
    public RoutingDecision observeOnly() {
        if (observer != null) {
            observer.decided(decision);
        }
        return decision;
    }

    @Benchmark
    public RoutingDecision routeAndFinish() {
        RoutingDecision d = router.route(request);
        d.finished();
        return d;
    }
}
