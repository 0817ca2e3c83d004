package io.kvprefix;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;

/**
 * Applies KV events to a {@link PrefixIndex} on writer threads, the usual deployment shape: events
 * of one worker id always go to the same thread (sticky routing, {@link #laneOf}), so a worker's
 * events apply in the order they were submitted and writers never contend on one worker's state.
 * Statuses are counted by the index ({@link PrefixIndex#eventCount}) and, optionally, passed to a
 * listener on the writer thread.
 *
 * <pre>{@code
 * try (EventSink sink = EventSink.create(index, 2, null)) {
 *     sink.submit(event);          // from any thread; blocks only while the writer's queue is full
 *     sink.flush();                // waits until everything submitted so far is applied
 * }
 * }</pre>
 *
 * <p>Thread-safety: {@link #submit} and {@link #flush} may be called from any number of threads;
 * events submitted by one thread for one worker id are applied in submission order. A
 * {@link StatusListener} runs on a writer thread and must not call {@link #flush} or {@link #close}
 * (the writer would wait for itself).
 */
public final class EventSink implements AutoCloseable {

    /** Receives each event's status on the writer thread that applied it. */
    @FunctionalInterface
    public interface StatusListener {
        /** Called after {@code event} was applied with {@code status}; must not block for long. */
        void onStatus(KvEvent event, EventStatus status);
    }

    private static final int QUEUE_CAPACITY = 1 << 14;

    private final PrefixIndex index;
    private final StatusListener listener;
    private final Lane[] lanes;
    private final Assignments assignments;
    private volatile boolean closing;
    private volatile boolean closed;
    private volatile Throwable failure;
    private final AtomicInteger inFlight = new AtomicInteger();

    private EventSink(PrefixIndex index, int threads, StatusListener listener) {
        this.index = Objects.requireNonNull(index, "index");
        this.listener = listener;
        this.lanes = new Lane[threads];
        this.assignments = new Assignments(threads);
        for (int i = 0; i < threads; i++) {
            lanes[i] = new Lane(i);
        }
        for (Lane l : lanes) {
            l.thread.start();
        }
    }

    /** A sink with one writer and no listener. */
    public static EventSink create(PrefixIndex index) {
        return create(index, 1, null);
    }

    /** A sink with {@code threads} writers; {@code listener} may be null. */
    public static EventSink create(PrefixIndex index, int threads, StatusListener listener) {
        if (threads < 1 || threads > 256) {
            throw new IllegalArgumentException("writer threads must be in 1..256, got " + threads);
        }
        return new EventSink(index, threads, listener);
    }

    /** Number of writer threads. */
    public int threads() {
        return lanes.length;
    }

    /**
     * The writer that applies events of {@code workerId}; a worker id not seen before is given its
     * writer now, as its first {@link #submit} would: the writer with the fewest worker ids so far, the
     * first such on a tie, so that with one producer the n-th new worker id goes to writer
     * {@code n % threads}, and it keeps that writer for the life of the sink. (Sixteen workers on two
     * writers are eight and eight; a hash of the id split the same sixteen nine and seven, and one
     * writer had 56% of the blocks to apply.)
     */
    public int laneOf(long workerId) {
        return assignments.laneOf(workerId);
    }

    /**
     * Queues {@code event} for its worker's writer (each writer has a bounded lock-free queue, multi-
     * producer, single consumer); blocks while that writer's queue is full. An exception thrown while
     * applying (for example because the index was closed) is recorded, stops that writer, and is
     * rethrown by the next {@code submit}, {@link #flush} or {@link #close}.
     */
    public void submit(KvEvent event) {
        Objects.requireNonNull(event, "event");
        inFlight.incrementAndGet();
        try {
            checkState(); // after the increment: close() either sees this submit or this submit sees close()
            lanes[assignments.laneOf(event.workerId())].put(event);
        } finally {
            inFlight.decrementAndGet();
        }
    }

    /** Waits until every event submitted before this call has been applied. */
    public void flush() {
        for (Lane l : lanes) {
            // Every event whose submit() returned holds a ring position below the tail (applied
            // counts positions in order, so a later submit cannot be mistaken for an earlier one).
            long target = l.tail.get(8);
            int spins = 0;
            while (l.applied < target) {
                checkFailure();
                if (!l.thread.isAlive()) {
                    checkFailure();
                    throw new IllegalStateException("event sink writer stopped");
                }
                if (++spins < 100) {
                    Thread.onSpinWait();
                } else {
                    LockSupport.parkNanos(20_000);
                }
            }
        }
        checkFailure();
    }

    /** Events applied so far, all writers. */
    public long applied() {
        long n = 0;
        for (Lane l : lanes) {
            n += l.applied;
        }
        return n;
    }

    /** Applies everything submitted, stops the writer threads, and waits for them. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        try {
            closing = true; // new submits fail from here on
            int spins = 0;
            while (inFlight.get() != 0) { // submits that got past the check finish queueing
                if (++spins < 100) {
                    Thread.onSpinWait();
                } else {
                    LockSupport.parkNanos(10_000);
                }
            }
            if (failure == null) {
                flush();
            }
        } finally {
            closed = true;
            for (Lane l : lanes) {
                LockSupport.unpark(l.thread);
            }
            for (Lane l : lanes) {
                try {
                    l.thread.join();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        checkFailure();
    }

    private void checkState() {
        if (closing || closed) {
            throw new IllegalStateException("event sink closed");
        }
        checkFailure();
    }

    private void checkFailure() {
        Throwable f = failure;
        if (f != null) {
            throw new IllegalStateException("event sink writer failed: " + f, f);
        }
    }

    /**
     * Worker id to writer: an open-addressing table read without a lock (a slot's writer + 1 is
     * published with a release store after its key), written under the lock when a new id comes;
     * growing publishes a new table, and a reader that misses an id in an old one looks again under
     * the lock.
     */
    private static final class Assignments {
        private record Table(long[] keys, AtomicIntegerArray lanes, int mask) {
            Table(int capacity) {
                this(new long[capacity], new AtomicIntegerArray(capacity), capacity - 1);
            }
        }

        private final int[] workersOf;
        private volatile Table table = new Table(64);
        private int size; // under the lock

        Assignments(int writers) {
            this.workersOf = new int[writers];
        }

        int laneOf(long workerId) {
            int lane = find(table, workerId);
            return lane >= 0 ? lane : assign(workerId);
        }

        private synchronized int assign(long workerId) {
            int lane = find(table, workerId);
            if (lane >= 0) {
                return lane;
            }
            lane = 0;
            for (int i = 1; i < workersOf.length; i++) {
                if (workersOf[i] < workersOf[lane]) {
                    lane = i;
                }
            }
            workersOf[lane]++;
            Table t = table;
            if (2 * (++size) > t.mask + 1) {
                Table bigger = new Table(2 * (t.mask + 1));
                for (int i = 0; i <= t.mask; i++) {
                    int v = t.lanes.get(i);
                    if (v != 0) {
                        insert(bigger, t.keys[i], v - 1);
                    }
                }
                table = t = bigger;
            }
            insert(t, workerId, lane);
            return lane;
        }

        private static int home(long workerId, int mask) {
            long h = workerId * 0x9E3779B97F4A7C15L;
            return (int) (h ^ (h >>> 32)) & mask;
        }

        private static int find(Table t, long workerId) {
            for (int i = home(workerId, t.mask); ; i = (i + 1) & t.mask) {
                int v = t.lanes.getAcquire(i);
                if (v == 0) {
                    return -1;
                }
                if (t.keys[i] == workerId) {
                    return v - 1;
                }
            }
        }

        private static void insert(Table t, long workerId, int lane) {
            int i = home(workerId, t.mask);
            while (t.lanes.get(i) != 0) {
                i = (i + 1) & t.mask;
            }
            t.keys[i] = workerId;
            t.lanes.setRelease(i, lane + 1);
        }
    }

    /** One writer: a bounded MPSC ring (per-cell sequence numbers) and its thread. */
    private final class Lane implements Runnable {
        private final AtomicReferenceArray<KvEvent> cells = new AtomicReferenceArray<>(QUEUE_CAPACITY);
        private final AtomicLongArray seq = new AtomicLongArray(QUEUE_CAPACITY);
        private final AtomicLongArray tail = new AtomicLongArray(16); // [8]: padded counter
        private final AtomicInteger sleeping = new AtomicInteger();
        private long head; // consumer only
        private volatile long applied; // written by the consumer only
        final Thread thread;

        Lane(int i) {
            for (int c = 0; c < QUEUE_CAPACITY; c++) {
                seq.set(c, c);
            }
            thread = new Thread(this, "kvprefix-writer-" + i);
            thread.setDaemon(true);
        }

        void put(KvEvent e) {
            int spins = 0;
            while (true) {
                long pos = tail.get(8);
                int cell = (int) (pos & (QUEUE_CAPACITY - 1));
                long s = seq.get(cell);
                if (s == pos) {
                    if (tail.compareAndSet(8, pos, pos + 1)) {
                        cells.setPlain(cell, e);
                        seq.setRelease(cell, pos + 1);
                        if (sleeping.get() != 0) {
                            LockSupport.unpark(thread);
                        }
                        return;
                    }
                } else if (s < pos) {
                    // full: wait for the writer
                    checkState();
                    if (++spins < 100) {
                        Thread.onSpinWait();
                    } else {
                        LockSupport.parkNanos(10_000);
                    }
                }
            }
        }

        @Override
        public void run() {
            int idle = 0;
            while (true) {
                int cell = (int) (head & (QUEUE_CAPACITY - 1));
                if (seq.getAcquire(cell) == head + 1) {
                    KvEvent e = cells.getPlain(cell);
                    cells.setPlain(cell, null);
                    seq.setRelease(cell, head + QUEUE_CAPACITY);
                    head++;
                    idle = 0;
                    try {
                        EventStatus s = index.apply(e);
                        if (listener != null) {
                            listener.onStatus(e, s);
                        }
                    } catch (Throwable t) {
                        failure = t;
                        applied = applied + 1;
                        return;
                    }
                    applied = applied + 1;
                    continue;
                }
                if (closed) {
                    return;
                }
                if (++idle < 200) {
                    Thread.onSpinWait();
                } else {
                    sleeping.set(1);
                    if (seq.getAcquire(cell) != head + 1 && !closed) {
                        LockSupport.parkNanos(1_000_000);
                    }
                    sleeping.set(0);
                }
            }
        }
    }
}
