package io.kvprefix.internal.router;

import io.kvprefix.MatchResult;
import io.kvprefix.RoutingPolicy;
import io.kvprefix.Worker;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;

/**
 * The router's registry of workers and their load, and the place where a decision is made: the
 * match results are scattered onto the registered workers, the policy's {@link Selector} picks one,
 * and its load is charged, all under one lock so that concurrent decisions see each other's load.
 *
 * <p><b>Membership in O(1).</b> Workers sit in a dense array in no particular order, with a hash map
 * from worker to entry: adding appends, removing moves the last entry into the hole. Nothing is
 * sorted on a membership change (the selectors compare workers where the order matters, and
 * {@link #workers()} sorts a copy), so a fleet of {@code n} workers is built in O(n).
 *
 * <p>Thread-safety: thread-safe; every method takes the table's lock, which is held only for the work
 * of one decision (the matched workers and the cheapest of the rest through {@link LoadOrder} for
 * dynamo-cost at temperature 0, every worker otherwise) or the O(log n) work of one update (the match
 * itself runs before, outside it).
 */
public final class LoadTable {
    private final Object lock = new Object();
    private final Selector selector;
    private final boolean tracksPrefills;
    private final LongSupplier clock;
    private final HashMap<Worker, WorkerLoad> byWorker = new HashMap<>();
    private final PrefillSpeed fleet = new PrefillSpeed(PrefillSpeed.FLEET_FORGETTING);
    private final Selector.Request request = new Selector.Request();
    private WorkerLoad[] dense = new WorkerLoad[16];
    private int size;
    private double[] costs = new double[16];
    /** dynamo-cost at temperature 0: the selector and the workers in load order; otherwise null. */
    private final DynamoCost ordered;
    /** kvprefix-ttft: the selector, its plain workers in {@link #order}, the others' slots in {@link #visit}. */
    private final TtftEstimate ttft;

    private long[] visit = new long[1];

    private final LoadOrder order;
    /** The current decision's matched workers (those {@link #scatter} gave a depth), each once. */
    private WorkerLoad[] touched = new WorkerLoad[16];

    private int touchedCount;

    private WorkerLoad[] subset = new WorkerLoad[0];
    /** The in-flight prefills' blocks (docs/SPEC.md section 6.7), or null when the router does not count them. */
    private InflightBlocks inflight;

    /**
     * A table deciding with {@code policy}; dynamo-cost at temperature 0 decides requests at
     * {@code blockSize} through the load order ({@link LoadOrder}), visiting the matched workers and
     * the cheapest of the rest.
     *
     * @param clock nanosecond clock, read under the lock at each decision and release
     * @param blockSize the router's block size
     */
    public LoadTable(RoutingPolicy policy, Selector.Options options, LongSupplier clock, int blockSize) {
        this(policy, options, clock, blockSize, true);
    }

    /** As above; with {@code useOrder} false every decision scans every worker (for the differential test). */
    LoadTable(RoutingPolicy policy, Selector.Options options, LongSupplier clock, int blockSize, boolean useOrder) {
        this.selector = Selector.of(policy, options);
        this.tracksPrefills = selector.tracksPrefills();
        this.clock = clock;
        request.fleet = fleet;
        this.ordered = useOrder && selector instanceof DynamoCost d && d.ordered() ? d : null;
        this.ttft = useOrder && selector instanceof TtftEstimate t ? t : null;
        this.order = ordered != null
                ? new LoadOrder(options.overlapWeight(), blockSize)
                : ttft != null ? new LoadOrder() : null;
    }

    /**
     * Counts each decision's request blocks as held by its worker until the request is released or
     * the index covers them, at most {@code maxBlocks} (worker, block) credits at once (docs/SPEC.md
     * section 6.7); call before the table is shared. Decisions then pass their local hashes in
     * {@link Choice#locals}. Returns the count, which guards itself with this table's lock.
     */
    public InflightBlocks countInflight(long maxBlocks) {
        inflight = new InflightBlocks(lock, maxBlocks);
        return inflight;
    }

    /** Workers the load order's walks have visited so far (0 without it): for tests of what a decision visits. */
    long orderVisits() {
        synchronized (lock) {
            return order == null ? 0 : order.visits();
        }
    }

    /**
     * Registers {@code worker} with {@code weight}, or changes the weight of a registered worker
     * (keeping its load). Returns true if the worker was not registered. O(1) (amortized).
     */
    public boolean add(Worker worker, double weight) {
        synchronized (lock) {
            WorkerLoad l = byWorker.get(worker);
            if (l != null) {
                if (order != null) {
                    order.remove(l);
                }
                l.weight(weight);
                placeInOrder(l);
                return false;
            }
            if (size == dense.length) {
                dense = Arrays.copyOf(dense, size * 2);
                costs = new double[size * 2];
                visit = Arrays.copyOf(visit, (size * 2 + 63) >>> 6);
            }
            l = new WorkerLoad(worker, weight, size, clock.getAsLong());
            dense[size++] = l;
            byWorker.put(worker, l);
            placeInOrder(l);
            return true;
        }
    }

    /**
     * Unregisters {@code worker}; returns its entry (marked removed), or null if it was not registered.
     * Decisions already made for it can still be released; their releases change nothing visible. O(1).
     */
    public WorkerLoad remove(Worker worker) {
        synchronized (lock) {
            WorkerLoad l = byWorker.remove(worker);
            if (l == null) {
                return null;
            }
            int hole = l.slot;
            WorkerLoad last = dense[--size];
            dense[hole] = last;
            last.slot = hole;
            dense[size] = null;
            setVisit(hole, isVisited(size));
            setVisit(size, false);
            if (order != null) {
                order.remove(l);
            }
            l.markRemoved();
            return l;
        }
    }

    /** The registered workers, sorted. */
    public List<Worker> workers() {
        synchronized (lock) {
            List<Worker> out = new ArrayList<>(size);
            for (int i = 0; i < size; i++) {
                out.add(dense[i].worker());
            }
            out.sort(null);
            return List.copyOf(out);
        }
    }

    /** Number of registered workers. */
    public int size() {
        synchronized (lock) {
            return size;
        }
    }

    /** True if {@code worker} is registered. */
    public boolean contains(Worker worker) {
        synchronized (lock) {
            return byWorker.containsKey(worker);
        }
    }

    /** Active prefill tokens of {@code worker} (0 if not registered). */
    public long prefillTokens(Worker worker) {
        synchronized (lock) {
            WorkerLoad l = byWorker.get(worker);
            return l == null ? 0 : l.prefillTokens();
        }
    }

    /** Active decode blocks of {@code worker} (0 if not registered). */
    public long decodeBlocks(Worker worker) {
        synchronized (lock) {
            WorkerLoad l = byWorker.get(worker);
            return l == null ? 0 : l.decodeBlocks();
        }
    }

    /** Active requests of {@code worker} (0 if not registered). */
    public long requests(Worker worker) {
        synchronized (lock) {
            WorkerLoad l = byWorker.get(worker);
            return l == null ? 0 : l.requests();
        }
    }

    /**
     * Records engine metrics reported for {@code worker}: its waiting requests and the fraction of its
     * KV cache in use. Returns false (and records nothing) if the worker is not registered.
     *
     * @throws IllegalArgumentException if {@code waitingRequests < 0} or {@code kvCacheUsage} is not in [0, 1]
     */
    public boolean reportMetrics(Worker worker, int waitingRequests, double kvCacheUsage) {
        if (waitingRequests < 0) {
            throw new IllegalArgumentException("waitingRequests must be >= 0, got " + waitingRequests);
        }
        if (!(kvCacheUsage >= 0 && kvCacheUsage <= 1)) {
            throw new IllegalArgumentException("kvCacheUsage must be in [0, 1], got " + kvCacheUsage);
        }
        synchronized (lock) {
            WorkerLoad l = byWorker.get(worker);
            if (l == null) {
                return false;
            }
            l.waitingRequests = waitingRequests;
            l.kvCacheUsage = kvCacheUsage;
            return true;
        }
    }

    /**
     * Chooses a worker for a request of {@code isl} tokens at {@code blockSize}, given the depths in
     * {@code first} and {@code second} (either may be null; a worker's depth is the larger of the two),
     * charges the request to it and describes the choice in {@code out}.
     *
     * @param eventFed true if {@code first} comes from an event-fed index (the policies that have a
     *     mode without events tell the two apart)
     * @throws IllegalStateException if no worker is registered
     */
    public void decide(
            MatchResult first,
            MatchResult second,
            boolean eventFed,
            int isl,
            int blockSize,
            ToLongFunction<Worker> blockCount,
            Choice out) {
        decide(first, second, eventFed, isl, blockSize, blockCount, null, out);
    }

    /**
     * As {@link #decide(MatchResult, MatchResult, boolean, int, int, ToLongFunction, Choice)}, choosing
     * only among the registered workers {@code among} accepts (every one when null): the policy sees
     * those alone, in the table's order, so its rule and its ties are the same as over a table of them.
     *
     * @throws IllegalStateException if no registered worker is accepted
     */
    public void decide(
            MatchResult first,
            MatchResult second,
            boolean eventFed,
            int isl,
            int blockSize,
            ToLongFunction<Worker> blockCount,
            Predicate<Worker> among,
            Choice out) {
        synchronized (lock) {
            int n = size;
            WorkerLoad[] ws = dense;
            int k = n;
            if (among != null) {
                if (subset.length < n) {
                    subset = new WorkerLoad[dense.length];
                }
                k = 0;
                for (int i = 0; i < n; i++) {
                    if (among.test(dense[i].worker())) {
                        subset[k++] = dense[i];
                    }
                }
                if (k == 0 && n > 0) {
                    throw new IllegalStateException("none of the registered workers is among the ones allowed");
                }
                ws = subset;
            }
            Selector.Request r = begin(first, second, eventFed, isl, blockSize, blockCount);
            if (inflight != null && out.locals != null) {
                inflight.walk(out.locals, out.blocks, this);
            }
            try {
                WorkerLoad chosen = null;
                double cost = 0;
                if (ws == dense && ordered != null && blockSize == order.blockSize()) {
                    chosen = ordered.chooseOrdered(touched, touchedCount, order, r);
                    cost = ordered.lastCost();
                } else if (ws == dense && ttft != null) {
                    chosen = ttft.chooseOrdered(dense, n, visit, touched, touchedCount, order, r);
                    cost = ttft.lastCost();
                }
                if (chosen == null) {
                    // a subset, or a policy without a load order: scan the allowed workers
                    int i = selector.choose(ws, k, costs, r);
                    chosen = ws[i];
                    cost = costs[i];
                }
                charge(chosen, isl, blockSize, r.now, out);
                out.cost = cost;
                out.missed = selector.missed();
            } finally {
                end();
                if (ws != dense) {
                    Arrays.fill(subset, 0, k, null);
                }
            }
        }
    }

    /**
     * Starts a decision or a preview (the caller holds {@code lock}): refuses an empty table, reads the
     * clock, then puts both results' depths on the workers and fills the reused request. {@link #end}
     * undoes it.
     */
    private Selector.Request begin(
            MatchResult first,
            MatchResult second,
            boolean eventFed,
            int isl,
            int blockSize,
            ToLongFunction<Worker> blockCount) {
        if (size == 0) {
            throw new IllegalStateException("no workers registered: add workers before routing");
        }
        long now = clock.getAsLong();
        scatter(first);
        scatter(second);
        Selector.Request r = request;
        r.isl = isl;
        r.blockSize = blockSize;
        r.now = now;
        r.eventFed = eventFed;
        r.blockCount = blockCount;
        return r;
    }

    /** Clears what {@link #begin} put on the matched workers and the request. */
    private void end() {
        request.blockCount = null;
        for (int i = 0; i < touchedCount; i++) {
            WorkerLoad w = touched[i];
            w.depth = 0;
            w.anyDepth = 0;
            w.matched = false;
            touched[i] = null;
        }
        touchedCount = 0;
    }

    private void charge(WorkerLoad w, int isl, int blockSize, long now, Choice out) {
        int depth = w.depth;
        // blocks loaded from a lower tier are not computed again: they are not prefill load
        long prefill = Math.max(0L, isl - (long) Math.max(depth, w.anyDepth) * blockSize);
        long decode = isl / blockSize;
        w.add(prefill, decode);
        PendingPrefill p = null;
        if (tracksPrefills) {
            p = new PendingPrefill(prefill, now);
            w.enqueue(p);
        }
        placeInOrder(w);
        out.inflight = inflight != null && out.locals != null ? inflight.credit(w, out.locals, out.blocks) : null;
        out.load = w;
        out.pending = p;
        out.depth = depth;
        out.prefillTokens = prefill;
        out.decodeBlocks = decode;
    }

    private void scatter(MatchResult r) {
        if (r == null) {
            return;
        }
        for (int i = 0, n = r.size(); i < n; i++) {
            WorkerLoad l = byWorker.get(r.worker(i));
            if (l != null) {
                raise(l, r.depth(i), r.anyTierDepth(i));
            }
        }
    }

    /** Raises a registered worker's depths for the decision being made (in-flight blocks count on both). */
    void raise(WorkerLoad l, int depth) {
        raise(l, depth, depth);
    }

    private void raise(WorkerLoad l, int depth, int anyDepth) {
        l.depth = Math.max(l.depth, depth);
        l.anyDepth = Math.max(l.anyDepth, anyDepth);
        if (!l.matched) {
            l.matched = true;
            if (touchedCount == touched.length) {
                touched = Arrays.copyOf(touched, touchedCount * 2);
            }
            touched[touchedCount++] = l;
        }
    }

    /**
     * Releases load a decision charged: {@code prefill} tokens (and its pending prefill, if any), and,
     * if {@code request}, its {@code decode} blocks. {@code prefillEnded} says the prefill really ended
     * now (the first token is out), so its duration is a sample of the worker's prefill speed. The
     * decision's in-flight credit ({@code inflightCredit}, or null) is taken back with the request and
     * queued for the coverage check when its prefill ends.
     */
    public void release(
            WorkerLoad load,
            long prefill,
            boolean request,
            long decode,
            PendingPrefill pending,
            boolean prefillEnded,
            InflightPrefill inflightCredit) {
        synchronized (lock) {
            if (inflight != null && request) {
                inflight.release(inflightCredit);
            } else if (inflight != null && prefillEnded) {
                inflight.prefilled(inflightCredit);
            }
            if (pending != null && pending.linked) {
                load.dequeue(pending);
                if (prefillEnded && !load.isRemoved()) {
                    long now = clock.getAsLong();
                    long took = now - Math.max(pending.routedAt, load.lastPrefillEnd);
                    if (took > 0) {
                        load.speed.add(pending.tokens, took);
                        fleet.add(pending.tokens, took);
                    }
                    load.lastPrefillEnd = Math.max(load.lastPrefillEnd, now);
                }
            }
            if (prefill != 0) {
                load.releasePrefill(prefill);
            }
            if (request) {
                load.releaseRequest(decode);
            }
            placeInOrder(load);
        }
    }

    /**
     * Puts a registered worker where its load now puts it: dynamo-cost re-keys it in the load order;
     * kvprefix-ttft keeps a {@link TtftEstimate#plain} worker in the order and marks any other for a
     * visit. Nothing for a removed worker, or without an order.
     */
    private void placeInOrder(WorkerLoad w) {
        if (order == null || w.isRemoved()) {
            return;
        }
        if (ttft == null) {
            if (w.heap == null) {
                order.insert(w);
            } else {
                order.update(w);
            }
            return;
        }
        boolean plain = TtftEstimate.plain(w);
        if (plain && w.heap == null) {
            order.insert(w);
        } else if (plain) {
            order.update(w);
        } else {
            order.remove(w);
        }
        setVisit(w.slot, !plain);
    }

    private boolean isVisited(int slot) {
        return (visit[slot >>> 6] & (1L << slot)) != 0;
    }

    private void setVisit(int slot, boolean on) {
        if (on) {
            visit[slot >>> 6] |= 1L << slot;
        } else {
            visit[slot >>> 6] &= ~(1L << slot);
        }
    }

    /**
     * The outcome of {@link #decide}: the chosen worker's entry, its depth, the load charged and its cost.
     *
     * <p>Thread-safety: not thread-safe; one instance per routing thread.
     */
    public static final class Choice {
        /** The chosen worker's entry. */
        public WorkerLoad load;
        /** Its pending prefill (policies that track them), or null. */
        public PendingPrefill pending;
        /** Input: the request's local hashes for the in-flight count, or null (none are counted or credited). */
        public long[] locals;
        /** Input: how many of {@link #locals} are the request's blocks. */
        public int blocks;
        /** Its in-flight credit (docs/SPEC.md section 6.7), or null. */
        public InflightPrefill inflight;

        /** Forgets the decision's references (its worker, credits and the request's hashes). */
        public void clear() {
            load = null;
            pending = null;
            inflight = null;
            locals = null;
        }
        /** Its depth in blocks. */
        public int depth;
        /** Uncached tokens charged as prefill load. */
        public long prefillTokens;
        /** Blocks charged as decode load. */
        public long decodeBlocks;
        /** Its cost. */
        public double cost;
        /** True if the policy routed by load alone (nothing matched well enough). */
        public boolean missed;
    }

    /**
     * What {@link #decide} would see for this request, without choosing, charging or drawing anything:
     * every registered worker with its depth and cost, the one the policy ranks first, and whether
     * the request is a miss.
     *
     * @throws IllegalStateException if no worker is registered
     */
    public Costs costs(
            MatchResult first,
            MatchResult second,
            boolean eventFed,
            int isl,
            int blockSize,
            ToLongFunction<Worker> blockCount) {
        synchronized (lock) {
            int n = size;
            Selector.Request r = begin(first, second, eventFed, isl, blockSize, blockCount);
            try {
                double[] c = new double[n];
                int preferred = selector.preview(dense, n, c, r);
                int[] depths = new int[n];
                Worker[] workers = new Worker[n];
                for (int i = 0; i < n; i++) {
                    depths[i] = dense[i].depth;
                    workers[i] = dense[i].worker();
                }
                return new Costs(workers, depths, c, preferred, selector.missed(), selector.minimumDepth(r));
            } finally {
                end();
            }
        }
    }

    /**
     * The outcome of {@link #costs}: registered workers in the table's order, their depths and costs.
     *
     * <p>Thread-safety: effectively immutable (nobody writes the arrays after construction).
     *
     * @param workers the registered workers (in no particular order)
     * @param depths each one's depth (the larger of the two matches)
     * @param costs each one's cost
     * @param preferred the position of the worker the policy ranks first
     * @param miss true if the policy would route by load alone (nothing matched enough)
     * @param minimumDepth the smallest deepest depth that the policy counts for this request (at least 1)
     */
    public record Costs(
            Worker[] workers, int[] depths, double[] costs, int preferred, boolean miss, int minimumDepth) {}
}
