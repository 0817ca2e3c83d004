package io.kvprefix.simulator;

import io.kvprefix.workload.LocalHashTable;
import io.kvprefix.workload.Trace;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.LongConsumer;

/**
 * The request-rate sweep: the same trace, settings and policies at several request rates (arrival
 * times divided by the rate), to find where each policy's TTFT turns up, its <em>knee</em>. Every run
 * is independent and its simulated results depend only on its inputs, so the runs go in parallel; the
 * wall-clock decision cost of these runs is not reported (the main table measures it alone).
 *
 * <p>Thread-safety: stateless; {@link #run} may be called from any thread.
 */
public final class RateSweep {
    /** A mean TTFT more than this many times the TTFT floor's mean is past the knee. */
    public static final double KNEE_FACTOR = 2;

    private RateSweep() {}

    /**
     * The results of every policy at one request rate, in the order of the policies.
     *
     * <p>Thread-safety: immutable.
     *
     * @param rate the request-rate multiplier
     * @param results one per policy
     */
    public record Point(double rate, List<PolicyResult> results) {
        public Point {
            results = List.copyOf(results);
        }
    }

    /**
     * Runs every policy of {@code kinds} at every rate of {@code rates} on {@code threads} threads;
     * {@code progress} hears of each request simulated (from any thread).
     *
     * @param hashes local hashes of every id of the trace, precomputed (only read here)
     */
    public static List<Point> run(
            Trace trace,
            LocalHashTable hashes,
            SimSettings settings,
            List<PolicyKind> kinds,
            List<Double> rates,
            int threads,
            LongConsumer progress) {
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, threads));
        try {
            List<List<Future<PolicyResult>>> futures = new ArrayList<>();
            for (double rate : rates) {
                SimSettings s = settings.toBuilder().rate(rate).build();
                List<Future<PolicyResult>> row = new ArrayList<>();
                for (PolicyKind k : kinds) {
                    row.add(pool.submit(() -> Simulator.run(trace, hashes, s, k, progress)));
                }
                futures.add(row);
            }
            List<Point> out = new ArrayList<>();
            for (int i = 0; i < rates.size(); i++) {
                List<PolicyResult> results = new ArrayList<>();
                for (Future<PolicyResult> f : futures.get(i)) {
                    results.add(f.get());
                }
                out.add(new Point(rates.get(i), results));
            }
            return List.copyOf(out);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("the rate sweep was interrupted", e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            throw c instanceof RuntimeException re ? re : new IllegalStateException(c);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * The knee of policy {@code index} in {@code points} (sorted by rate): the highest swept rate up to
     * which its mean TTFT stays within {@link #KNEE_FACTOR} times the TTFT floor's mean
     * ({@code floorMeanMs}, the same yardstick for every policy), or NaN if it is above that already at
     * the lowest rate (or there are no points).
     */
    public static double knee(List<Point> points, int index, double floorMeanMs) {
        double knee = Double.NaN;
        for (Point p : points) {
            if (p.results().get(index).ttftMeanMs() > KNEE_FACTOR * floorMeanMs) {
                break;
            }
            knee = p.rate();
        }
        return knee;
    }
}
