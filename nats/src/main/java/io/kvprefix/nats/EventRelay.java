package io.kvprefix.nats;

import io.kvprefix.nats.internal.Frames;
import io.kvprefix.nats.internal.Outbox;
import io.kvprefix.nats.internal.RelayLoop;
import io.kvprefix.zmq.BatchTap;
import io.kvprefix.zmq.EngineEndpoint;
import io.kvprefix.zmq.KvEventSubscriber;
import io.kvprefix.zmq.ResumePoint;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.api.MessageInfo;
import io.nats.client.api.StreamInfo;
import io.nats.client.impl.Headers;
import java.io.IOException;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Relays engines' KV-event batches to a {@link FleetStream}: subscribes to each engine exactly as
 * {@code kvprefix listen} does (a {@link KvEventSubscriber}: sequence tracking, gaps filled by the
 * engine's replay socket, clears where a range is lost for good) and publishes every engine's
 * batches, in sequence order and undecoded, to the engine's subject. One frame in flight per engine,
 * resent with the same message id until acknowledged, so the stream holds each engine's batches in
 * order, once, with no hole; a restarted relay takes each engine up after the last batch in the
 * stream ({@link ResumePoint}). The rules are docs/FLEET.md section 3; the design is this package's.
 *
 * <pre>{@code
 * try (EventRelay relay = EventRelay.builder(natsConnection, FleetStream.defaults()).build()) {
 *     relay.addEngine(EngineEndpoint.parse("tcp://10.0.0.5:5557=7,replay=tcp://10.0.0.5:5558"));
 * }
 * }</pre>
 *
 * <p>Thread-safety: every public method may be called from any thread.
 */
public final class EventRelay implements AutoCloseable {
    private static final AtomicInteger SERIAL = new AtomicInteger();
    private static final System.Logger LOG = System.getLogger("io.kvprefix.nats");

    private final Connection connection;
    private final FleetStream stream;
    private final Duration drainTimeout;
    private final int maxQueued;
    private final KvEventSubscriber subscriber;
    private final RelayLoop loop;
    private final Thread thread;
    private final Map<String, Outbox> outboxes = new ConcurrentHashMap<>();
    private final List<Outbox> order = new ArrayList<>();
    private final ScheduledExecutorService watch;
    private volatile ZonedDateTime created;
    private volatile boolean goneWarned;
    private long streamResets;
    private boolean closed;

    private EventRelay(Builder b) throws IOException {
        this.connection = b.connection;
        this.stream = b.stream;
        this.drainTimeout = b.drainTimeout;
        this.maxQueued = b.maxQueuedRecords;
        this.created = stream.ensure(connection).getCreateTime();
        this.loop = new RelayLoop(connection.jetStream(), stream.name(), b.ackTimeout.toMillis());
        this.thread = new Thread(loop, "kvprefix-nats-relay-" + SERIAL.incrementAndGet());
        thread.setDaemon(true);
        thread.start();
        this.subscriber = KvEventSubscriber.builder(new Tap())
                .replayTimeout(b.replayTimeout)
                .build();
        this.watch = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "kvprefix-nats-relay-watch");
            t.setDaemon(true);
            return t;
        });
        long every = b.streamCheck.toMillis();
        watch.scheduleWithFixedDelay(this::checkStream, every, every, TimeUnit.MILLISECONDS);
    }

    /**
     * The watch (docs/FLEET.md section 3): a stream that is gone is created again, and a stream made
     * anew (another creation time: deleted and re-created, or a server restarted without its store) is
     * filled again from the engines.
     */
    private void checkStream() {
        try {
            StreamInfo info;
            try {
                info = connection.jetStreamManagement().getStreamInfo(stream.name());
            } catch (JetStreamApiException e) {
                if (e.getApiErrorCode() != 10059) { // anything but "stream not found"
                    return;
                }
                if (!goneWarned) {
                    goneWarned = true;
                    LOG.log(
                            System.Logger.Level.WARNING,
                            "kvprefix relay: stream " + stream.name()
                                    + " is gone; creating it again and re-publishing what the engines still hold");
                }
                loop.pause(true); // nothing of the old numbering may land in the new stream
                info = stream.ensure(connection);
            }
            goneWarned = false;
            if (!info.getCreateTime().equals(created)) {
                created = info.getCreateTime();
                refill();
            }
        } catch (IOException | RuntimeException e) {
            // the server is away: the next check tries again
        } finally {
            loop.pause(false);
        }
    }

    /** Publishes every engine afresh to a new stream: what its replay socket still holds, from its start. */
    private synchronized void refill() {
        if (closed) {
            return;
        }
        streamResets++;
        LOG.log(
                System.Logger.Level.WARNING,
                "kvprefix relay: stream " + stream.name() + " was made anew (created " + created
                        + "); asking every engine to replay from its start");
        for (Outbox o : order) {
            subscriber.removeEngine(o.engine().endpoint());
            o.restart();
            subscriber.addEngine(o.engine());
        }
        loop.poke();
    }

    /** A builder for a relay publishing to {@code stream} through {@code connection}. */
    public static Builder builder(Connection connection, FleetStream stream) {
        return new Builder(connection, stream);
    }

    /**
     * Starts relaying {@code engine}: finds where its subject ends in the stream and takes the
     * engine's stream up after the last batch published there, or from its start.
     *
     * @throws IllegalArgumentException if the engine is relayed already, or its endpoint cannot be used
     * @throws IOException if the stream cannot be read
     */
    public synchronized void addEngine(EngineEndpoint engine) throws IOException {
        Objects.requireNonNull(engine, "engine");
        if (closed) {
            throw new IllegalStateException("relay closed");
        }
        if (outboxes.containsKey(engine.endpoint())) {
            throw new IllegalArgumentException("engine " + engine.endpoint() + " is relayed already");
        }
        String subject = stream.subjectOf(engine);
        long nextRec = 0;
        ResumePoint from = null;
        MessageInfo last = lastMessage(subject);
        if (last != null) {
            Headers h = last.getHeaders();
            nextRec = Long.parseLong(h.getFirst(Frames.LAST_REC)) + 1;
            String seq = h.getFirst(Frames.LAST_SEQ);
            from = seq == null ? null : ResumePoint.after(Long.parseLong(seq));
            LOG.log(
                    System.Logger.Level.INFO,
                    "kvprefix relay: " + engine.endpoint() + " resumes at record " + nextRec
                            + (from == null ? " from the engine's start" : " after batch " + from.lastSeq()));
        }
        Outbox o = new Outbox(engine, subject, nextRec, maxQueued, loop::poke);
        outboxes.put(engine.endpoint(), o);
        order.add(o);
        loop.add(o);
        if (from == null) {
            subscriber.addEngine(engine);
        } else {
            subscriber.addEngine(engine, from);
        }
    }

    private MessageInfo lastMessage(String subject) throws IOException {
        try {
            return connection.jetStreamManagement().getLastMessage(stream.name(), subject);
        } catch (JetStreamApiException e) {
            if (e.getApiErrorCode() == 10037) { // no message found
                return null;
            }
            throw new IOException("reading the last message of " + subject + ": " + e.getMessage(), e);
        }
    }

    /** A snapshot of the relay's counters and of its subscriber's. */
    public synchronized RelayStats stats() {
        List<RelayStats.EngineStats> engines = new ArrayList<>();
        for (Outbox o : order) {
            long[] c = o.counters();
            engines.add(new RelayStats.EngineStats(
                    o.engine(), o.subject(), c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], o.lastError()));
        }
        return new RelayStats(stream.name(), streamResets, engines, subscriber.stats());
    }

    /** Whether every record received so far has been acknowledged by the stream. */
    public boolean drained() {
        return outboxes.values().stream().allMatch(Outbox::idle);
    }

    /**
     * Stops subscribing, waits (up to the drain timeout) until everything received is in the
     * stream, and stops publishing. Idempotent.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        watch.shutdownNow();
        subscriber.close();
        long deadline = System.nanoTime() + drainTimeout.toNanos();
        while (!drained() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        if (!drained()) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "kvprefix relay: closing with records not yet in the stream (a restarted relay fetches them again)");
        }
        loop.stop();
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Queues each engine's batches and clears on its outbox. */
    private final class Tap implements BatchTap {
        @Override
        public void batch(EngineEndpoint engine, long seq, byte[] payload) {
            put(engine, new Frames.Record(seq, payload));
        }

        @Override
        public void cleared(EngineEndpoint engine) {
            put(engine, Frames.Record.clear());
        }

        private void put(EngineEndpoint engine, Frames.Record r) {
            Outbox o = outboxes.get(engine.endpoint());
            try {
                o.add(r);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // closing: a restarted relay fetches it again
            }
        }
    }

    /**
     * Builds an {@link EventRelay}; {@link #build()} checks (or creates) the stream and starts it.
     *
     * <p>Thread-safety: not thread-safe; use one builder per thread.
     */
    public static final class Builder {
        private final Connection connection;
        private final FleetStream stream;
        private Duration ackTimeout = Duration.ofSeconds(2);
        private Duration replayTimeout = Duration.ofSeconds(3);
        private Duration drainTimeout = Duration.ofSeconds(10);
        private int maxQueuedRecords = 100_000;
        private Duration streamCheck = Duration.ofSeconds(1);

        private Builder(Connection connection, FleetStream stream) {
            this.connection = Objects.requireNonNull(connection, "connection");
            this.stream = Objects.requireNonNull(stream, "stream");
        }

        /** How long a frame waits for JetStream's ack before it is sent again (default 2 s). */
        public Builder ackTimeout(Duration d) {
            ackTimeout = positive(d, "ackTimeout");
            return this;
        }

        /** The subscriber's replay timeout ({@link KvEventSubscriber.Builder#replayTimeout}, default 3 s). */
        public Builder replayTimeout(Duration d) {
            replayTimeout = positive(d, "replayTimeout");
            return this;
        }

        /** How long {@link EventRelay#close()} waits for queued records to land (default 10 s). */
        public Builder drainTimeout(Duration d) {
            drainTimeout = positive(d, "drainTimeout");
            return this;
        }

        /** How often the stream is checked for being gone or made anew (default 1 s; docs/FLEET.md section 3). */
        public Builder streamCheck(Duration d) {
            streamCheck = positive(d, "streamCheck");
            return this;
        }

        /** Records one engine may queue while the server is away before the subscriber waits (default 100,000). */
        public Builder maxQueuedRecords(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("maxQueuedRecords must be >= 1, got " + n);
            }
            maxQueuedRecords = n;
            return this;
        }

        /**
         * Checks (or creates) the stream and starts the relay.
         *
         * @throws IOException if the server cannot be reached
         * @throws IllegalStateException if the stream exists with other subjects, or there is no JetStream
         */
        public EventRelay build() throws IOException {
            return new EventRelay(this);
        }

        private static Duration positive(Duration d, String what) {
            Objects.requireNonNull(d, what);
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(what + " must be positive, got " + d);
            }
            return d;
        }
    }
}
