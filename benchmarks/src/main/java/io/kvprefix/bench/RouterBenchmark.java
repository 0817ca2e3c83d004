package io.kvprefix.bench;

import io.kvprefix.BlockHasher;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.Router;
import io.kvprefix.RoutingDecision;
import io.kvprefix.Worker;
import io.kvprefix.opstream.Implementations;
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
 * The router's own cost per decision (target: under 10 us p99 for an 8k-token request at 16-token
 * blocks, hashing included): {@code route(tokens)}, {@code prefillFinished()} then {@code finished()},
 * for each policy, against an index where 16 workers each hold {@link MatchBenchmark#FILLER}
 * unrelated blocks plus a growing share of the request (worker w holds its first {@code (w+1)/16}),
 * so depths and costs differ per worker. With {@code workers} above 16 the others are registered with
 * the router and hold nothing, which measures what a decision costs on a large fleet (docs/SPEC.md
 * section 6.5). With {@code fleet=busy} every worker first gets one request of its own length that
 * never finishes (distinct loads, a prefill pending on each), the state of a fleet under load.
 * Sample-time mode gives the percentiles.
 *
 * <p>{@link #setup()} checks the decision: the worker holding the whole request wins (its prefill
 * is smallest and all loads are equal).
 *
 * <p>Thread-safety: JMH state for one benchmark thread.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 2,
        jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class RouterBenchmark {
    static final int HOLDERS = 16;
    static final int BLOCK = 16;

    @Param({"offheap-native", "offheap-java", "heap"})
    public String impl;

    @Param({"8192"})
    public int tokens;

    @Param({"16", "1024", "10000"})
    public int workers;

    @Param({"dynamo-cost", "kvprefix-ttft"})
    public String policy;

    @Param({"idle", "busy"})
    public String fleet;

    /** {@code on}: the router counts in-flight prefills (docs/SPEC.md section 6.7); run with {@code -p inflight=off,on}. */
    @Param({"off"})
    public String inflight;

    Router router;
    int[] request;

    @Setup(Level.Trial)
    public void setup() {
        IndexConfig config =
                IndexConfig.builder().blockSize(BLOCK).maxWorkers(64).build();
        var index = Implementations.create(impl, config);
        SplittableRandom r = new SplittableRandom(9);
        request = new int[tokens];
        for (int i = 0; i < tokens; i++) {
            request[i] = r.nextInt(150_000);
        }
        long[] locals = BlockHasher.builder().blockSize(BLOCK).build().localHashes(request);
        Router.Builder b = Router.builder().index(index).policy(policy).inflightPrefills(inflight.equals("on"));
        long e = 1;
        for (int w = HOLDERS; w < workers; w++) {
            b.worker(Worker.of(w));
        }
        for (int w = 0; w < HOLDERS; w++) {
            Worker worker = Worker.of(w);
            b.worker(worker);
            int held = (int) ((long) locals.length * (w + 1) / HOLDERS);
            long[] names = new long[held];
            for (int i = 0; i < held; i++) {
                names[i] = e++;
            }
            BenchFixtures.ok(index.apply(KvEvent.Stored.root(worker, names, java.util.Arrays.copyOf(locals, held))));
            e = BenchFixtures.filler(index, worker, MatchBenchmark.FILLER, r, e);
        }
        router = b.build();
        RoutingDecision d = router.route(request);
        if (!d.worker().equals(Worker.of(HOLDERS - 1)) || d.overlapBlocks() != locals.length) {
            throw new IllegalStateException(
                    impl + ", " + policy + ": routed to " + d.worker() + " with " + d.overlapBlocks()
                            + " cached blocks; expected worker " + (HOLDERS - 1) + " with " + locals.length);
        }
        if (router.workers().size() != Math.max(workers, HOLDERS)) {
            throw new IllegalStateException(router.workers().size() + " workers registered, expected " + workers);
        }
        d.prefillFinished();
        d.finished();
        if (fleet.equals("busy")) {
            int[] other = new int[BLOCK * 64];
            for (int i = 0; i < router.workers().size(); i++) { // misses of many lengths, spread by load
                other[0] = 200_000 + i;
                router.route(other, 0, BLOCK * (1 + i % 64), router.hasher());
            }
            RoutingDecision busy = router.route(request);
            if (busy.overlapBlocks() == 0) { // a holder wins (which one depends on the loads the misses left)
                throw new IllegalStateException(impl + ", " + policy + ", busy fleet: routed to " + busy.worker()
                        + " holding none of the request");
            }
            busy.finished();
        } else if (!fleet.equals("idle")) {
            throw new IllegalArgumentException("fleet is idle or busy, not " + fleet);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        router.close();
    }

    @Benchmark
    public RoutingDecision routeAndFinish() {
        RoutingDecision d = router.route(request);
        d.prefillFinished();
        d.finished();
        return d;
    }
}
