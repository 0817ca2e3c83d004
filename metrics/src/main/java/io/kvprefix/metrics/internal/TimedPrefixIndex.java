package io.kvprefix.metrics.internal;

import io.kvprefix.BlockHasher;
import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.IndexStats;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchExplanation;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.micrometer.core.instrument.Timer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * A {@link PrefixIndex} that forwards every call to another one and times each match call (both
 * forms, hash-and-match included) into a Micrometer {@link Timer}: two {@link System#nanoTime()}
 * reads and one {@link Timer#record} per match. Everything else is forwarded untouched; closing it
 * closes the index it wraps.
 *
 * <p>Thread-safety: as the wrapped index (the timer is thread-safe).
 */
public final class TimedPrefixIndex implements PrefixIndex {
    private final PrefixIndex index;
    private final Timer timer;

    public TimedPrefixIndex(PrefixIndex index, Timer timer) {
        this.index = Objects.requireNonNull(index, "index");
        this.timer = Objects.requireNonNull(timer, "timer");
    }

    /** The wrapped index. */
    public PrefixIndex delegate() {
        return index;
    }

    @Override
    public void match(long[] localHashes, int offset, int length, MatchResult into) {
        long t0 = System.nanoTime();
        try {
            index.match(localHashes, offset, length, into);
        } finally {
            timer.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public void match(int[] tokens, int offset, int length, BlockHasher hasher, MatchResult into) {
        long t0 = System.nanoTime();
        try {
            index.match(tokens, offset, length, hasher, into);
        } finally {
            timer.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public int match(int[] tokens, int offset, int length, BlockHasher hasher, MatchResult into, long[] hashesOut) {
        long t0 = System.nanoTime();
        try {
            return index.match(tokens, offset, length, hasher, into, hashesOut);
        } finally {
            timer.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public EventStatus apply(KvEvent event) {
        return index.apply(event);
    }

    @Override
    public MatchExplanation explain(long[] localHashes, int offset, int length) {
        return index.explain(localHashes, offset, length);
    }

    @Override
    public MatchExplanation explain(int[] tokens, int offset, int length, BlockHasher hasher) {
        return index.explain(tokens, offset, length, hasher);
    }

    @Override
    public long blockCount(Worker worker) {
        return index.blockCount(worker);
    }

    @Override
    public List<Worker> workers() {
        return index.workers();
    }

    @Override
    public long eventCount(EventStatus status) {
        return index.eventCount(status);
    }

    @Override
    public IndexStats stats() {
        return index.stats();
    }

    @Override
    public BlockHasher hasher() {
        return index.hasher();
    }

    @Override
    public IndexConfig config() {
        return index.config();
    }

    @Override
    public void snapshot(Path file, Map<String, String> metadata) {
        index.snapshot(file, metadata);
    }

    @Override
    public Map<String, String> snapshotMetadata() {
        return index.snapshotMetadata();
    }

    @Override
    public void close() {
        index.close();
    }

    @Override
    public String toString() {
        return "Timed[" + index + "]";
    }
}
