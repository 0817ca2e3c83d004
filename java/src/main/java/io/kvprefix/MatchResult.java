package io.kvprefix;

import io.kvprefix.internal.MatchResults;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * The answer to one match: for every worker with a cached prefix of the request, its depth (how
 * many leading blocks of the request it holds on the GPU, docs/SPEC.md section 4) and its depth on
 * any tier ({@link #anyTierDepth}, the GPU and the lower tiers it offloads to, section 3.1).
 * Workers that hold no prefix on any tier are absent; a worker whose prefix is only on a lower tier
 * is present with {@link #depth} 0. Without lower-tier events both depths are equal and every
 * depth is at least 1.
 *
 * <p>A result is meant to be reused: pass the same instance to
 * {@link PrefixIndex#match(long[], int, int, MatchResult)} call after call and nothing is allocated
 * once its arrays have grown to the largest answer. Reading it ({@link #size()}, {@link #worker(int)},
 * {@link #depth(int)}) never allocates. Entries come in no particular order unless
 * {@link #sortByWorker()} is called. Only index implementations fill it.
 *
 * <p>Thread-safety: not thread-safe; one result belongs to one thread at a time.
 */
public final class MatchResult {
    private Worker[] workers;
    private int[] depths;
    private int[] anyDepths;
    private int size;
    private int queryBlocks;

    /** An empty result with room for 16 workers (it grows as needed). */
    public MatchResult() {
        this(16);
    }

    /** An empty result with room for {@code capacity} workers (it grows as needed). */
    public MatchResult(int capacity) {
        workers = new Worker[Math.max(1, capacity)];
        depths = new int[workers.length];
        anyDepths = new int[workers.length];
    }

    /** Number of workers with a prefix on any tier. */
    public int size() {
        return size;
    }

    /** True if no worker holds even the first block, on any tier. */
    public boolean isEmpty() {
        return size == 0;
    }

    /** The {@code i}-th worker, {@code 0 <= i < size()}. */
    public Worker worker(int i) {
        checkIndex(i);
        return workers[i];
    }

    /** The GPU depth of the {@code i}-th worker, in blocks (0 when its prefix is only on lower tiers). */
    public int depth(int i) {
        checkIndex(i);
        return depths[i];
    }

    /**
     * The depth of the {@code i}-th worker over every tier (docs/SPEC.md section 3.1): the leading
     * blocks it holds on the GPU or a lower tier; at least {@link #depth(int)} and at least 1.
     */
    public int anyTierDepth(int i) {
        checkIndex(i);
        return anyDepths[i];
    }

    /** Number of blocks the request had. */
    public int queryBlocks() {
        return queryBlocks;
    }

    /** The deepest match over all workers (0 if none). */
    public int maxDepth() {
        int m = 0;
        for (int i = 0; i < size; i++) {
            m = Math.max(m, depths[i]);
        }
        return m;
    }

    /** The GPU depth of {@code worker}, or 0 if it holds no prefix of the request (a linear scan). */
    public int depthOf(Worker worker) {
        for (int i = 0; i < size; i++) {
            if (workers[i].equals(worker)) {
                return depths[i];
            }
        }
        return 0;
    }

    /** The any-tier depth of {@code worker}, or 0 if it holds no prefix of the request on any tier (a linear scan). */
    public int anyTierDepthOf(Worker worker) {
        for (int i = 0; i < size; i++) {
            if (workers[i].equals(worker)) {
                return anyDepths[i];
            }
        }
        return 0;
    }

    /** True if some worker's any-tier depth is above its GPU depth (a lower tier holds more of the request). */
    public boolean hasLowerTierDepth() {
        for (int i = 0; i < size; i++) {
            if (anyDepths[i] != depths[i]) {
                return true;
            }
        }
        return false;
    }

    /** Sorts the entries by worker, unsigned {@code (workerId, dpRank)} (the op-stream order). */
    public void sortByWorker() {
        // insertion sort: results are small and usually nearly sorted; no allocation
        for (int i = 1; i < size; i++) {
            Worker w = workers[i];
            int d = depths[i];
            int a = anyDepths[i];
            int j = i - 1;
            while (j >= 0 && workers[j].compareTo(w) > 0) {
                workers[j + 1] = workers[j];
                depths[j + 1] = depths[j];
                anyDepths[j + 1] = anyDepths[j];
                j--;
            }
            workers[j + 1] = w;
            depths[j + 1] = d;
            anyDepths[j + 1] = a;
        }
    }

    /**
     * One worker and its depths.
     *
     * <p>Thread-safety: immutable.
     *
     * @param worker the worker
     * @param depth its GPU depth in blocks
     * @param anyTierDepth its depth over every tier
     */
    public record Score(Worker worker, int depth, int anyTierDepth) {
        /** A worker whose depth is the same on the GPU and over every tier. */
        public Score(Worker worker, int depth) {
            this(worker, depth, depth);
        }
    }

    /** A snapshot of the entries, sorted by worker (allocates; for convenience, not the hot path). */
    public List<Score> scores() {
        List<Score> out = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            out.add(new Score(workers[i], depths[i], anyDepths[i]));
        }
        out.sort((a, b) -> a.worker().compareTo(b.worker()));
        return Collections.unmodifiableList(out);
    }

    static {
        MatchResults.register(new MatchResults() {
            @Override
            public void reset(MatchResult r, int queryBlocks) {
                r.reset(queryBlocks);
            }

            @Override
            public void add(MatchResult r, Worker worker, int depth) {
                r.add(worker, depth, depth);
            }

            @Override
            public void add(MatchResult r, Worker worker, int depth, int anyTierDepth) {
                r.add(worker, depth, anyTierDepth);
            }

            @Override
            public void raiseAnyTier(MatchResult r, int i, int anyTierDepth) {
                r.anyDepths[i] = Math.max(r.anyDepths[i], anyTierDepth);
            }
        });
    }

    /** Empties the result for a request of {@code queryBlocks} blocks. */
    void reset(int queryBlocks) {
        Arrays.fill(workers, 0, size, null);
        this.size = 0;
        this.queryBlocks = queryBlocks;
    }

    /** Adds a worker with GPU depth {@code depth} and any-tier depth {@code anyTierDepth >= max(1, depth)}. */
    void add(Worker worker, int depth, int anyTierDepth) {
        if (size == workers.length) {
            workers = Arrays.copyOf(workers, size * 2);
            depths = Arrays.copyOf(depths, size * 2);
            anyDepths = Arrays.copyOf(anyDepths, size * 2);
        }
        workers[size] = worker;
        depths[size] = depth;
        anyDepths[size] = Math.max(depth, anyTierDepth);
        size++;
    }

    private void checkIndex(int i) {
        if (i < 0 || i >= size) {
            throw new IndexOutOfBoundsException("index " + i + ", size " + size);
        }
    }

    /** {@code [w/r=depth, ...]} sorted by worker. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("[");
        List<Score> s = scores();
        for (int i = 0; i < s.size(); i++) {
            if (i > 0) {
                sb.append(", ");
            }
            sb.append(s.get(i).worker()).append('=').append(s.get(i).depth());
            if (s.get(i).anyTierDepth() != s.get(i).depth()) {
                sb.append('/').append(s.get(i).anyTierDepth());
            }
        }
        return sb.append(']').toString();
    }
}
