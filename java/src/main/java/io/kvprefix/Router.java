package io.kvprefix;

import io.kvprefix.internal.router.InflightBlocks;
import io.kvprefix.internal.router.LoadTable;
import io.kvprefix.internal.router.Observers;
import io.kvprefix.internal.router.OptionChecks;
import io.kvprefix.internal.router.PredictedBlocks;
import io.kvprefix.internal.router.RouteExplainer;
import io.kvprefix.internal.router.RouteMatch;
import io.kvprefix.internal.router.RouteScratch;
import io.kvprefix.internal.router.Selector;
import io.kvprefix.internal.router.WorkerLoad;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Objects;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;

/**
 * Picks the worker for each request: KV-cache-aware routing with load balancing on top of a
 * {@link PrefixIndex}, with one of the policies of docs/SPEC.md section 6 ({@link RoutingPolicy}),
 * which also states the load it tracks from its own decisions, the workers it routes among, its
 * options (each on its {@link Builder} method) and what a decision costs (section 6.5).
 *
 * <pre>{@code
 * Router router = Router.builder().index(index).policy("kvprefix-ttft")
 *         .worker(Worker.of(1)).worker(Worker.of(2)).build();
 * RoutingDecision d = router.route(tokens);      // one hash-and-match call, then the policy
 * send(request, d.worker());
 * ...first token out...  d.prefillFinished();
 * ...request done...     d.finished();
 * }</pre>
 *
 * <p>Thread-safety: thread-safe; any number of threads may route, add and remove workers and release
 * decisions at once (the per-worker load table is guarded by one short lock, the match runs outside it).
 */
public final class Router implements AutoCloseable {
    private final PrefixIndex events;
    private final PredictedBlocks predicted;
    private final BlockHasher hasher;
    private final LoadTable table;
    private final RoutingPolicy policy;
    private final ToLongFunction<Worker> blockCount;
    private final InflightBlocks inflight;
    private final ThreadLocal<RouteScratch> scratch = ThreadLocal.withInitial(RouteScratch::new);
    private final Observers observers = new Observers();
    private volatile boolean closed;

    private Router(Builder b) {
        this.events = b.index;
        IndexConfig config =
                b.index != null ? b.index.config() : b.indexConfig != null ? b.indexConfig : IndexConfig.defaults();
        this.hasher = b.index != null ? b.index.hasher() : config.hasher();
        this.policy = b.policy;
        this.table = new LoadTable(
                b.policy,
                new Selector.Options(
                        b.overlapWeight,
                        b.temperature,
                        b.minMatchBlocks,
                        b.minMatchTokens,
                        b.spreadMisses,
                        b.seed,
                        b.lowerTierCredit),
                b.clock,
                hasher.blockSize());
        for (var e : b.workers.entrySet()) {
            table.add(e.getKey(), e.getValue());
        }
        this.inflight = b.inflight ? table.countInflight(InflightBlocks.DEFAULT_MAX_BLOCKS) : null;
        if (b.predicted) {
            PrefixIndex p = PrefixIndex.create(
                    config.toBuilder().memoryBudgetBytes(IndexConfig.UNLIMITED).build());
            this.predicted = new PredictedBlocks(p, b.predictedTtl.toNanos(), b.predictedMaxBlocks, b.clock);
        } else {
            this.predicted = null;
        }
        this.blockCount = events != null ? events::blockCount : predicted::blockCount;
    }

    /** A builder with every option at its default; set an event-fed {@link Builder#index} or turn on {@link Builder#predicted}. */
    public static Builder builder() {
        return new Builder();
    }

    /** Routes {@code tokens}, hashed with the index's hasher (its block size and seeds, no salt). */
    public RoutingDecision route(int[] tokens) {
        return route(tokens, 0, tokens.length, hasher);
    }

    /**
     * Routes the request {@code tokens[offset .. offset+length)} hashed with {@code hasher} (for example
     * salted for a LoRA adapter, or another block size). The request's {@code isl} is {@code length}.
     * Without predicted mode this is one {@link PrefixIndex#match(int[], int, int, BlockHasher,
     * MatchResult)} call (one native downcall on the native path) outside any lock, then work under a
     * short lock that grows with the matched workers for dynamo-cost at temperature 0 and with the
     * fleet otherwise (docs/SPEC.md section 6.5), and nothing is allocated but the decision (with kvprefix-ttft, also one
     * small node for its pending prefill).
     *
     * @throws IllegalArgumentException if {@code hasher}'s chain seed differs from the index's
     * @throws IllegalStateException if no worker is registered, or the router or its index is closed
     */
    public RoutingDecision route(int[] tokens, int offset, int length, BlockHasher hasher) {
        return route(tokens, offset, length, hasher, null);
    }

    /**
     * As {@link #route(int[], int, int, BlockHasher)}, choosing only among the registered workers that
     * {@code among} accepts (all of them when null): the policy weighs those alone, as if they were the
     * only members (for example a gateway's subset hint, or the one endpoint that served a request). The
     * predicate is called under the router's lock, once per member: keep it cheap.
     *
     * @throws IllegalStateException if no registered worker is accepted, or as the other form
     */
    public RoutingDecision route(int[] tokens, int offset, int length, BlockHasher hasher, Predicate<Worker> among) {
        return route(tokens, offset, length, hasher, among, null);
    }

    /**
     * As {@link #route(int[], int, int, BlockHasher, Predicate)}, and hands back the request's local hashes
     * (every full block's) into {@code localHashesOut[0 .. hasher.blockCount(length))} from the same
     * hash-and-match ({@link PrefixIndex#match(int[], int, int, BlockHasher, MatchResult, long[])}), so a
     * caller that needs them too is not hashing the request a second time; null hands back nothing.
     *
     * @throws IllegalArgumentException if {@code localHashesOut} has room for fewer hashes, or as the other form
     */
    public RoutingDecision route(
            int[] tokens, int offset, int length, BlockHasher hasher, Predicate<Worker> among, long[] localHashesOut) {
        Objects.checkFromIndexSize(offset, length, tokens.length);
        Objects.requireNonNull(hasher, "hasher");
        checkOpen();
        RouteScratch s = scratch.get();
        int bs = hasher.blockSize();
        if (predicted == null) {
            RouteMatch.tokens(events, checkCovered(s), s, tokens, offset, length, hasher, localHashesOut);
            table.decide(s.first, null, true, length, bs, blockCount, among, s.choice);
            return decision(s, length, bs);
        }
        OptionChecks.sameChainSeed(this.hasher, hasher);
        int blocks = RouteMatch.hashBoth(s, tokens, offset, length, hasher, localHashesOut);
        return routePredicted(s, blocks, length, bs, among);
    }

    /**
     * Routes a request given as its local hashes ({@link BlockHasher#localHashes}) at the index's block
     * size, {@code inputTokens} long (at least {@code localHashes.length * blockSize}).
     *
     * @throws IllegalArgumentException if {@code inputTokens} is shorter than the blocks given
     * @throws IllegalStateException if no worker is registered, or the router or its index is closed
     */
    public RoutingDecision route(long[] localHashes, int inputTokens) {
        return route(localHashes, inputTokens, null);
    }

    /**
     * As {@link #route(long[], int)}, choosing only among the registered workers that {@code among}
     * accepts (all of them when null; see {@link #route(int[], int, int, BlockHasher, Predicate)}).
     *
     * @throws IllegalStateException if no registered worker is accepted, or as the other form
     */
    public RoutingDecision route(long[] localHashes, int inputTokens, Predicate<Worker> among) {
        int bs = OptionChecks.fits(hasher, localHashes, inputTokens);
        int n = localHashes.length;
        checkOpen();
        RouteScratch s = scratch.get();
        if (predicted == null) {
            RouteMatch.hashes(events, checkCovered(s), s, localHashes, n);
            table.decide(s.first, null, true, inputTokens, bs, blockCount, among, s.choice);
            return decision(s, inputTokens, bs);
        }
        RouteMatch.chains(s, hasher, localHashes, n);
        return routePredicted(s, n, inputTokens, bs, among);
    }

    private RoutingDecision routePredicted(RouteScratch s, int blocks, int isl, int bs, Predicate<Worker> among) {
        predicted.expire();
        if (checkCovered(s)) {
            s.choice.locals = s.locals;
            s.choice.blocks = blocks;
        }
        if (events != null) {
            events.match(s.locals, 0, blocks, s.first);
        }
        predicted.match(s.locals, 0, blocks, s.second);
        table.decide(events != null ? s.first : null, s.second, events != null, isl, bs, blockCount, among, s.choice);
        WorkerLoad chosen = s.choice.load;
        RoutingDecision d = decision(s, isl, bs);
        predicted.record(chosen, s.locals, s.chains, blocks);
        return d;
    }

    private RoutingDecision decision(RouteScratch s, int isl, int bs) {
        LoadTable.Choice c = s.choice;
        RoutingDecision d = new RoutingDecision(table, c, isl, bs);
        c.clear();
        observers.decided(d);
        return d;
    }

    /** With in-flight prefills counted, checks one credit's coverage (docs/SPEC.md section 6.7); true if counted. */
    private boolean checkCovered(RouteScratch s) {
        if (inflight != null && events != null) {
            s.checkCovered(inflight, events);
        }
        return inflight != null;
    }

    /** Adds an observer of every later decision ({@link RoutingObserver}); an observer added twice is called twice. */
    public void addObserver(RoutingObserver observer) {
        observers.add(observer);
    }

    /** Removes one registration of {@code observer}; false if it was not added. */
    public boolean removeObserver(RoutingObserver observer) {
        return observers.remove(observer);
    }

    /** Explains {@link #route(int[])} for {@code tokens}, hashed with the index's hasher. */
    public RouteExplanation explain(int[] tokens) {
        return explain(tokens, 0, tokens.length, hasher);
    }

    /**
     * Explains where {@link #route(int[], int, int, BlockHasher)} would send this request and why
     * (docs/SPEC.md section 4.1): the index's {@link PrefixIndex#explain}, then every worker's depth,
     * cost and verdict. Nothing is charged, chosen or drawn (expired predicted blocks are dropped, as a
     * routing call would); the routing path pays nothing for this method.
     *
     * @throws IllegalStateException if no worker is registered, or the router or its index is closed
     */
    public RouteExplanation explain(int[] tokens, int offset, int length, BlockHasher hasher) {
        Objects.checkFromIndexSize(offset, length, tokens.length);
        checkOpen();
        if (predicted != null) {
            OptionChecks.sameChainSeed(this.hasher, Objects.requireNonNull(hasher, "hasher"));
        }
        return RouteExplainer.explain(events, predicted, tokens, offset, length, hasher, table, blockCount);
    }

    /** Explains {@link #route(long[], int)} for a request given as local hashes at the index's block size. */
    public RouteExplanation explain(long[] localHashes, int inputTokens) {
        int bs = OptionChecks.fits(hasher, localHashes, inputTokens);
        checkOpen();
        return RouteExplainer.explain(events, predicted, localHashes, inputTokens, bs, table, blockCount);
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("router closed");
        }
    }

    /** Registers {@code worker} with capacity weight 1; returns false if it was registered already (its weight is then set to 1). */
    public boolean addWorker(Worker worker) {
        return addWorker(worker, 1.0);
    }

    /**
     * Registers {@code worker} with a capacity weight (its cost is divided by the weight: a worker with
     * weight 2 counts its load at half), or changes a registered worker's weight, keeping its load.
     * Returns true if the worker was not registered.
     *
     * @throws IllegalArgumentException if the weight is not a finite number {@code > 0}
     */
    public boolean addWorker(Worker worker, double capacityWeight) {
        Objects.requireNonNull(worker, "worker");
        return table.add(worker, OptionChecks.weight(capacityWeight));
    }

    /**
     * Unregisters {@code worker}: it is no longer routed to, its load is forgotten (decisions already
     * made for it can still be released, harmlessly), and its predicted blocks are dropped. Returns
     * false if it was not registered.
     */
    public boolean removeWorker(Worker worker) {
        Objects.requireNonNull(worker, "worker");
        if (table.remove(worker) == null) {
            return false;
        }
        if (predicted != null) {
            predicted.removeWorker(worker);
        }
        return true;
    }

    /**
     * Records {@code worker}'s engine metrics as scraped (vLLM's {@code num_requests_waiting} and
     * {@code kv_cache_usage_perc}), which llm-d-scorers reads and the other policies ignore. Returns
     * false, recording nothing, if the worker is not registered.
     *
     * @throws IllegalArgumentException if {@code waitingRequests < 0} or {@code kvCacheUsage} is not in [0, 1]
     */
    public boolean reportEngineMetrics(Worker worker, int waitingRequests, double kvCacheUsage) {
        return table.reportMetrics(Objects.requireNonNull(worker, "worker"), waitingRequests, kvCacheUsage);
    }

    /** The policy this router routes with. */
    public RoutingPolicy policy() {
        return policy;
    }

    /** The registered workers, sorted. */
    public List<Worker> workers() {
        return table.workers();
    }

    /** Active prefill tokens of {@code worker}: uncached tokens of its requests whose prefill has not finished (0 if not registered). */
    public long activePrefillTokens(Worker worker) {
        return table.prefillTokens(worker);
    }

    /** Active decode blocks of {@code worker}: blocks of its requests that have not finished (0 if not registered). */
    public long activeDecodeBlocks(Worker worker) {
        return table.decodeBlocks(worker);
    }

    /** Requests routed to {@code worker} that have not finished (0 if not registered). */
    public long activeRequests(Worker worker) {
        return table.requests(worker);
    }

    /** (worker, block) credits of in-flight prefills held now (docs/SPEC.md section 6.7; 0 when not counted). */
    public long inflightBlocks() {
        return inflight == null ? 0 : inflight.credited();
    }

    /** Decisions whose blocks were not credited as in flight because the bound (2^20 credits) was reached. */
    public long inflightDropped() {
        return inflight == null ? 0 : inflight.dropped();
    }

    /** True if this router predicts cache contents from its decisions. */
    public boolean isPredicted() {
        return predicted != null;
    }

    /** Number of predicted (worker, block) pairs (0 without predicted mode). */
    public long predictedBlocks() {
        return predicted == null ? 0 : predicted.size();
    }

    /** Predicted blocks of {@code worker} (0 without predicted mode). */
    public long predictedBlocks(Worker worker) {
        return predicted == null ? 0 : predicted.blockCount(worker);
    }

    /** Expires the predicted blocks whose time to live has run out and returns how many (0 without predicted mode). */
    public int expire() {
        return predicted == null ? 0 : predicted.expire();
    }

    /** The hasher {@link #route(int[])} uses: the index's block size and seeds. */
    public BlockHasher hasher() {
        return hasher;
    }

    /**
     * Closes the router: later routing calls fail with {@link IllegalStateException}, the predicted
     * index (owned by the router) is closed; the event-fed index is not (its owner closes it).
     * Decisions can still be released. Idempotent.
     */
    @Override
    public void close() {
        closed = true;
        if (predicted != null) {
            predicted.close();
        }
    }

    /**
     * The default {@link Builder#lowerTierCredit}: 0.75, Dynamo's host-tier weight
     * ({@code default_host_cache_hit_weight} in {@code lib/kv-router/src/scheduling/config.rs}), inside the
     * range of the measured {@code 1 - onload/recompute} that docs/SPEC.md section 6.1 gives.
     */
    public static final double DEFAULT_LOWER_TIER_CREDIT = 0.75;

    /**
     * Builds a {@link Router}. Every option has a default, and the defaults reproduce docs/SPEC.md
     * section 6 exactly; a router needs an event-fed {@link #index} or {@link #predicted} mode (or both).
     *
     * <p>Thread-safety: not thread-safe; use one builder per thread.
     */
    public static final class Builder {
        private PrefixIndex index;
        private IndexConfig indexConfig;
        private double overlapWeight = 1.0;
        private double lowerTierCredit = DEFAULT_LOWER_TIER_CREDIT;
        private double temperature = 0.0;
        private long seed = 0L;
        private int minMatchBlocks = 0;
        private int minMatchTokens = 0;
        private boolean spreadMisses = false;
        private boolean predicted = false;
        private Duration predictedTtl = Duration.ofSeconds(120);
        private long predictedMaxBlocks = 1L << 20;
        private LongSupplier clock = System::nanoTime;
        private RoutingPolicy policy = RoutingPolicy.DYNAMO_COST;
        private boolean costOptionSet; // set options only some policies use, for build()'s check
        private boolean minMatchSet;
        private boolean tierCreditSet;
        private boolean inflight;
        private final LinkedHashMap<Worker, Double> workers = new LinkedHashMap<>();

        private Builder() {}

        /**
         * The routing policy (default {@link RoutingPolicy#DYNAMO_COST}, docs/SPEC.md section 6.1).
         * The overlap weight, temperature and miss spreading apply to {@code dynamo-cost} only, the
         * minimum match and the lower-tier credit to {@code dynamo-cost} and {@code kvprefix-ttft};
         * {@link #build()} refuses them with another policy.
         */
        public Builder policy(RoutingPolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /** The routing policy by name ({@link RoutingPolicy#of}: {@code kvprefix-ttft}, ...); an unknown name throws. */
        public Builder policy(String name) {
            return policy(RoutingPolicy.of(Objects.requireNonNull(name, "name")));
        }

        /**
         * The event-fed index to match against (default none). The router reads it and never writes or
         * closes it; its hasher (block size, seeds) is the router's default hasher.
         */
        public Builder index(PrefixIndex index) {
            this.index = Objects.requireNonNull(index, "index");
            return this;
        }

        /**
         * Block size, seeds and implementation of a router without an event-fed index (default
         * {@link IndexConfig#defaults()}: 16-token blocks). With an event-fed index its configuration
         * is used and this must not be set.
         */
        public Builder indexConfig(IndexConfig config) {
            this.indexConfig = Objects.requireNonNull(config, "config");
            return this;
        }

        /** Weight of the prefill term in the cost (default 1.0; 0 routes by decode load alone). Finite, {@code >= 0}. */
        public Builder overlapWeight(double w) {
            overlapWeight = OptionChecks.finiteNonNegative(w, "overlapWeight");
            costOptionSet = true;
            return this;
        }

        /**
         * The share of a GPU hit a block held only on a lower tier (docs/SPEC.md section 3.1) is worth: the
         * depth counts as {@code gpu + credit * (anyTier - gpu)} blocks (default
         * {@value #DEFAULT_LOWER_TIER_CREDIT}; dynamo-cost and kvprefix-ttft). 0 ignores lower tiers.
         */
        public Builder lowerTierCredit(double credit) {
            lowerTierCredit = OptionChecks.unit(credit, "lowerTierCredit");
            tierCreditSet = true;
            return this;
        }

        /** Softmax temperature (default 0: always the lowest cost). Finite, {@code >= 0}. */
        public Builder temperature(double t) {
            temperature = OptionChecks.finiteNonNegative(t, "temperature");
            costOptionSet = true;
            return this;
        }

        /**
         * Seed of the generator used for sampling at temperature {@code > 0} (default 0, so runs repeat;
         * give router replicas different seeds if they should not draw the same sequence).
         */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        /**
         * Minimum match in blocks (default 0: none). When the deepest match among the registered workers
         * is shorter, every worker's depth counts as 0 and the request is routed by load alone (so a
         * shared system prompt does not pile every request onto the workers that hold it). The load
         * charged still uses the chosen worker's real depth. Combined with {@link #minMatchTokens}, the
         * stricter wins.
         */
        public Builder minMatchBlocks(int blocks) {
            minMatchBlocks = OptionChecks.nonNegative(blocks, "minMatchBlocks");
            minMatchSet = true;
            return this;
        }

        /**
         * Minimum match in tokens (default 0: none): as {@link #minMatchBlocks} with
         * {@code ceil(tokens / blockSize)} blocks at the request's block size.
         */
        public Builder minMatchTokens(int tokens) {
            minMatchTokens = OptionChecks.nonNegative(tokens, "minMatchTokens");
            minMatchSet = true;
            return this;
        }

        /**
         * Spread misses (default off). A miss is a request no registered worker matches (at least the
         * minimum match). At temperature 0, with this on, a miss goes round-robin over the workers tied
         * for the lowest cost (the first one after the previous miss's worker, in worker order) instead
         * of the usual tie-break, which sends every miss on an idle cluster to the same worker.
         */
        public Builder spreadMisses(boolean on) {
            spreadMisses = on;
            costOptionSet = true;
            return this;
        }

        /**
         * Count in-flight prefills (default off; dynamo-cost and kvprefix-ttft): from each decision until
         * its {@code finished()} or until the event-fed index holds its blocks on the chosen worker,
         * the request's blocks count as cached on that worker for later requests (docs/SPEC.md section
         * 6.7, which gives the rule, the bound and the cost).
         */
        public Builder inflightPrefills(boolean on) {
            inflight = on;
            return this;
        }

        /** Registers a worker with capacity weight 1 (default: no workers). */
        public Builder worker(Worker worker) {
            return worker(worker, 1.0);
        }

        /**
         * Registers a worker with a capacity weight (default 1.0): its cost is divided by the weight, so a
         * worker with weight 2 counts its load at half. Finite, {@code > 0}.
         */
        public Builder worker(Worker worker, double capacityWeight) {
            Objects.requireNonNull(worker, "worker");
            workers.put(worker, OptionChecks.weight(capacityWeight));
            return this;
        }

        /**
         * Predicted mode (default off), for deployments without KV events or to cover the delay before
         * an engine's events arrive: the router records each decision's blocks as held by the chosen
         * worker in a predicted index it owns, for {@link #predictedTtl} after the last decision that
         * routed them, at most {@link #predictedMaxBlocks} in total (the oldest go first), expired inline
         * at each routing call and on {@link Router#expire()}. With an event-fed index too, a worker's
         * depth is the larger of the two. A request is then hashed once and matched against both
         * indexes, and its new blocks are stored in the predicted index, which allocates.
         */
        public Builder predicted(boolean on) {
            predicted = on;
            return this;
        }

        /** How long a predicted block lives after the last decision that routed it (default 120 s, Dynamo's). Positive. */
        public Builder predictedTtl(Duration ttl) {
            Objects.requireNonNull(ttl, "ttl");
            if (ttl.isNegative() || ttl.isZero()) {
                throw new IllegalArgumentException("predictedTtl must be positive, got " + ttl);
            }
            predictedTtl = ttl;
            return this;
        }

        /** The most predicted (worker, block) pairs kept (default 2^20, Dynamo's); past it the oldest go first. At least 1. */
        public Builder predictedMaxBlocks(long max) {
            if (max < 1) {
                throw new IllegalArgumentException("predictedMaxBlocks must be >= 1, got " + max);
            }
            predictedMaxBlocks = max;
            return this;
        }

        /**
         * The router's clock, in nanoseconds (default {@link System#nanoTime()}): predicted mode's time to
         * live and kvprefix-ttft's prefill timing read it; tests and simulations pass their own.
         */
        public Builder clock(LongSupplier nanoClock) {
            clock = Objects.requireNonNull(nanoClock, "clock");
            return this;
        }

        /**
         * Builds the router.
         *
         * @throws IllegalStateException without an event-fed index or predicted mode, with both an index
         *     and an index configuration, or with an option set that the policy does not use
         */
        public Router build() {
            Selector.Options.check(policy, costOptionSet, minMatchSet || tierCreditSet || inflight);
            if (index == null && !predicted) {
                throw new IllegalStateException("a router needs an event-fed index, predicted mode, or both");
            }
            if (index != null && indexConfig != null) {
                throw new IllegalStateException("indexConfig is for routers without an event-fed index; "
                        + "with one, the index's configuration is used");
            }
            return new Router(this);
        }
    }
}
