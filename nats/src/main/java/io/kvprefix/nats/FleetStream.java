package io.kvprefix.nats;

import io.kvprefix.nats.internal.Frames;
import io.kvprefix.zmq.EngineEndpoint;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.DiscardPolicy;
import io.nats.client.api.RetentionPolicy;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.nats.client.api.StreamInfo;
import java.io.IOException;
import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The JetStream stream a fleet shares (docs/FLEET.md): its name (default
 * {@value #DEFAULT_NAME}), how long it keeps messages, and its de-duplication window. Every engine
 * has a subject of its own, {@code NAME.WORKER.KEY}, where {@code KEY} is derived from the engine's
 * endpoint ({@link #subjectOf}), so the stream keeps each engine's batches in order and the last
 * message of each engine is one lookup away. {@link #ensure} creates the stream if it does not
 * exist (file storage, limits retention, discard old, one replica) and otherwise checks that it
 * takes this fleet's subjects.
 *
 * <p>Thread-safety: immutable.
 *
 * @param name the stream's name (letters, digits, {@code _} and {@code -})
 * @param maxAge how long the stream keeps a message (Dynamo keeps its KV-event stream 1 h)
 * @param duplicateWindow how long JetStream remembers message ids to drop a republished batch
 */
public record FleetStream(String name, Duration maxAge, Duration duplicateWindow) {
    /** The stream's name unless one is given. */
    public static final String DEFAULT_NAME = "KVPREFIX_EVENTS";

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");

    public FleetStream {
        Objects.requireNonNull(name, "name");
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("stream name '" + name
                    + "' must be 1 to 64 letters, digits, '_' or '-' (it is also the first token of its subjects)");
        }
        positive(maxAge, "maxAge");
        positive(duplicateWindow, "duplicateWindow");
        if (duplicateWindow.compareTo(maxAge) > 0) {
            throw new IllegalArgumentException(
                    "duplicateWindow (" + duplicateWindow + ") must not exceed maxAge (" + maxAge + ")");
        }
    }

    /** The stream {@code name} with a retention of 1 h and a de-duplication window of 2 min. */
    public static FleetStream named(String name) {
        return new FleetStream(name, Duration.ofHours(1), Duration.ofMinutes(2));
    }

    /** {@link #named}({@value #DEFAULT_NAME}). */
    public static FleetStream defaults() {
        return named(DEFAULT_NAME);
    }

    /** This stream with another retention. */
    public FleetStream withMaxAge(Duration d) {
        return new FleetStream(name, d, duplicateWindow.compareTo(d) > 0 ? d : duplicateWindow);
    }

    /** The subject {@code engine}'s batches go to: {@code NAME.WORKER.KEY}. */
    public String subjectOf(EngineEndpoint engine) {
        return name + "." + Long.toUnsignedString(engine.workerId()) + "." + Frames.engineKey(engine);
    }

    /** Every subject of this stream: {@code NAME.>}. */
    public String subjects() {
        return name + ".>";
    }

    /**
     * Creates the stream on {@code connection}'s server if it does not exist, and returns its state.
     *
     * @throws IllegalStateException if a stream of that name exists and does not take {@link #subjects()},
     *     or the server has no JetStream
     * @throws IOException if the server cannot be reached
     */
    public StreamInfo ensure(Connection connection) throws IOException {
        JetStreamManagement jsm = connection.jetStreamManagement();
        try {
            StreamInfo info = jsm.getStreamInfo(name);
            if (!info.getConfiguration().getSubjects().contains(subjects())) {
                throw new IllegalStateException("stream " + name + " exists with subjects "
                        + info.getConfiguration().getSubjects() + ", not " + subjects());
            }
            return info;
        } catch (JetStreamApiException e) {
            if (e.getApiErrorCode() != 10059) { // stream not found
                throw new IllegalStateException("stream " + name + ": " + e.getMessage(), e);
            }
        }
        try {
            return jsm.addStream(StreamConfiguration.builder()
                    .name(name)
                    .subjects(subjects())
                    .storageType(StorageType.File)
                    .retentionPolicy(RetentionPolicy.Limits)
                    .discardPolicy(DiscardPolicy.Old)
                    .maxAge(maxAge)
                    .duplicateWindow(duplicateWindow)
                    .maximumMessageSize(Frames.MAX_FRAME_BYTES + 64 * 1024)
                    .replicas(1)
                    .build());
        } catch (JetStreamApiException e) {
            if (e.getApiErrorCode() == 10058) { // created meanwhile by another process
                try {
                    return jsm.getStreamInfo(name);
                } catch (JetStreamApiException again) {
                    throw new IllegalStateException("stream " + name + ": " + again.getMessage(), again);
                }
            }
            throw new IllegalStateException("cannot create stream " + name + ": " + e.getMessage(), e);
        }
    }

    private static void positive(Duration d, String what) {
        Objects.requireNonNull(d, what);
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(what + " must be positive, got " + d);
        }
    }
}
