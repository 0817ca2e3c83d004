package io.kvprefix.zmq;

import io.kvprefix.KvEvent;
import io.kvprefix.Worker;
import java.util.List;
import java.util.Objects;
import java.util.OptionalInt;

/**
 * What an {@link EngineEventDecoder} made of one batch payload: the events to apply, in order, and
 * what was skipped or noted on the way.
 *
 * <p>Thread-safety: immutable (the lists are copies; the events' arrays must not be modified).
 *
 * @param timestamp when the engine published the batch, in seconds since the epoch, or
 *     {@link Double#NaN} when the format carries no time (the subscriber's lag is then not updated)
 * @param worker the worker the events belong to
 * @param batchRank the dp rank the batch named, or empty
 * @param events the events to apply, in order
 * @param issues what was skipped or noted, one entry per event concerned, in order
 */
public record DecodedBatch(
        double timestamp, Worker worker, OptionalInt batchRank, List<KvEvent> events, List<Issue> issues) {
    public DecodedBatch {
        Objects.requireNonNull(worker, "worker");
        Objects.requireNonNull(batchRank, "batchRank");
        events = List.copyOf(events);
        issues = List.copyOf(issues);
    }

    /**
     * One event skipped or noted.
     *
     * <p>Thread-safety: immutable.
     *
     * @param issue what kind
     * @param detail a human-readable description
     */
    public record Issue(DecodeIssue issue, String detail) {
        public Issue {
            Objects.requireNonNull(issue, "issue");
            Objects.requireNonNull(detail, "detail");
        }
    }
}
