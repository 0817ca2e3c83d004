package io.kvprefix.nats.testing;

import io.kvprefix.nats.DynamoSource;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.ThreadLocalRandom;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePacker;

/**
 * A stand-in for one NVIDIA Dynamo worker's KV-event publisher, publishing exactly Dynamo's
 * messages to a real nats-server (docs/ENGINES.md section 4), written from Dynamo's source at the
 * commits that section cites: in durable mode, one JSON {@code RouterEvent} per message (serde_json's
 * shape of {@code lib/kv-router/src/protocols.rs}) on {@code {stream}.queue} of the stream Dynamo's
 * {@code NatsQueue} creates (subjects {@code {stream}.*}, max age 1 h); on the event plane, the
 * named-MessagePack {@code EventEnvelope} of {@code lib/runtime/src/transports/event_plane} (a random
 * JSON-safe {@code publisher_id}, {@code sequence} from 0) around a named-MessagePack
 * {@code RouterEvent}, on {@code namespace.NS.component.C.kv-events}. Unsigned 64-bit values are
 * written as MessagePack {@code uint64} and as unsigned JSON numbers, as Rust writes a {@code u64}.
 *
 * <p>Thread-safety: not thread-safe; one test thread drives it.
 */
public final class DynamoWorker {
    /** Dynamo's {@code MAX_JSON_SAFE_PUBLISHER_ID}: 2^53 - 1. */
    private static final long JSON_SAFE = (1L << 53) - 1;

    private final Connection connection;
    private final String namespace;
    private final String component;
    private final long workerId;
    private final boolean durable;
    private long publisherId;
    private long sequence;
    private long eventId;

    /** A worker publishing for {@code workerId}, on the event plane or ({@code durable}) the JetStream stream. */
    public DynamoWorker(Connection connection, String namespace, String component, long workerId, boolean durable) {
        this.connection = connection;
        this.namespace = namespace;
        this.component = component;
        this.workerId = workerId;
        this.durable = durable;
        restart();
    }

    /** Creates the stream as Dynamo's {@code NatsQueue} does when a worker starts with durable KV events. */
    public void createStream() throws IOException {
        String stream = DynamoSource.streamName(namespace, component);
        try {
            connection
                    .jetStreamManagement()
                    .addStream(StreamConfiguration.builder()
                            .name(stream)
                            .subjects(stream + ".*")
                            .storageType(StorageType.File)
                            .maxAge(Duration.ofHours(1))
                            .build());
        } catch (JetStreamApiException e) {
            throw new IOException(e);
        }
    }

    /** A new incarnation: a new random publisher id, sequence and event ids from 0 again. */
    public void restart() {
        publisherId = ThreadLocalRandom.current().nextLong() & JSON_SAFE;
        sequence = 0;
        eventId = 0;
    }

    /** The next envelope sequence is skipped: the message a lossy core subscription never got. */
    public void drop() {
        sequence++;
        eventId++;
    }

    /** The event plane's current publisher id. */
    public long publisherId() {
        return publisherId;
    }

    /** Publishes a {@code stored} event. */
    public void stored(int rank, String tier, OptionalLong parent, long[] blockHashes, long[] tokensHashes, boolean mm)
            throws IOException {
        if (durable) {
            StringBuilder sb = head(rank, tier).append("\"data\":{\"stored\":{\"parent_hash\":");
            sb.append(parent.isPresent() ? Long.toUnsignedString(parent.getAsLong()) : "null");
            sb.append(",\"start_position\":null,\"blocks\":[");
            for (int i = 0; i < blockHashes.length; i++) {
                sb.append(i == 0 ? "" : ",").append("{\"block_hash\":").append(Long.toUnsignedString(blockHashes[i]));
                sb.append(",\"tokens_hash\":").append(Long.toUnsignedString(tokensHashes[i]));
                sb.append(",\"mm_extra_info\":")
                        .append(mm ? "{\"mm_objects\":[{\"mm_hash\":42,\"offsets\":[[0,2]]}]}" : "null");
                sb.append('}');
            }
            publishJson(sb.append("]}}"), rank);
            return;
        }
        MessageBufferPacker p = headPack(rank, tier, 3);
        p.packString("data").packMapHeader(1).packString("stored").packMapHeader(3);
        p.packString("parent_hash");
        if (parent.isPresent()) {
            u64(p, parent.getAsLong());
        } else {
            p.packNil();
        }
        p.packString("start_position").packNil();
        p.packString("blocks").packArrayHeader(blockHashes.length);
        for (int i = 0; i < blockHashes.length; i++) {
            p.packMapHeader(3).packString("block_hash");
            u64(p, blockHashes[i]);
            p.packString("tokens_hash");
            u64(p, tokensHashes[i]);
            p.packString("mm_extra_info");
            if (mm) {
                p.packMapHeader(1).packString("mm_objects").packArrayHeader(1).packMapHeader(2);
                p.packString("mm_hash").packLong(42).packString("offsets");
                p.packArrayHeader(1).packArrayHeader(2).packInt(0).packInt(2);
            } else {
                p.packNil();
            }
        }
        tail(p, rank);
    }

    /** Publishes a {@code removed} event. */
    public void removed(int rank, String tier, long[] blockHashes) throws IOException {
        if (durable) {
            StringBuilder sb = head(rank, tier).append("\"data\":{\"removed\":{\"block_hashes\":[");
            for (int i = 0; i < blockHashes.length; i++) {
                sb.append(i == 0 ? "" : ",").append(Long.toUnsignedString(blockHashes[i]));
            }
            publishJson(sb.append("]}}"), rank);
            return;
        }
        MessageBufferPacker p = headPack(rank, tier, 3);
        p.packString("data").packMapHeader(1).packString("removed").packMapHeader(1);
        p.packString("block_hashes").packArrayHeader(blockHashes.length);
        for (long h : blockHashes) {
            u64(p, h);
        }
        tail(p, rank);
    }

    /** Publishes a {@code cleared} event (serde's unit variant: the bare name). */
    public void cleared(int rank) throws IOException {
        if (durable) {
            publishJson(head(rank, "device").append("\"data\":\"cleared\""), rank);
            return;
        }
        MessageBufferPacker p = headPack(rank, "device", 3);
        p.packString("data").packString("cleared");
        tail(p, rank);
    }

    // serde_json of RouterEvent {worker_id, storage_tier, event: {event_id, data, dp_rank}}: data comes next.
    private StringBuilder head(int rank, String tier) {
        return new StringBuilder("{\"worker_id\":")
                .append(Long.toUnsignedString(workerId))
                .append(",\"storage_tier\":\"")
                .append(tier)
                .append("\",\"event\":{\"event_id\":")
                .append(eventId++)
                .append(',');
    }

    private void publishJson(StringBuilder json, int rank) throws IOException {
        json.append(",\"dp_rank\":").append(rank).append("}}");
        String stream = DynamoSource.streamName(namespace, component);
        try { // acknowledged by the stream, as NatsQueue's enqueue waits for
            connection.jetStream().publish(stream + ".queue", json.toString().getBytes(StandardCharsets.UTF_8));
        } catch (JetStreamApiException e) {
            throw new IOException(e);
        }
    }

    private MessageBufferPacker headPack(int rank, String tier, int eventFields) throws IOException {
        MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
        p.packMapHeader(3).packString("worker_id");
        u64(p, workerId);
        p.packString("storage_tier").packString(tier);
        p.packString("event").packMapHeader(eventFields).packString("event_id");
        u64(p, eventId++);
        return p;
    }

    private void tail(MessageBufferPacker p, int rank) throws IOException {
        p.packString("dp_rank").packInt(rank);
        byte[] payload = p.toByteArray();
        MessageBufferPacker env = MessagePack.newDefaultBufferPacker();
        env.packMapHeader(5); // encode_envelope_parts: publisher_id, sequence, published_at, topic, payload
        env.packString("publisher_id");
        u64(env, publisherId);
        env.packString("sequence");
        u64(env, sequence++);
        long now = System.currentTimeMillis();
        env.packString("published_at");
        u64(env, now);
        env.packString("topic").packString("kv-events");
        env.packString("payload").packBinaryHeader(payload.length).writePayload(payload);
        connection.publish(DynamoSource.subject(namespace, component, "kv-events"), env.toByteArray());
    }

    /** A Rust {@code u64}: the smallest unsigned format, {@code uint64} above 2^63 - 1. */
    private static void u64(MessagePacker p, long v) throws IOException {
        if (v >= 0) {
            p.packLong(v);
        } else {
            p.packBigInteger(new BigInteger(Long.toUnsignedString(v)));
        }
    }
}
