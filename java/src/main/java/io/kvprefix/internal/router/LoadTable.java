package io.kvprefix.internal.router;

import io.kvprefix.MatchResult;
import io.kvprefix.Worker;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * The router's registry of workers and their load, and the place where a decision is made: the
 * match results are scattered onto the registered workers, {@link RoutingPolicy} picks one, and its
 * load is charged, all under one lock so that concurrent decisions see each other's load.
 *
 * <p>Thread-safety: thread-safe; every method takes the table's lock, which is held only for the
 * O(workers) work of one decision or one update (the match itself runs before, outside it).
 */
public final class LoadTable {
    private final Object lock = new Object();
    private final RoutingPolicy policy;
    private final HashMap<Worker, WorkerLoad> byWorker = new HashMap<>();
    /** Registered workers in worker order (rebuilt on add and remove, which are rare). */
    private WorkerLoad[] sorted = new WorkerLoad[0];

    private double[] costs = new double[0];

    /** A table deciding with {@code policy}. */
    public LoadTable(RoutingPolicy policy) {
        this.policy = policy;
    }

    /**
     * Registers {@code worker} with {@code weight}, or changes the weight of a registered worker
     * (keeping its load). Returns true if the worker was not registered.
     */
    public boolean add(Worker worker, double weight) {
        synchronized (lock) {
            WorkerLoad l = byWorker.get(worker);
            if (l != null) {
                l.weight(weight);
                return false;
            }
            byWorker.put(worker, new WorkerLoad(worker, weight));
            rebuild();
            return true;
        }
    }

    /**
     * Unregisters {@code worker}; returns its entry (marked removed), or null if it was not registered.
     * Decisions already made for it can still be released; their releases change nothing visible.
     */
    public WorkerLoad remove(Worker worker) {
        synchronized (lock) {
            WorkerLoad l = byWorker.remove(worker);
            if (l == null) {
                return null;
            }
            l.markRemoved();
            rebuild();
            return l;
        }
    }

    private void rebuild() {
        WorkerLoad[] a = byWorker.values().toArray(new WorkerLoad[0]);
        Arrays.sort(a, (x, y) -> x.worker().compareTo(y.worker()));
        sorted = a;
        if (costs.length < a.length) {
            costs = new double[Math.max(a.length, costs.length * 2)];
        }
    }

    /** The registered workers, sorted. */
    public List<Worker> workers() {
        synchronized (lock) {
            List<Worker> out = new ArrayList<>(sorted.length);
            for (WorkerLoad l : sorted) {
                out.add(l.worker());
            }
            return List.copyOf(out);
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
     * Chooses a worker for a request of {@code isl} tokens at {@code blockSize}, given the depths in
     * {@code first} and {@code second} (either may be null; a worker's depth is the larger of the two),
     * charges the request to it and describes the choice in {@code out}.
     *
     * @throws IllegalStateException if no worker is registered
     */
    public void decide(
            MatchResult first,
            MatchResult second,
            int isl,
            int blockSize,
            ToLongFunction<Worker> blockCount,
            Choice out) {
        synchronized (lock) {
            WorkerLoad[] ws = sorted;
            int n = ws.length;
            if (n == 0) {
                throw new IllegalStateException("no workers registered: add workers before routing");
            }
            scatter(first);
            scatter(second);
            try {
                int i = policy.choose(ws, n, costs, isl, blockSize, blockCount);
                WorkerLoad w = ws[i];
                int depth = w.depth;
                // blocks loaded from a lower tier are not computed again: they are not prefill load
                long prefill = Math.max(0L, isl - (long) Math.max(depth, w.anyDepth) * blockSize);
                long decode = isl / blockSize;
                w.add(prefill, decode);
                out.load = w;
                out.depth = depth;
                out.prefillTokens = prefill;
                out.decodeBlocks = decode;
                out.cost = costs[i];
                out.belowMinimumMatch = policy.missed();
            } finally {
                for (int i = 0; i < n; i++) {
                    ws[i].depth = 0;
                    ws[i].anyDepth = 0;
                }
            }
        }
    }

    private void scatter(MatchResult r) {
        if (r == null) {
            return;
        }
        for (int i = 0, n = r.size(); i < n; i++) {
            WorkerLoad l = byWorker.get(r.worker(i));
            if (l != null) {
                l.depth = Math.max(l.depth, r.depth(i));
                l.anyDepth = Math.max(l.anyDepth, r.anyTierDepth(i));
            }
        }
    }

    /** Releases load a decision charged: {@code prefill} tokens, and, if {@code request}, its {@code decode} blocks. */
    public void release(WorkerLoad load, long prefill, boolean request, long decode) {
        synchronized (lock) {
            if (prefill != 0) {
                load.releasePrefill(prefill);
            }
            if (request) {
                load.releaseRequest(decode);
            }
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
        /** Its depth in blocks. */
        public int depth;
        /** Uncached tokens charged as prefill load. */
        public long prefillTokens;
        /** Blocks charged as decode load. */
        public long decodeBlocks;
        /** Its cost. */
        public double cost;
        /** True if the deepest match was below the minimum match (every depth counted as 0). */
        public boolean belowMinimumMatch;
    }

    /**
     * What {@link #decide} would see for this request, without choosing, charging or drawing anything:
     * every registered worker with its depth and cost, the one the policy ranks first, and whether
     * the request is a miss.
     *
     * @throws IllegalStateException if no worker is registered
     */
    public Costs costs(
            MatchResult first, MatchResult second, int isl, int blockSize, ToLongFunction<Worker> blockCount) {
        synchronized (lock) {
            WorkerLoad[] ws = sorted;
            int n = ws.length;
            if (n == 0) {
                throw new IllegalStateException("no workers registered: add workers before routing");
            }
            scatter(first);
            scatter(second);
            try {
                double[] c = new double[n];
                boolean miss = policy.fillCosts(ws, n, c, isl, blockSize);
                int[] depths = new int[n];
                Worker[] workers = new Worker[n];
                for (int i = 0; i < n; i++) {
                    depths[i] = ws[i].depth;
                    workers[i] = ws[i].worker();
                }
                int preferred = RoutingPolicy.preferred(ws, n, c, blockCount);
                return new Costs(workers, depths, c, preferred, miss, policy.minimumDepth(blockSize));
            } finally {
                for (int i = 0; i < n; i++) {
                    ws[i].depth = 0;
                }
            }
        }
    }

    /**
     * The outcome of {@link #costs}: registered workers in worker order, their depths and costs.
     *
     * <p>Thread-safety: effectively immutable (nobody writes the arrays after construction).
     *
     * @param workers the registered workers, sorted
     * @param depths each one's depth (the larger of the two matches)
     * @param costs each one's cost
     * @param preferred the position of the worker the policy ranks first
     * @param miss true if the deepest depth is below {@code minimumDepth}
     * @param minimumDepth the smallest depth that counts at the request's block size (at least 1)
     */
    public record Costs(
            Worker[] workers, int[] depths, double[] costs, int preferred, boolean miss, int minimumDepth) {}
}
