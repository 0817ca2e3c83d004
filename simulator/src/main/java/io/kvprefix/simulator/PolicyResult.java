package io.kvprefix.simulator;

import java.util.Arrays;

/**
 * What one policy achieved on one trace: cache reuse, prefill work, time to first token, spread of
 * requests over workers, and the policy's own cost per decision (measured, wall clock).
 *
 * <p>Thread-safety: immutable once built (the arrays are private copies).
 */
public final class PolicyResult {
    private final String name;
    private final long requests;
    private final long inputTokens;
    private final long reusedTokens;
    private final long heldElsewhereTokens;
    private final long[] ttftNs;
    private final long[] decisionNs;
    private final long[] requestsPerWorker;
    private final long simulatedNs;

    PolicyResult(
            String name,
            long requests,
            long inputTokens,
            long reusedTokens,
            long heldElsewhereTokens,
            long[] ttftNs,
            long[] decisionNs,
            long[] requestsPerWorker,
            long simulatedNs) {
        this.name = name;
        this.requests = requests;
        this.inputTokens = inputTokens;
        this.reusedTokens = reusedTokens;
        this.heldElsewhereTokens = heldElsewhereTokens;
        this.ttftNs = ttftNs.clone();
        this.decisionNs = decisionNs.clone();
        Arrays.sort(this.ttftNs);
        Arrays.sort(this.decisionNs);
        this.requestsPerWorker = requestsPerWorker.clone();
        this.simulatedNs = simulatedNs;
    }

    /** The policy's name. */
    public String name() {
        return name;
    }

    /** Requests simulated. */
    public long requests() {
        return requests;
    }

    /** Input tokens over all requests. */
    public long inputTokens() {
        return inputTokens;
    }

    /** Input tokens found in the prefix cache of the worker a request went to. */
    public long reusedTokens() {
        return reusedTokens;
    }

    /**
     * Tokens that, when a request was admitted, another registered engine held as a longer cached
     * prefix than the engine it was sent to: hits the routing gave up. -1 when not measured (more than
     * {@value Simulator#ELSEWHERE_MAX_WORKERS} workers).
     */
    public long heldElsewhereTokens() {
        return heldElsewhereTokens;
    }

    /** Tokens prefilled (input tokens not reused). */
    public long prefillTokens() {
        return inputTokens - reusedTokens;
    }

    /** Prefix-cache hit rate: reused tokens / input tokens. */
    public double hitRate() {
        return inputTokens == 0 ? 0 : (double) reusedTokens / inputTokens;
    }

    /** Mean simulated time to first token, milliseconds. */
    public double ttftMeanMs() {
        if (ttftNs.length == 0) {
            return 0;
        }
        double sum = 0;
        for (long t : ttftNs) {
            sum += t;
        }
        return sum / ttftNs.length / 1e6;
    }

    /** The {@code q}-quantile (nearest rank) of the simulated time to first token, milliseconds. */
    public double ttftMs(double q) {
        return quantile(ttftNs, q) / 1e6;
    }

    /** The {@code q}-quantile (nearest rank) of the policy's measured cost per decision, microseconds. */
    public double decisionUs(double q) {
        return quantile(decisionNs, q) / 1e3;
    }

    /** Requests routed to each worker. */
    public long[] requestsPerWorker() {
        return requestsPerWorker.clone();
    }

    /** The most requests any worker got. */
    public long maxRequestsPerWorker() {
        return Arrays.stream(requestsPerWorker).max().orElse(0);
    }

    /** The fewest requests any worker got. */
    public long minRequestsPerWorker() {
        return Arrays.stream(requestsPerWorker).min().orElse(0);
    }

    /** Simulated time from the first arrival to the last request done, seconds. */
    public double simulatedSeconds() {
        return simulatedNs / 1e9;
    }

    static double quantile(long[] sorted, double q) {
        if (sorted.length == 0) {
            return 0;
        }
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }
}
