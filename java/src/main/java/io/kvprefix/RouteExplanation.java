package io.kvprefix;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Why a {@link Router} would send a request where it would ({@link Router#explain}): the index's
 * explanation of the match (docs/SPEC.md section 4.1), and per worker the depth the router counts,
 * its cost and its verdict: preferred, a candidate, outweighed by load, below the minimum match, or
 * not a member of the router (docs/SPEC.md section 6).
 *
 * <p>Thread-safety: immutable.
 *
 * @param index the explanation of the event-fed index's match (of the predicted index's, for a router
 *     without an event-fed index)
 * @param minimumDepth the smallest deepest match that counts at the request's block size (at least 1)
 * @param belowMinimumMatch true if no registered worker matches {@code minimumDepth} blocks: every
 *     depth counts as 0 and load alone decides
 * @param preferred the worker the policy ranks first now (what a temperature-0 router without spreading
 *     of misses would choose; with a temperature, or spreading, a decision may pick another)
 * @param workers every registered worker and every worker the index knows, sorted
 */
public record RouteExplanation(
        MatchExplanation index,
        int minimumDepth,
        boolean belowMinimumMatch,
        Worker preferred,
        List<Candidate> workers) {
    public RouteExplanation {
        Objects.requireNonNull(index, "index");
        Objects.requireNonNull(preferred, "preferred");
        workers = List.copyOf(workers);
    }

    /** The router's verdict on one worker. Thread-safety: an immutable enum. */
    public enum Verdict {
        /** The worker the policy ranks first. */
        PREFERRED("preferred"),
        /** A registered worker with a higher cost and no deeper match than the preferred one. */
        CANDIDATE("candidate"),
        /**
         * Weighted out: a deeper match than the preferred worker's, but a higher cost (its load, divided
         * by its capacity weight): load balancing, not the cache, decided.
         */
        OUTWEIGHED("outweighed"),
        /** It holds a prefix, but the deepest match is below the minimum match, so its depth counted as 0. */
        BELOW_MIN_MATCH("below_min_match"),
        /** The index knows the worker, but it is not registered with the router: never routed to. */
        NOT_A_MEMBER("not_a_member");

        private final String wireName;

        Verdict(String wireName) {
            this.wireName = wireName;
        }

        /** The name in JSON forms ({@code outweighed}, ...). */
        public String wireName() {
            return wireName;
        }
    }

    /**
     * One worker as the router sees it.
     *
     * <p>Thread-safety: immutable.
     *
     * @param worker the worker
     * @param depth the depth the router counts: the larger of the event-fed and the predicted depth
     * @param predictedDepth its depth in the predicted index (0 without predicted mode)
     * @param verdict the router's verdict
     * @param cost its cost (docs/SPEC.md section 6), NaN for a worker that is not a member
     * @param stop where and why its match in the index stopped
     */
    public record Candidate(
            Worker worker,
            int depth,
            int predictedDepth,
            Verdict verdict,
            double cost,
            MatchExplanation.WorkerStop stop) {
        public Candidate {
            Objects.requireNonNull(worker, "worker");
            Objects.requireNonNull(verdict, "verdict");
            Objects.requireNonNull(stop, "stop");
        }
    }

    /** The entry of {@code worker}, if the router or the index knows it. */
    public Optional<Candidate> of(Worker worker) {
        return workers.stream().filter(c -> c.worker().equals(worker)).findFirst();
    }
}
