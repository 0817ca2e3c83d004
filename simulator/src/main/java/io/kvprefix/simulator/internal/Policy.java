package io.kvprefix.simulator.internal;

import io.kvprefix.KvEvent;
import io.kvprefix.simulator.SimSettings;
import io.kvprefix.workload.Rng;
import it.unimi.dsi.fastutil.ints.IntArrayList;

/**
 * A routing policy in the simulation: it picks one of the registered workers for each arriving
 * request and hears when the request's prefill and the whole request finish. The cache-aware
 * policies are kvprefix's {@link io.kvprefix.Router} with one of its named policies
 * ({@link RouterBacked}); the cache-blind baselines are here.
 *
 * <p>Thread-safety: not thread-safe; one simulation thread drives one policy.
 */
public interface Policy extends AutoCloseable {

    /** The policy's name in reports, such as {@code dynamo-cost}. */
    String name();

    /** Worker {@code worker} is registered from now on (every worker joins before it is routed to). */
    void join(int worker);

    /**
     * Chooses a registered worker for {@code request}, whose tokens are {@code tokens[0 .. length)}.
     */
    int route(SimRequest request, int[] tokens, int length);

    /** The request's prefill is done (its first token is out). */
    default void prefillDone(SimRequest request) {}

    /** The request is done. */
    default void finished(SimRequest request) {}

    /** True if the engines' KV events should be given to {@link #apply}. */
    default boolean wantsEvents() {
        return false;
    }

    /** One KV event from an engine, in the order the engine sent it, after the event delay. */
    default void apply(KvEvent event) {}

    /** True if the policy reads engine metrics ({@link #metrics}), as llm-d's scorers do. */
    default boolean wantsMetrics() {
        return false;
    }

    /**
     * A metrics snapshot of one registered engine, refreshed every {@link SimSettings#METRICS_REFRESH}:
     * its waiting and running requests and the fraction of its cache blocks pinned by running requests
     * (vLLM's {@code num_requests_waiting}, {@code num_requests_running}, {@code kv_cache_usage_perc}).
     */
    default void metrics(int worker, int waiting, int running, double kvUsage) {}

    @Override
    default void close() {}

    /** Worker {@code i mod N} over the registered workers, in the order they joined. */
    final class RoundRobin implements Policy {
        private final String name;
        private final IntArrayList workers = new IntArrayList();
        private int next;

        RoundRobin(String name) {
            this.name = name;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public void join(int worker) {
            workers.add(worker);
        }

        @Override
        public int route(SimRequest request, int[] tokens, int length) {
            int w = workers.getInt(next % workers.size());
            next = (next + 1) % workers.size();
            return w;
        }
    }

    /** A uniformly random registered worker. */
    final class RandomPolicy implements Policy {
        private final String name;
        private final IntArrayList workers = new IntArrayList();
        private final Rng rng;

        RandomPolicy(String name, long seed) {
            this.name = name;
            this.rng = new Rng(seed);
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public void join(int worker) {
            workers.add(worker);
        }

        @Override
        public int route(SimRequest request, int[] tokens, int length) {
            return workers.getInt(rng.nextInt(workers.size()));
        }
    }

    /** The fewest requests in flight, then the fewest prefill tokens not yet computed, then the lowest worker. */
    final class LeastLoaded implements Policy {
        private final String name;
        private final IntArrayList workers = new IntArrayList();
        private final int[] inFlight;
        private final long[] pendingTokens;

        LeastLoaded(String name, int workers) {
            this.name = name;
            this.inFlight = new int[workers];
            this.pendingTokens = new long[workers];
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public void join(int worker) {
            workers.add(worker);
        }

        @Override
        public int route(SimRequest request, int[] tokens, int length) {
            int best = -1;
            for (int i = 0; i < workers.size(); i++) {
                int w = workers.getInt(i);
                if (best < 0
                        || inFlight[w] < inFlight[best]
                        || inFlight[w] == inFlight[best] && pendingTokens[w] < pendingTokens[best]
                        || inFlight[w] == inFlight[best] && pendingTokens[w] == pendingTokens[best] && w < best) {
                    best = w;
                }
            }
            inFlight[best]++;
            pendingTokens[best] += request.inputTokens();
            return best;
        }

        @Override
        public void prefillDone(SimRequest request) {
            pendingTokens[request.worker()] -= request.inputTokens();
        }

        @Override
        public void finished(SimRequest request) {
            inFlight[request.worker()]--;
        }
    }
}
