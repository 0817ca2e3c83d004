package io.kvprefix.internal.router;

import io.kvprefix.BlockHasher;
import io.kvprefix.MatchExplanation;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.RouteExplanation;
import io.kvprefix.RouteExplanation.Verdict;
import io.kvprefix.Worker;
import io.kvprefix.internal.MatchResults;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToLongFunction;

/**
 * Assembles a {@link RouteExplanation} from the indexes' explanations and the load table's costs for
 * the same request ({@link LoadTable#costs}), with no side effect on the router's state.
 *
 * <p>Thread-safety: stateless.
 */
public final class RouteExplainer {
    private static final MatchResults RESULTS = MatchResults.access();

    private RouteExplainer() {}

    /** Explains a token request: both indexes' explanations (due predicted blocks expired first), then {@link #explain}. */
    public static RouteExplanation explain(
            PrefixIndex events,
            PredictedBlocks predicted,
            int[] tokens,
            int offset,
            int length,
            BlockHasher hasher,
            LoadTable table,
            ToLongFunction<Worker> blockCount) {
        MatchExplanation ev = events == null ? null : events.explain(tokens, offset, length, hasher);
        MatchExplanation pr = null;
        if (predicted != null) {
            predicted.expire();
            pr = predicted.index().explain(tokens, offset, length, hasher);
        }
        return explain(ev, pr, length, hasher.blockSize(), table, blockCount);
    }

    /** Explains a request of local hashes at the index's block size {@code blockSize}, {@code isl} tokens long. */
    public static RouteExplanation explain(
            PrefixIndex events,
            PredictedBlocks predicted,
            long[] localHashes,
            int isl,
            int blockSize,
            LoadTable table,
            ToLongFunction<Worker> blockCount) {
        int n = localHashes.length;
        MatchExplanation ev = events == null ? null : events.explain(localHashes, 0, n);
        MatchExplanation pr = null;
        if (predicted != null) {
            predicted.expire();
            pr = predicted.index().explain(localHashes, 0, n);
        }
        return explain(ev, pr, isl, blockSize, table, blockCount);
    }

    /**
     * @param events the event-fed index's explanation, or null without one
     * @param predicted the predicted index's, or null without predicted mode
     */
    public static RouteExplanation explain(
            MatchExplanation events,
            MatchExplanation predicted,
            int isl,
            int blockSize,
            LoadTable table,
            ToLongFunction<Worker> blockCount) {
        MatchExplanation main = events != null ? events : predicted;
        LoadTable.Costs c = table.costs(result(events), result(predicted), events != null, isl, blockSize, blockCount);
        int preferredDepth = c.depths()[c.preferred()];
        Map<Worker, RouteExplanation.Candidate> out = new TreeMap<>();
        Map<Worker, Integer> registered = new HashMap<>();
        for (int i = 0; i < c.workers().length; i++) {
            Worker w = c.workers()[i];
            registered.put(w, i);
            int d = c.depths()[i];
            Verdict v = i == c.preferred()
                    ? Verdict.PREFERRED
                    : c.miss() && d > 0
                            ? Verdict.BELOW_MIN_MATCH
                            : d > preferredDepth ? Verdict.OUTWEIGHED : Verdict.CANDIDATE;
            out.put(w, new RouteExplanation.Candidate(w, d, depthOf(predicted, w), v, c.costs()[i], stop(main, w)));
        }
        for (MatchExplanation.WorkerStop s : main.workers()) {
            if (!registered.containsKey(s.worker())) {
                int d = Math.max(s.depth(), depthOf(predicted, s.worker()));
                out.put(
                        s.worker(),
                        new RouteExplanation.Candidate(
                                s.worker(), d, depthOf(predicted, s.worker()), Verdict.NOT_A_MEMBER, Double.NaN, s));
            }
        }
        return new RouteExplanation(
                main, c.minimumDepth(), c.miss(), c.workers()[c.preferred()], new ArrayList<>(out.values()));
    }

    private static MatchResult result(MatchExplanation e) {
        if (e == null) {
            return null;
        }
        MatchResult r = new MatchResult(e.workers().size());
        RESULTS.reset(r, e.queryBlocks());
        for (MatchExplanation.WorkerStop s : e.workers()) {
            if (s.depth() > 0) {
                RESULTS.add(r, s.worker(), s.depth());
            }
        }
        return r;
    }

    private static int depthOf(MatchExplanation e, Worker w) {
        return e == null ? 0 : e.of(w).map(MatchExplanation.WorkerStop::depth).orElse(0);
    }

    /** The worker's stop in {@code e}, or an absent stop at 0 for a worker the index does not know. */
    private static MatchExplanation.WorkerStop stop(MatchExplanation e, Worker w) {
        List<MatchExplanation.WorkerStop> ws = e.workers();
        for (MatchExplanation.WorkerStop s : ws) {
            if (s.worker().equals(w)) {
                return s;
            }
        }
        return MatchExplanation.WorkerStop.of(w, e.queryBlocks(), 0, -1, null, 0);
    }
}
