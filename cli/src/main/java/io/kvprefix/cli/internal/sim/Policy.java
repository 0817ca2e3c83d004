package io.kvprefix.cli.internal.sim;

import io.kvprefix.BlockHasher;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.Medium;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Router;
import io.kvprefix.RoutingDecision;
import io.kvprefix.Worker;
import io.kvprefix.workload.Rng;
import java.util.List;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * A routing policy in the simulation: it picks a worker for each arriving request and hears when the
 * request's prefill and the whole request finish. The KV-aware policies are the {@link Router}; the
 * baselines are the usual ones.
 *
 * <p>Thread-safety: not thread-safe; one simulation thread drives one policy.
 */
public interface Policy extends AutoCloseable {

    /** The policy's display name, such as {@code kv-aware (events)}. */
    String name();

    /**
     * Chooses a worker {@code 0 .. workers-1} for {@code request}, whose tokens are
     * {@code tokens[0 .. length)}.
     */
    int route(SimRequest request, int[] tokens, int length);

    /** The request's prefill is done. */
    default void prefillDone(SimRequest request) {}

    /** The request is done. */
    default void finished(SimRequest request) {}

    /** True if the engines' KV events should be given to {@link #apply}. */
    default boolean wantsEvents() {
        return false;
    }

    /** One KV event from an engine, in the order the engine sent it. */
    default void apply(KvEvent event) {}

    @Override
    default void close() {}

    /** The policies a simulation can compare, by the key {@code --policies} takes. */
    enum Kind {
        /** The router over an index fed with the engines' KV events, every tier's (docs/SPEC.md section 3.1). */
        KV_EVENTS("kv-events", "kv-aware (events)"),
        /** The same router fed the GPU's events only: what kvprefix did before it knew of lower tiers. */
        KV_EVENTS_GPU("kv-events-gpu", "kv-aware (GPU only)"),
        /** The router predicting cache contents from its own decisions (no events). */
        KV_PREDICTED("kv-predicted", "kv-aware (predicted)"),
        /** Worker {@code i mod N} for the {@code i}-th request. */
        ROUND_ROBIN("round-robin", "round-robin"),
        /** A uniformly random worker (seeded). */
        RANDOM("random", "random"),
        /** The worker with the fewest requests in flight (ties: fewest queued prefill tokens, then the lowest). */
        LEAST_LOADED("least-loaded", "least-loaded");

        private final String key;
        private final String displayName;

        Kind(String key, String displayName) {
            this.key = key;
            this.displayName = displayName;
        }

        /** The {@code --policies} key. */
        public String key() {
            return key;
        }

        /** The name in reports. */
        public String displayName() {
            return displayName;
        }

        /** The kind with this key. */
        public static Kind of(String key) {
            String k = key.strip().toLowerCase(Locale.ROOT);
            for (Kind kind : values()) {
                if (kind.key.equals(k)) {
                    return kind;
                }
            }
            throw new IllegalArgumentException("unknown policy '" + key + "': known policies are "
                    + String.join(
                            ", ", List.of(values()).stream().map(Kind::key).toList()));
        }

        /** A fresh policy of this kind for a simulation with {@code settings} at {@code blockSize}. */
        public Policy create(SimSettings settings, int blockSize, LongSupplier simClockNanos) {
            return switch (this) {
                case KV_EVENTS -> RouterPolicy.events(displayName, settings, blockSize, false);
                case KV_EVENTS_GPU -> RouterPolicy.events(displayName, settings, blockSize, true);
                case KV_PREDICTED -> RouterPolicy.predicted(displayName, settings, blockSize, simClockNanos);
                case ROUND_ROBIN -> new RoundRobin(displayName, settings.workers());
                case RANDOM -> new RandomPolicy(displayName, settings.workers(), settings.seed());
                case LEAST_LOADED -> new LeastLoaded(displayName, settings.workers());
            };
        }
    }

    /** The kvprefix {@link Router}, event-fed or predicted. */
    final class RouterPolicy implements Policy {
        private final String name;
        private final PrefixIndex index;
        private final Router router;
        private final BlockHasher hasher;
        private final boolean gpuOnly;

        private RouterPolicy(String name, PrefixIndex index, Router router, boolean gpuOnly) {
            this.name = name;
            this.index = index;
            this.router = router;
            this.hasher = router.hasher();
            this.gpuOnly = gpuOnly;
        }

        static Router.Builder builder(SimSettings s) {
            Router.Builder b = Router.builder()
                    .overlapWeight(s.overlapWeight())
                    .temperature(s.temperature())
                    .seed(s.seed())
                    .minMatchBlocks(s.minMatchBlocks())
                    .spreadMisses(s.spreadMisses());
            for (int w = 0; w < s.workers(); w++) {
                b.worker(Worker.of(w));
            }
            return b;
        }

        static IndexConfig config(SimSettings s, int blockSize) {
            return IndexConfig.builder()
                    .blockSize(blockSize)
                    .maxWorkers(Math.min(IndexConfig.MAX_WORKER_SLOTS, Math.max(1024, s.workers())))
                    .build();
        }

        static RouterPolicy events(String name, SimSettings s, int blockSize, boolean gpuOnly) {
            PrefixIndex index = PrefixIndex.create(config(s, blockSize));
            return new RouterPolicy(name, index, builder(s).index(index).build(), gpuOnly);
        }

        static RouterPolicy predicted(String name, SimSettings s, int blockSize, LongSupplier clock) {
            Router r = builder(s)
                    .indexConfig(config(s, blockSize))
                    .predicted(true)
                    .predictedTtl(s.predictedTtl())
                    .predictedMaxBlocks(s.predictedMaxBlocks())
                    .clock(clock)
                    .build();
            return new RouterPolicy(name, null, r, false);
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public int route(SimRequest request, int[] tokens, int length) {
            RoutingDecision d = router.route(tokens, 0, length, hasher);
            request.decision = d;
            return (int) d.worker().workerId();
        }

        @Override
        public void prefillDone(SimRequest request) {
            request.decision.prefillFinished();
        }

        @Override
        public void finished(SimRequest request) {
            request.decision.finished();
            request.decision = null;
        }

        @Override
        public boolean wantsEvents() {
            return index != null;
        }

        @Override
        public void apply(KvEvent event) {
            boolean lower = switch (event) {
                case KvEvent.Copied c -> true;
                case KvEvent.Removed r -> r.medium() != Medium.GPU;
                case KvEvent.Stored st -> st.medium() != Medium.GPU;
                default -> false;
            };
            if (!(gpuOnly && lower)) {
                index.apply(event);
            }
        }

        @Override
        public void close() {
            router.close();
            if (index != null) {
                index.close();
            }
        }
    }

    /** Worker {@code i mod N}. */
    final class RoundRobin implements Policy {
        private final String name;
        private final int workers;
        private int next;

        RoundRobin(String name, int workers) {
            this.name = name;
            this.workers = workers;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public int route(SimRequest request, int[] tokens, int length) {
            int w = next;
            next = (next + 1) % workers;
            return w;
        }
    }

    /** A uniformly random worker. */
    final class RandomPolicy implements Policy {
        private final String name;
        private final int workers;
        private final Rng rng;

        RandomPolicy(String name, int workers, long seed) {
            this.name = name;
            this.workers = workers;
            this.rng = new Rng(seed);
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public int route(SimRequest request, int[] tokens, int length) {
            return rng.nextInt(workers);
        }
    }

    /** The fewest requests in flight, then the fewest prefill tokens not yet computed, then the lowest worker. */
    final class LeastLoaded implements Policy {
        private final String name;
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
        public int route(SimRequest request, int[] tokens, int length) {
            int best = 0;
            for (int w = 1; w < inFlight.length; w++) {
                if (inFlight[w] < inFlight[best]
                        || inFlight[w] == inFlight[best] && pendingTokens[w] < pendingTokens[best]) {
                    best = w;
                }
            }
            inFlight[best]++;
            pendingTokens[best] += request.trace.inputLength();
            return best;
        }

        @Override
        public void prefillDone(SimRequest request) {
            pendingTokens[request.worker] -= request.trace.inputLength();
        }

        @Override
        public void finished(SimRequest request) {
            inFlight[request.worker]--;
        }
    }
}
