package io.kvprefix.workload;

import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.Worker;
import io.kvprefix.opstream.OpStreamWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * A trace replayed against mock engines: the op stream of {@code kvprefix gen-ops}, in memory (for
 * benchmarks that load a workload once and replay it many times) or streamed ({@link #simulate}).
 * Each request goes to a worker drawn at random ({@link Rng}, one draw per request), is admitted by
 * that worker's {@link MockEngine} and released at once (an offline replay), and gives one
 * {@link WorkloadStep}: its match, then its worker's events; the same trace and options give the
 * same steps, bit for bit (docs/BENCHMARKS.md section 2). {@link #totals()} counts ops and block ops
 * as Dynamo does ({@link WorkloadTotals}).
 *
 * <p>Thread-safety: an instance is immutable once built and may be read from any number of threads
 * (the arrays in its steps must not be modified). {@link #simulate} is not thread-safe with respect
 * to the {@link LocalHashTable} it is given.
 */
public final class Workload {

    /**
     * Simulation settings.
     *
     * <p>Thread-safety: immutable.
     *
     * @param workers number of workers, 1 .. {@link IndexConfig#MAX_WORKER_SLOTS}
     * @param cacheBlocks blocks per mock engine, at least 1
     * @param seed seed of the request-to-worker spread
     */
    public record Options(int workers, int cacheBlocks, long seed) {
        /** 16 workers, 16,384 blocks each, seed 42 (Dynamo's bench settings for the blog figures). */
        public static final Options DEFAULTS = new Options(16, MockEngine.DEFAULT_CAPACITY, 42);

        public Options {
            if (workers < 1 || workers > IndexConfig.MAX_WORKER_SLOTS) {
                throw new IllegalArgumentException(
                        "--workers must be in 1.." + IndexConfig.MAX_WORKER_SLOTS + ", got " + workers);
            }
            if (cacheBlocks < 1) {
                throw new IllegalArgumentException("--cache-blocks must be >= 1, got " + cacheBlocks);
            }
        }
    }

    /**
     * Receives the steps of a simulation, in order.
     *
     * <p>Thread-safety: called from the simulating thread only.
     */
    @FunctionalInterface
    public interface StepSink {
        /** One more step. */
        void accept(WorkloadStep step) throws IOException;
    }

    private final Trace trace;
    private final Options options;
    private final List<WorkloadStep> steps;
    private final WorkloadTotals totals;

    private Workload(Trace trace, Options options, List<WorkloadStep> steps, WorkloadTotals totals) {
        this.trace = trace;
        this.options = options;
        this.steps = Collections.unmodifiableList(steps);
        this.totals = totals;
    }

    /** Simulates {@code trace} and keeps every step in memory. */
    public static Workload load(Trace trace, Options options) {
        List<WorkloadStep> steps = new ArrayList<>(trace.size());
        WorkloadTotals totals = new WorkloadTotals();
        try {
            simulate(trace, LocalHashTable.forTrace(trace), options, s -> {
                steps.add(s);
                totals.add(s);
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e); // the sink above does no I/O
        }
        return new Workload(trace, options, steps, totals);
    }

    /**
     * Simulates {@code trace} and hands each step to {@code sink} as it is made, keeping nothing.
     *
     * @param hashes local hashes at {@code trace.tokensPerBlock()} tokens per block
     */
    public static void simulate(Trace trace, LocalHashTable hashes, Options options, StepSink sink) throws IOException {
        Objects.requireNonNull(sink, "sink");
        if (hashes.tokensPerBlock() != trace.tokensPerBlock()) {
            throw new IllegalArgumentException("local hashes are for " + hashes.tokensPerBlock()
                    + "-token blocks, the trace has " + trace.tokensPerBlock());
        }
        MockEngine[] engines = new MockEngine[options.workers()];
        for (int w = 0; w < engines.length; w++) {
            engines[w] = new MockEngine(Worker.of(w), options.cacheBlocks(), hashes);
        }
        Rng spread = new Rng(options.seed());
        for (TraceRequest r : trace.requests()) {
            MockEngine engine = engines[spread.nextInt(engines.length)];
            long[] match = hashes.localHashes(r.hashIds());
            AdmitResult a = engine.admit(r);
            engine.release(r);
            sink.accept(new WorkloadStep(r, engine.worker(), match, a));
        }
    }

    /** The trace simulated. */
    public Trace trace() {
        return trace;
    }

    /** The settings used. */
    public Options options() {
        return options;
    }

    /** The steps, one per request, in arrival order (unmodifiable). */
    public List<WorkloadStep> steps() {
        return steps;
    }

    /** Number of steps (requests). */
    public int size() {
        return steps.size();
    }

    /** Step {@code i}. */
    public WorkloadStep step(int i) {
        return steps.get(i);
    }

    /** Counts, with Dynamo's accounting. */
    public WorkloadTotals totals() {
        return totals;
    }

    /** The whole op stream, in order (see {@link #writeStep}). */
    public void write(OpStreamWriter out, boolean tokenForm) throws IOException {
        for (WorkloadStep s : steps) {
            writeStep(s, trace.tokensPerBlock(), out, tokenForm);
        }
    }

    /**
     * Writes one step's op-stream lines (docs/SPEC.md section 5): the match, then each event. In hash form
     * the match carries {@code local_hashes} and stored events carry {@code (block_hash, tokens_hash)}
     * pairs. In token form ({@code tokenForm}) each block id becomes {@code tokensPerBlock} tokens equal to
     * it, with {@code block_size = tokensPerBlock}: the match lists the tokens of every block (so the
     * partial last block is queried as a full block of its id, exactly as in hash form), and a stored
     * event lists the tokens of its blocks with their engine hashes. Both forms give an index the same
     * state and the same answers.
     */
    public static void writeStep(WorkloadStep step, int tokensPerBlock, OpStreamWriter out, boolean tokenForm)
            throws IOException {
        writeStep(step, tokensPerBlock, out, tokenForm, null);
    }

    /**
     * As {@link #writeStep(WorkloadStep, int, OpStreamWriter, boolean)}, with the events' engine
     * hashes renamed by {@code names} first (null: the mock engines' own).
     */
    public static void writeStep(
            WorkloadStep step, int tokensPerBlock, OpStreamWriter out, boolean tokenForm, DynamoEngineHashes names)
            throws IOException {
        long[] ids = step.request().hashIds();
        if (tokenForm) {
            int[] tokens = LocalHashTable.blockTokens(ids, 0, ids.length, tokensPerBlock);
            out.matchTokens(tokens, 0, tokens.length, tokensPerBlock, null, null);
        } else {
            out.matchHashes(step.matchHashes(), 0, step.matchHashes().length);
        }
        for (KvEvent original : step.events()) {
            KvEvent e = names == null ? original : names.rename(original);
            if (tokenForm && e instanceof KvEvent.Stored s) {
                int from = step.admit().cachedBlocks();
                int[] tokens = LocalHashTable.blockTokens(ids, from, from + s.size(), tokensPerBlock);
                out.event(new KvEvent.StoredTokens(
                        s.worker(), s.parentHash(), tokens, tokensPerBlock, s.blockHashes(), null, null));
            } else {
                out.event(e);
            }
        }
    }
}
