package io.kvprefix.nats;

import io.kvprefix.PrefixIndex;
import io.kvprefix.nats.internal.DynamoCore;
import io.nats.client.Connection;
import io.nats.client.ConsumeOptions;
import io.nats.client.Dispatcher;
import io.nats.client.JetStreamApiException;
import io.nats.client.MessageConsumer;
import io.nats.client.OrderedConsumerContext;
import io.nats.client.api.DeliverPolicy;
import io.nats.client.api.OrderedConsumerConfiguration;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * Feeds a {@link PrefixIndex} from a running NVIDIA Dynamo deployment's KV events on NATS, read-only
 * (it never publishes into Dynamo's subjects): the JetStream stream of Dynamo's durable mode, read
 * with an ordered (non-durable) consumer from the stream's start, or the event plane's core
 * subjects, live (docs/ENGINES.md section 4.1).
 *
 * <pre>{@code
 * try (DynamoSource s = DynamoSource.builder(index, connection, "dynamo", "backend").build()) {
 *     ...                                   // route with index.match(...) meanwhile
 * }
 * }</pre>
 *
 * <p>Thread-safety: every public method may be called from any thread; jnats' dispatcher thread
 * applies the messages, one at a time.
 */
public final class DynamoSource implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("io.kvprefix.nats");

    /** Where Dynamo's routers read KV events (docs/ENGINES.md section 4.1). */
    public enum Mode {
        /** The JetStream stream of {@code --router-durable-kv-events}: one JSON RouterEvent per message. */
        DURABLE,
        /** The event plane on core NATS: a named-MessagePack envelope around each RouterEvent. */
        EVENT_PLANE
    }

    private final Mode mode;
    private final Connection connection;
    private final String source;
    private final DynamoCore core;
    private final Dispatcher dispatcher;
    private final MessageConsumer consumer;

    private DynamoSource(Builder b) throws IOException, java.util.concurrent.TimeoutException, InterruptedException {
        this.mode = b.mode;
        this.connection = b.connection;
        this.core = new DynamoCore(b.index);
        if (mode == Mode.DURABLE) {
            this.source = b.stream != null ? b.stream : streamName(b.namespace, b.component);
            this.dispatcher = null;
            this.consumer = consume(b.connection, source, core);
            LOG.log(
                    System.Logger.Level.INFO,
                    "kvprefix dynamo: reading stream " + source
                            + " from its start (bootstrap stream-start; Dynamo's radix snapshot is not read)");
        } else {
            List<String> subjects = List.of(
                    subject(b.namespace, b.component, "kv-events"), subject(b.namespace, b.component, "kv_events"));
            this.source = subjects.get(0);
            this.consumer = null;
            this.dispatcher = b.connection.createDispatcher(m -> core.onCoreMessage(m.getData()));
            subjects.forEach(dispatcher::subscribe);
            b.connection.flush(java.time.Duration.ofSeconds(10)); // the server has the subscriptions
            LOG.log(
                    System.Logger.Level.INFO,
                    "kvprefix dynamo: subscribed to " + subjects
                            + " (bootstrap live: only events published from now on)");
        }
    }

    private static MessageConsumer consume(Connection connection, String stream, DynamoCore core) throws IOException {
        try {
            connection.jetStreamManagement().getStreamInfo(stream);
        } catch (JetStreamApiException e) {
            throw new IOException("no JetStream stream " + stream + " (" + e.getErrorDescription() + "): Dynamo "
                    + "creates it only with durable KV events (--router-durable-kv-events); use the event-plane "
                    + "mode for the default deployment, or --stream for a stream named otherwise");
        }
        try {
            OrderedConsumerContext occ = connection
                    .getStreamContext(stream)
                    .createOrderedConsumer(new OrderedConsumerConfiguration().deliverPolicy(DeliverPolicy.All));
            return occ.consume(
                    ConsumeOptions.builder().expiresIn(2000).build(),
                    m -> core.onStreamMessage(m.getData(), m.metaData().streamSequence()));
        } catch (JetStreamApiException e) {
            throw new IOException("cannot consume stream " + stream + ": " + e.getMessage(), e);
        }
    }

    /**
     * Dynamo's stream name for a component's KV events: the subject
     * {@code namespace.NS.component.C.kv-events} slugged (lower case; anything but {@code a-z 0-9 _ -}
     * becomes {@code _}; leading {@code _} dropped) with {@code _} then turned into {@code -}.
     */
    public static String streamName(String namespace, String component) {
        String subject = "namespace." + namespace + ".component." + component + ".kv-events";
        StringBuilder sb = new StringBuilder();
        for (char ch : subject.toLowerCase(Locale.ROOT).toCharArray()) {
            boolean keep = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_';
            sb.append(keep ? ch : '_');
        }
        int start = 0;
        while (start < sb.length() && sb.charAt(start) == '_') {
            start++;
        }
        return sb.substring(start).replace('_', '-');
    }

    /**
     * Dynamo's event-plane subject of a component's topic: {@code namespace.NS.component.C.TOPIC},
     * each segment percent-encoded ({@code %XX}, upper-case hex of its UTF-8 bytes) outside
     * {@code A-Z a-z 0-9 _ -}.
     */
    public static String subject(String namespace, String component, String topic) {
        return "namespace." + segment(namespace) + ".component." + segment(component) + "." + segment(topic);
    }

    private static String segment(String s) {
        StringBuilder sb = new StringBuilder();
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            char ch = (char) (b & 0xff);
            boolean keep = (ch >= 'a' && ch <= 'z')
                    || (ch >= 'A' && ch <= 'Z')
                    || (ch >= '0' && ch <= '9')
                    || ch == '-'
                    || ch == '_';
            sb.append(keep ? String.valueOf(ch) : String.format(Locale.ROOT, "%%%02X", b & 0xff));
        }
        return sb.toString();
    }

    /** The mode read. */
    public Mode mode() {
        return mode;
    }

    /** The stream (durable) or subject (event plane) read. */
    public String source() {
        return source;
    }

    /** The counters now. */
    public DynamoStats stats() {
        return new DynamoStats(
                mode == Mode.DURABLE ? "durable" : "event-plane",
                source,
                mode == Mode.DURABLE ? "stream-start" : "live",
                core);
    }

    /** Stops reading; does not close the connection or the index. */
    @Override
    public void close() {
        if (consumer != null) {
            try {
                consumer.stop();
                consumer.close();
            } catch (Exception e) {
                LOG.log(System.Logger.Level.DEBUG, "kvprefix dynamo: closing the consumer: " + e);
            }
        }
        if (dispatcher != null) {
            connection.closeDispatcher(dispatcher);
        }
    }

    /** A builder for a source reading component {@code component} of namespace {@code namespace}. */
    public static Builder builder(PrefixIndex index, Connection connection, String namespace, String component) {
        return new Builder(index, connection, namespace, component);
    }

    /**
     * Options of a {@link DynamoSource}.
     *
     * <p>Thread-safety: not thread-safe; configure on one thread, then {@link #build()}.
     */
    public static final class Builder {
        private final PrefixIndex index;
        private final Connection connection;
        private final String namespace;
        private final String component;
        private Mode mode = Mode.EVENT_PLANE;
        private String stream;

        private Builder(PrefixIndex index, Connection connection, String namespace, String component) {
            this.index = Objects.requireNonNull(index, "index");
            this.connection = Objects.requireNonNull(connection, "connection");
            this.namespace = nonEmpty(namespace, "namespace");
            this.component = nonEmpty(component, "component");
        }

        private static String nonEmpty(String s, String what) {
            if (s == null || s.isEmpty()) {
                throw new IllegalArgumentException("the Dynamo " + what + " is empty");
            }
            return s;
        }

        /** Which of Dynamo's transports to read (default: the event plane, Dynamo's default). */
        public Builder mode(Mode mode) {
            this.mode = Objects.requireNonNull(mode, "mode");
            return this;
        }

        /** Durable mode: the stream's name, for releases that name it otherwise than {@link #streamName}. */
        public Builder stream(String stream) {
            this.stream = nonEmpty(stream, "stream");
            return this;
        }

        /** Subscribes; {@link IOException} if the durable mode's stream does not exist. */
        public DynamoSource build() throws IOException {
            try {
                return new DynamoSource(this);
            } catch (java.util.concurrent.TimeoutException | InterruptedException e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                throw new IOException("the NATS server did not confirm the subscriptions: " + e, e);
            }
        }
    }
}
