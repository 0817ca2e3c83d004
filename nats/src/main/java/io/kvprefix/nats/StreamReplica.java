package io.kvprefix.nats;

import io.kvprefix.PrefixIndex;
import io.kvprefix.nats.internal.EngineFeed;
import io.kvprefix.nats.internal.ReplicaCore;
import io.nats.client.Connection;
import io.nats.client.ConsumeOptions;
import io.nats.client.JetStreamApiException;
import io.nats.client.MessageConsumer;
import io.nats.client.OrderedConsumerContext;
import io.nats.client.StreamContext;
import io.nats.client.api.DeliverPolicy;
import io.nats.client.api.OrderedConsumerConfiguration;
import io.nats.client.api.StreamInfo;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A router replica fed by a {@link FleetStream}: applies the stream's messages, in stream order, to
 * its {@link PrefixIndex}, decoding each engine's batches as {@code kvprefix listen} does. Replicas
 * fed by one stream hold the same index once they have applied the same prefix of it.
 *
 * <pre>{@code
 * try (StreamReplica replica = StreamReplica.builder(index, natsConnection, FleetStream.defaults()).build()) {
 *     ...                                  // route with index.match(...) meanwhile
 * }
 * }</pre>
 *
 * <p><b>Reading</b>: an ordered consumer (ephemeral, server-side flow control and heartbeats,
 * recreated by jnats from the next sequence after a disconnection or a server restart) delivers
 * from the first message this replica does not hold. Each engine's records carry consecutive
 * numbers: duplicates are skipped. If the stream's retention has dropped messages the replica needed
 * (it started, or was away, longer than the stream keeps messages), it says so in a log line, clears
 * every engine's workers and goes on from the oldest message there is: a counted <em>resync</em>.
 * docs/SPEC.md section 9 states the rules.
 *
 * <p>Threads: jnats' dispatcher thread applies the messages (so never concurrently for one worker),
 * while any thread matches. {@link #close()} stops the consumer; it does not close the connection
 * or the index.
 *
 * <p>Thread-safety: every public method may be called from any thread.
 */
public final class StreamReplica implements AutoCloseable {
    private final Connection connection;
    private final FleetStream stream;
    private final ReplicaCore core;
    private final MessageConsumer consumer;
    private final long startedAt;
    private boolean closed;

    private StreamReplica(Builder b) throws IOException {
        this.connection = b.connection;
        this.stream = b.stream;
        this.core = new ReplicaCore(b.index);
        StreamInfo info = stream.ensure(connection);
        long first = info.getStreamState().getFirstSequence();
        long from = core.applied() + 1;
        if (info.getStreamState().getMsgCount() > 0 && first > from) {
            core.resync(from, first); // the oldest messages are gone already
            core.restoredUpTo(first - 1, List.of());
        }
        this.startedAt = System.nanoTime();
        try {
            StreamContext sc = connection.getStreamContext(stream.name());
            OrderedConsumerContext occ = sc.createOrderedConsumer(new OrderedConsumerConfiguration()
                    .deliverPolicy(DeliverPolicy.ByStartSequence)
                    .startSequence(core.applied() + 1));
            // Pull requests that expire every 2 s: heartbeats every second notice a lost server quickly.
            this.consumer = occ.consume(ConsumeOptions.builder().expiresIn(2000).build(), core::onMessage);
        } catch (JetStreamApiException e) {
            throw new IOException("cannot consume stream " + stream.name() + ": " + e.getMessage(), e);
        }
    }

    /** A builder for a replica that applies {@code stream}, read through {@code connection}, to {@code index}. */
    public static Builder builder(PrefixIndex index, Connection connection, FleetStream stream) {
        return new Builder(index, connection, stream);
    }

    /** The stream sequence of the last message applied (0 if none). */
    public long appliedSequence() {
        return core.applied();
    }

    /**
     * A snapshot of the replica's counters, with the stream's last sequence as the server reports it
     * now (-1 if it cannot be asked).
     */
    public ReplicaStats stats() {
        long last = -1;
        try {
            last = connection
                    .jetStreamManagement()
                    .getStreamInfo(stream.name())
                    .getStreamState()
                    .getLastSequence();
        } catch (IOException | JetStreamApiException | RuntimeException e) {
            // the server is away: reported as -1
        }
        List<ReplicaStats.EngineStats> engines = new ArrayList<>();
        long[] c;
        core.lock().lock();
        try {
            for (EngineFeed f : core.feeds()) {
                engines.add(
                        new ReplicaStats.EngineStats(f.engine(), f.subject(), f.nextRec(), f.lastSeq(), f.counters()));
            }
            c = core.counters();
        } finally {
            core.lock().unlock();
        }
        var lags = core.lags();
        return new ReplicaStats(
                stream.name(),
                core.applied(),
                last,
                core.pending(),
                c[0],
                c[1],
                c[2],
                core.lastLagMicros(),
                lags.quantile(0.5),
                lags.quantile(0.99),
                lags.max(),
                lags.count(),
                (System.nanoTime() - startedAt) / 1_000_000,
                engines);
    }

    /** Stops consuming (the index keeps what was applied). Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            consumer.stop();
            consumer.close();
        } catch (Exception e) {
            System.getLogger("io.kvprefix.nats")
                    .log(System.Logger.Level.DEBUG, "kvprefix replica: closing the consumer: " + e);
        }
        core.lock().lock(); // a message being applied finishes first
        core.lock().unlock();
    }

    /**
     * Builds a {@link StreamReplica}; {@link #build()} checks (or creates) the stream and starts consuming.
     *
     * <p>Thread-safety: not thread-safe; use one builder per thread.
     */
    public static final class Builder {
        private final PrefixIndex index;
        private final Connection connection;
        private final FleetStream stream;

        private Builder(PrefixIndex index, Connection connection, FleetStream stream) {
            this.index = Objects.requireNonNull(index, "index");
            this.connection = Objects.requireNonNull(connection, "connection");
            this.stream = Objects.requireNonNull(stream, "stream");
        }

        /**
         * Checks (or creates) the stream and starts consuming it from its first message.
         *
         * @throws IOException if the server cannot be reached or the stream cannot be consumed
         */
        public StreamReplica build() throws IOException {
            return new StreamReplica(this);
        }
    }
}
