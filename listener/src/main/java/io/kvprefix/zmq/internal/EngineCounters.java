package io.kvprefix.zmq.internal;

import io.kvprefix.EventStatus;
import io.kvprefix.zmq.DecodeIssue;
import io.kvprefix.zmq.SubscriberStats.Counter;
import io.kvprefix.zmq.SubscriberStats.EventKind;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The live counters of one engine, and the layout of their raw array: the {@link Counter}s, then
 * applied events per (kind, status), kind-major, then the {@link DecodeIssue}s.
 *
 * <p>Thread-safety: one writer thread (the subscriber's I/O thread) and any number of readers. Each
 * value is written with release semantics and read with acquire semantics, so a reader sees every
 * value at least as new as when the writer last touched it; a snapshot is not atomic across values.
 */
public final class EngineCounters {
    private static final int COUNTERS = Counter.values().length;
    private static final int STATUSES = EventStatus.values().length;
    private static final int KINDS = EventKind.values().length;
    /** Length of the raw array. */
    public static final int SIZE = COUNTERS + KINDS * STATUSES + DecodeIssue.values().length;

    private final AtomicLongArray values = new AtomicLongArray(SIZE);

    /** Position of {@code c} in the raw array. */
    public static int index(Counter c) {
        return c.ordinal();
    }

    /** Position of events of {@code kind} with {@code status} in the raw array. */
    public static int index(EventKind kind, EventStatus status) {
        return COUNTERS + kind.ordinal() * STATUSES + status.ordinal();
    }

    /** Position of {@code issue} in the raw array. */
    public static int index(DecodeIssue issue) {
        return COUNTERS + KINDS * STATUSES + issue.ordinal();
    }

    /** Adds one to {@code c} (writer thread only). */
    public void increment(Counter c) {
        add(index(c), 1);
    }

    /** Adds {@code n} to {@code c} (writer thread only). */
    public void add(Counter c, long n) {
        add(index(c), n);
    }

    /** Counts one applied event (writer thread only). */
    public void event(EventKind kind, EventStatus status) {
        add(index(kind, status), 1);
    }

    /** Counts one issue (writer thread only). */
    public void issue(DecodeIssue issue) {
        add(index(issue), 1);
    }

    /** The value of {@code c}. */
    public long get(Counter c) {
        return values.getAcquire(index(c));
    }

    private void add(int i, long n) {
        values.setRelease(i, values.getPlain(i) + n);
    }

    /** How often {@code issue} occurred. */
    public long get(DecodeIssue issue) {
        return values.getAcquire(index(issue));
    }

    /** A copy of every value, in the raw layout. */
    public long[] snapshot() {
        long[] out = new long[SIZE];
        for (int i = 0; i < SIZE; i++) {
            out[i] = values.getAcquire(i);
        }
        return out;
    }
}
