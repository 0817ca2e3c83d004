package io.kvprefix.service;

/**
 * What a {@link RouterService} has in flight and what its decisions have cost, at one moment: for
 * tests (everything returns to 0 when traffic stops) and for benchmarks (the decision cost).
 *
 * <p>Thread-safety: immutable.
 *
 * @param inFlight requests holding an admission slot
 * @param queued requests waiting for one
 * @param openDecisions route-API decisions open
 * @param engineInFlight requests forwarded to engines and not finished, summed over the engines
 * @param decisions route decisions made so far
 * @param decisionNanosTotal their total time (hash, match and policy; tokenizing not included)
 * @param decisionNanosMax the longest one in the meters' recent window
 */
public record ServiceStats(
        int inFlight,
        int queued,
        int openDecisions,
        long engineInFlight,
        long decisions,
        long decisionNanosTotal,
        long decisionNanosMax) {
    /** The mean decision time in microseconds (NaN before the first). */
    public double decisionMeanMicros() {
        return decisions == 0 ? Double.NaN : decisionNanosTotal / 1e3 / decisions;
    }
}
