package io.kvprefix.zmq;

import io.kvprefix.PrefixIndex;
import io.kvprefix.zmq.internal.EngineCounters;
import io.kvprefix.zmq.internal.EnginePositions;
import io.kvprefix.zmq.internal.EngineSession;
import io.kvprefix.zmq.internal.SubscriberLoop;
import io.kvprefix.zmq.internal.SubscriberSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Feeds a {@link PrefixIndex} from real engines: subscribes to each engine's vLLM / SGLang
 * KV-event publisher over ZMQ, decodes its batches with the {@link EngineEventDecoder} of the
 * engine's {@link EngineEndpoint#format() format} and applies the events in sequence order,
 * recovering lost batches through the engine's replay socket and finding restarted engines. The
 * rules for an engine's stream are docs/LISTENER.md section 3; resuming after a snapshot
 * ({@link #snapshot}, {@link Builder#resumeFrom}) section 4; engines added and removed at run time,
 * the feed without an index ({@link #builder(BatchTap)}) and the threads section 7.
 *
 * <pre>{@code
 * try (KvEventSubscriber sub = KvEventSubscriber.builder(index).build()) {
 *     sub.addEngine(EngineEndpoint.parse("tcp://10.0.0.5:5557=7,replay=tcp://10.0.0.5:5558"));
 *     ...                                  // route with index.match(...) meanwhile
 * }
 * }</pre>
 *
 * <p>Thread-safety: every public method may be called from any thread.
 */
public final class KvEventSubscriber implements AutoCloseable {
    private static final AtomicInteger SERIAL = new AtomicInteger();
    private static final long COMMAND_TIMEOUT_SECONDS = 10;

    private static final long SNAPSHOT_TIMEOUT_SECONDS = 600;
    private static final System.Logger LOG = System.getLogger("io.kvprefix.zmq");

    /** The index fed, or null for a subscriber that hands its batches to {@link #tap}. */
    private final PrefixIndex index;

    private final BatchTap tap;
    private final SubscriberSettings settings;
    private final Map<String, EnginePositions.Position> resume;
    private final SubscriberLoop loop;
    private final Thread thread;
    private final Map<String, EngineSession> sessions = new LinkedHashMap<>();
    private final long[] retired = new long[EngineCounters.SIZE];
    private boolean closed;

    private KvEventSubscriber(Builder b) {
        this.index = b.index;
        List<String> complaints = new ArrayList<>();
        this.resume = EnginePositions.decode(b.resumeFrom, complaints);
        complaints.forEach(c -> LOG.log(System.Logger.Level.WARNING, c));
        this.tap = b.tap;
        this.settings = new SubscriberSettings(
                b.replayTimeout.toNanos(),
                b.maxPendingBatches,
                (int) b.heartbeat.toMillis(),
                (int) b.reconnectMax.toMillis(),
                b.receiveHighWaterMark,
                (int) b.handshakeTimeout.toMillis());
        String name = "kvprefix-zmq-subscriber-" + SERIAL.incrementAndGet();
        this.loop = new SubscriberLoop(name + "-");
        this.thread = new Thread(loop, name);
        thread.setDaemon(true);
        thread.start();
    }

    /** A builder for a subscriber that applies events to {@code index}. */
    public static Builder builder(PrefixIndex index) {
        return new Builder(Objects.requireNonNull(index, "index"), null);
    }

    /**
     * A builder for a subscriber that feeds no index: it hands every engine's batches, in the order a
     * subscriber applies them, to {@code tap} (and tells it when the engine's workers must be cleared),
     * undecoded. Its stats count batches, gaps, replays and resyncs; no events.
     */
    public static Builder builder(BatchTap tap) {
        return new Builder(null, Objects.requireNonNull(tap, "tap"));
    }

    /**
     * Subscribes to {@code engine}; returns once its sockets are connecting (ZMQ connects in the
     * background and retries until the engine is there).
     *
     * @throws IllegalArgumentException if an engine with the same endpoint is subscribed already, or
     *         the endpoint cannot be used
     * @throws IllegalStateException if the subscriber is closed
     */
    public synchronized void addEngine(EngineEndpoint engine) {
        add(engine, null);
    }

    /**
     * Subscribes to {@code engine} whose stream up to {@code from} was applied before (by an earlier
     * process whose state was kept, or restored from a snapshot): its replay socket is asked at once
     * for everything after it, checked against the batch at {@code from} if its hash is known (see
     * {@link ResumePoint}). Without a replay endpoint the live stream must go on at
     * {@code from.nextSeq()}, or the engine's workers are cleared (a resync).
     *
     * @throws IllegalArgumentException as {@link #addEngine(EngineEndpoint)}
     * @throws IllegalStateException if the subscriber is closed
     */
    public synchronized void addEngine(EngineEndpoint engine, ResumePoint from) {
        add(engine, Objects.requireNonNull(from, "from"));
    }

    private void add(EngineEndpoint engine, ResumePoint from) {
        Objects.requireNonNull(engine, "engine");
        checkOpen();
        if (sessions.containsKey(engine.endpoint())) {
            throw new IllegalArgumentException("engine " + engine.endpoint() + " is subscribed already");
        }
        EnginePositions.Position p = resume.get(engine.endpoint());
        boolean restored = from == null && p != null && p.workerId() == engine.workerId();
        ResumePoint point = restored ? new ResumePoint(p.lastApplied(), p.lastHash()) : from;
        EngineSession s = new EngineSession(engine, index, tap, settings, point);
        if (restored) {
            s.fedBefore(p.workersFed());
        }
        await(loop.submit(ctx -> {
            ctx.add(s);
            return null;
        }));
        sessions.put(engine.endpoint(), s);
    }

    /**
     * Unsubscribes from the engine at {@code endpoint} and makes the index forget it (see the class
     * comment); false if no engine is subscribed there.
     */
    public synchronized boolean removeEngine(String endpoint) {
        checkOpen();
        EngineSession s = sessions.get(endpoint);
        if (s == null) {
            return false;
        }
        await(loop.submit(ctx -> {
            ctx.remove(s);
            return null;
        }));
        sessions.remove(endpoint);
        long[] c = s.counters().snapshot();
        for (int i = 0; i < c.length; i++) {
            retired[i] += c[i];
        }
        return true;
    }

    /**
     * Saves the index to the snapshot {@code file} (docs/SNAPSHOT.md) with every engine's position
     * in its metadata, on the I/O thread: batches are not applied meanwhile (they wait in the
     * sockets), so the positions and the index agree. See the class comment.
     *
     * @throws io.kvprefix.SnapshotException if the file cannot be written (the previous one is kept)
     * @throws IllegalStateException if the subscriber is closed
     */
    public void snapshot(Path file) {
        Objects.requireNonNull(file, "file");
        synchronized (this) {
            checkOpen();
        }
        if (index == null) {
            throw new IllegalStateException("a subscriber that feeds a BatchTap has no index to save");
        }
        await(
                loop.submit(ctx -> {
                    index.snapshot(file, EnginePositions.encode(ctx.sessions()));
                    return null;
                }),
                SNAPSHOT_TIMEOUT_SECONDS);
    }

    /** The engines subscribed to, in the order they were added. */
    public synchronized List<EngineEndpoint> engines() {
        List<EngineEndpoint> out = new ArrayList<>(sessions.size());
        for (EngineSession s : sessions.values()) {
            out.add(s.engine());
        }
        return List.copyOf(out);
    }

    /**
     * Where the index's state of the engine at {@code endpoint} ends now: the last batch applied and its
     * hash (empty if none was applied, or no such engine). Batches are applied on the I/O thread while
     * this is read; a point consistent with a copy of the index needs the engine's batches held still.
     */
    public synchronized Optional<ResumePoint> resumePoint(String endpoint) {
        EngineSession s = sessions.get(endpoint);
        return s == null ? Optional.empty() : s.resumePoint();
    }

    /** A snapshot of every engine's counters and state (cheap; may be called often). */
    public synchronized SubscriberStats stats() {
        List<SubscriberStats.EngineStats> engines = new ArrayList<>(sessions.size());
        for (EngineSession s : sessions.values()) {
            engines.add(new SubscriberStats.EngineStats(
                    s.engine(),
                    s.state(),
                    s.lastSeq(),
                    s.lagMillis(),
                    s.pending(),
                    new SubscriberStats.Counts(s.counters().snapshot())));
        }
        return new SubscriberStats(engines, new SubscriberStats.Counts(retired));
    }

    /**
     * Stops the I/O thread and closes every socket and ZMQ's threads, waiting for them (a few
     * seconds at most). The index keeps what was applied, and {@link #stats()} and
     * {@link #resumePoint} go on answering with the final values: nothing is applied after close.
     * Idempotent.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        loop.stop();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(COMMAND_TIMEOUT_SECONDS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            System.getLogger("io.kvprefix.zmq")
                    .log(
                            System.Logger.Level.WARNING,
                            thread.getName() + " did not stop within " + COMMAND_TIMEOUT_SECONDS + " s");
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("subscriber closed");
        }
    }

    private static void await(CompletableFuture<?> f) {
        await(f, COMMAND_TIMEOUT_SECONDS);
    }

    private static void await(CompletableFuture<?> f, long timeoutSeconds) {
        try {
            f.get(timeoutSeconds, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException(e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException(
                    "the subscriber's I/O thread did not answer within " + timeoutSeconds + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /**
     * Builds a {@link KvEventSubscriber}; {@link #build()} starts it.
     *
     * <p>Thread-safety: not thread-safe; use one builder per thread.
     */
    public static final class Builder {
        private final PrefixIndex index;
        private final BatchTap tap;
        private Duration replayTimeout = Duration.ofSeconds(3);
        private int maxPendingBatches = 10_000;
        private Duration heartbeat = Duration.ofSeconds(5);
        private Duration reconnectMax = Duration.ofSeconds(5);
        private int receiveHighWaterMark = 100_000;
        private Duration handshakeTimeout = Duration.ofSeconds(1);
        private Map<String, String> resumeFrom = Map.of();

        private Builder(PrefixIndex index, BatchTap tap) {
            this.index = index;
            this.tap = tap;
        }

        /**
         * How long a replay request may go without its first answer before it is asked again (default
         * 3 s; keep it above {@link #handshakeTimeout}, since a request sent on a connection that is being
         * re-established waits for it). A tenth of it (50 to 500 ms) is how long answers may pause before
         * the rest is taken as dropped. A range is given up after
         * {@value io.kvprefix.zmq.internal.EngineSync#MAX_FUTILE_ATTEMPTS} requests in a row that
         * deliver nothing.
         */
        public Builder replayTimeout(Duration d) {
            replayTimeout = positive(d, "replayTimeout");
            return this;
        }

        /** How many live batches may wait behind a replay before it is given up (default 10,000). */
        public Builder maxPendingBatches(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("maxPendingBatches must be >= 1, got " + n);
            }
            maxPendingBatches = n;
            return this;
        }

        /** ZMTP heartbeat interval, to notice dead connections (default 5 s; the timeout is 3 intervals; zero turns it off). */
        public Builder heartbeat(Duration d) {
            Objects.requireNonNull(d, "heartbeat");
            if (d.isNegative() || d.toMillis() > Integer.MAX_VALUE / 3) {
                throw new IllegalArgumentException("heartbeat out of range: " + d);
            }
            heartbeat = d;
            return this;
        }

        /** The longest wait between reconnection attempts (default 5 s; ZMQ starts at 100 ms and backs off). */
        public Builder reconnectMax(Duration d) {
            reconnectMax = positive(d, "reconnectMax");
            return this;
        }

        /** Messages a live socket may queue before ZMQ drops (default 100,000; a drop is a gap). */
        public Builder receiveHighWaterMark(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("receiveHighWaterMark must be >= 1, got " + n);
            }
            receiveHighWaterMark = n;
            return this;
        }

        /**
         * How long a new connection may take to complete its ZMTP handshake before it is dropped and
         * retried (default 1 s; ZMQ's own default is 30 s). JeroMQ 0.6.0 occasionally never starts the
         * handshake of a fresh TCP connection (jeromq PR #1022); this bounds how long such an engine
         * stays silent.
         */
        public Builder handshakeTimeout(Duration d) {
            handshakeTimeout = positive(d, "handshakeTimeout");
            return this;
        }

        /**
         * Goes on where a snapshot left off: {@code metadata} is a restored index's
         * {@link PrefixIndex#snapshotMetadata()}, saved by {@link KvEventSubscriber#snapshot}. Engines
         * added later at an endpoint (and with the worker id) found there continue after their last
         * applied batch; others start afresh. Entries that are not the subscriber's are ignored.
         */
        public Builder resumeFrom(Map<String, String> metadata) {
            resumeFrom = Map.copyOf(Objects.requireNonNull(metadata, "metadata"));
            return this;
        }

        /** Starts the subscriber (its I/O thread); add engines with {@link KvEventSubscriber#addEngine}. */
        public KvEventSubscriber build() {
            return new KvEventSubscriber(this);
        }

        private static Duration positive(Duration d, String what) {
            Objects.requireNonNull(d, what);
            if (d.isNegative() || d.isZero() || d.toMillis() > Integer.MAX_VALUE) {
                throw new IllegalArgumentException(what + " must be positive (and below 24 days), got " + d);
            }
            return d;
        }
    }
}
