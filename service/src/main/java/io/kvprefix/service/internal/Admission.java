package io.kvprefix.service.internal;

import io.kvprefix.service.AdmissionSlot;
import io.kvprefix.service.ServiceException;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Bounded admission (docs/SERVE.md section 4): at most {@code maxInFlight} requests are routed and
 * forwarded at once; past that, up to {@code maxQueued} wait in arrival order for a slot, each for at
 * most the queue timeout; past that, a request is refused at once with 429 {@code queue_full}, and one
 * that waited too long with 429 {@code queue_timeout}. A slot is freed by {@link Slot#release()},
 * exactly once, and goes to the oldest waiter.
 *
 * <p>Thread-safety: thread-safe; one short lock guards the counts and the queue. Futures complete on
 * the thread that released the slot (or the timer's), outside the lock.
 */
public final class Admission {
    private final int maxInFlight;
    private final int maxQueued;
    private final long timeoutNanos;
    private final ScheduledExecutorService timer;
    private final ArrayDeque<Waiter> queue = new ArrayDeque<>();
    private int active;

    /** A granted slot. Thread-safety: thread-safe; {@link #release()} is idempotent. */
    public final class Slot implements AdmissionSlot {
        private boolean released;

        private Slot() {}

        @Override
        public void release() {
            Waiter next;
            synchronized (Admission.this) {
                if (released) {
                    return;
                }
                released = true;
                next = queue.poll();
                if (next == null) {
                    active--;
                    return;
                }
                // the slot passes to the waiter: active stays
            }
            next.grant(new Slot());
        }
    }

    private final class Waiter {
        final CompletableFuture<AdmissionSlot> future = new CompletableFuture<>();
        ScheduledFuture<?> timeout;

        void grant(Slot s) {
            if (timeout != null) {
                timeout.cancel(false);
            }
            if (!future.complete(s)) {
                s.release(); // cancelled by its owner meanwhile
            }
        }
    }

    /** An admission of {@code maxInFlight} slots, {@code maxQueued} waiters, each for at most {@code timeoutNanos}. */
    public Admission(int maxInFlight, int maxQueued, long timeoutNanos, ScheduledExecutorService timer) {
        if (maxInFlight < 1 || maxQueued < 0 || timeoutNanos <= 0) {
            throw new IllegalArgumentException("maxInFlight >= 1, maxQueued >= 0, timeout > 0: " + maxInFlight + ", "
                    + maxQueued + ", " + timeoutNanos);
        }
        this.maxInFlight = maxInFlight;
        this.maxQueued = maxQueued;
        this.timeoutNanos = timeoutNanos;
        this.timer = timer;
    }

    /**
     * A slot: completed at once when one is free, later when a queued request's turn comes, or
     * exceptionally with a 429 {@link ServiceException}. A caller that gives up on a pending future
     * cancels it ({@code cancel(false)}); a slot it would have had goes to the next waiter.
     */
    public CompletableFuture<AdmissionSlot> acquire() {
        Waiter w;
        synchronized (this) {
            if (active < maxInFlight) {
                active++;
                return CompletableFuture.completedFuture(new Slot());
            }
            if (queue.size() >= maxQueued) {
                return CompletableFuture.failedFuture(new ServiceException(
                        429,
                        "rate_limit_error",
                        "queue_full",
                        null,
                        "The router is at its limit of " + maxInFlight + " requests in flight and " + maxQueued
                                + " queued; try again later"));
            }
            w = new Waiter();
            queue.add(w);
        }
        w.timeout = timer.schedule(() -> expire(w), timeoutNanos, TimeUnit.NANOSECONDS);
        w.future.whenComplete((s, e) -> {
            if (w.future.isCancelled()) {
                drop(w);
            }
        });
        return w.future;
    }

    private void expire(Waiter w) {
        if (!drop(w)) {
            return; // granted meanwhile
        }
        w.future.completeExceptionally(new ServiceException(
                429,
                "rate_limit_error",
                "queue_timeout",
                null,
                "The request waited " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms for one of the router's "
                        + maxInFlight + " slots; try again later"));
    }

    private synchronized boolean drop(Waiter w) {
        return queue.remove(w);
    }

    /** Requests holding a slot now. */
    public synchronized int inFlight() {
        return active;
    }

    /** Requests waiting for a slot now. */
    public synchronized int queued() {
        return queue.size();
    }

    /** The most requests in flight. */
    public int maxInFlight() {
        return maxInFlight;
    }
}
