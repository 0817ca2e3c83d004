package io.kvprefix.metrics.internal;

import java.util.Objects;
import java.util.function.Supplier;

/**
 * The last snapshot of an object's statistics, taken again when it is older than a maximum age or
 * when {@link #refresh()} is called (right before a scrape), so that every meter of one scrape reads
 * the same snapshot.
 *
 * <p>Thread-safety: thread-safe; concurrent readers may both take a snapshot, and the newer one wins.
 *
 * @param <T> the snapshot type
 */
public final class Snapshots<T> {
    private final Supplier<T> source;
    private final long maxAgeNanos;
    private volatile Taken<T> last;

    private record Taken<T>(T value, long at) {}

    /** Snapshots from {@code source}, reused for at most {@code maxAgeNanos}. */
    public Snapshots(Supplier<T> source, long maxAgeNanos) {
        this.source = Objects.requireNonNull(source, "source");
        this.maxAgeNanos = maxAgeNanos;
    }

    /** The current snapshot (a fresh one if the last is too old); null if the source fails (for example closed). */
    public T get() {
        Taken<T> t = last;
        if (t == null || System.nanoTime() - t.at() > maxAgeNanos) {
            return refresh();
        }
        return t.value();
    }

    /** Takes a fresh snapshot now; null if the source fails. */
    public T refresh() {
        try {
            T v = source.get();
            last = new Taken<>(v, System.nanoTime());
            return v;
        } catch (RuntimeException e) {
            last = null;
            return null;
        }
    }
}
