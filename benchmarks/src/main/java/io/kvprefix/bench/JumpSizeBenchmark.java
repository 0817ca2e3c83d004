package io.kvprefix.bench;

import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.opstream.Implementations;
import io.kvprefix.workload.MooncakeTraceReader;
import io.kvprefix.workload.SyntheticTrace;
import io.kvprefix.workload.Trace;
import io.kvprefix.workload.Workload;
import io.kvprefix.workload.WorkloadStep;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * How the jump size changes match cost on a realistic workload: every event of a trace replayed
 * against mock engines (16 workers x 16,384 blocks) is applied, then every request's match is
 * timed against that final state. {@code workload=conversation} reads the Mooncake conversation
 * trace from {@code -Dkvprefix.trace} (default {@code ../shared/traces/conversation_trace.jsonl});
 * {@code workload=synthetic} uses the built-in generator. One operation is one match (the score is
 * the mean over all requests). It was written for the positional off-heap table: the chain index has
 * no jump search, so its rows no longer vary with the jump size (benchmarks/RESULTS.md section 6).
 *
 * <p>{@link #setup()} checks that the index's depths do not depend on the jump size: the total
 * matched depth must equal the jump-size-1 answer.
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
public class JumpSizeBenchmark {
    static final int REQUESTS = 4096; // matches per invocation (the first REQUESTS of the trace's requests)

    @Param({"offheap-java", "offheap-native"})
    public String impl;

    @Param({"2", "4", "8", "16", "32", "64"})
    public int jump;

    @Param({"conversation", "synthetic"})
    public String workload;

    PrefixIndex index;
    long[][] queries;
    final MatchResult result = new MatchResult(64);

    @Setup(Level.Trial)
    public void setup() throws IOException {
        Trace trace = workload.equals("conversation")
                ? MooncakeTraceReader.read(tracePath())
                : SyntheticTrace.generate(SyntheticTrace.DEFAULT_REQUESTS, 42);
        Workload w = Workload.load(trace, Workload.Options.DEFAULTS);
        List<long[]> qs = new ArrayList<>();
        List<KvEvent> events = new ArrayList<>();
        for (WorkloadStep s : w.steps()) {
            qs.add(s.matchHashes());
            events.addAll(s.events());
        }
        IndexConfig cfg =
                IndexConfig.builder().jumpSize(jump).expectedBlocks(16L * 16384).build();
        index = Implementations.create(impl, cfg);
        events.forEach(index::apply);
        try (PrefixIndex reference =
                Implementations.create(impl, cfg.toBuilder().jumpSize(1).build())) {
            events.forEach(reference::apply);
            long a = 0, b = 0;
            for (long[] q : qs) {
                a += index.match(q).maxDepth();
                b += reference.match(q).maxDepth();
            }
            if (a != b) {
                throw new IllegalStateException("jump size " + jump + " changed the answers: " + a + " vs " + b);
            }
        }
        queries = qs.subList(0, Math.min(REQUESTS, qs.size())).toArray(new long[0][]);
    }

    static Path tracePath() {
        Path p = Path.of(System.getProperty("kvprefix.trace", "../shared/traces/conversation_trace.jsonl"));
        if (!Files.isRegularFile(p)) {
            throw new IllegalStateException("trace not found: " + p.toAbsolutePath() + " (set -Dkvprefix.trace=FILE)");
        }
        return p;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        index.close();
    }

    @Benchmark
    @OperationsPerInvocation(REQUESTS)
    public int matchAll() {
        int sum = 0;
        for (long[] q : queries) {
            index.match(q, 0, q.length, result);
            sum += result.size();
        }
        return sum;
    }
}
