package io.kvprefix.zmq;

import io.kvprefix.Worker;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.regex.Pattern;

/**
 * One engine to subscribe to: the ZMQ endpoint its KV-event publisher serves, the worker id its
 * events belong to, optionally a fixed dp rank, its replay endpoint, the topic to subscribe to, and
 * the format of its batch payloads, which picks the {@link EngineEventDecoder} ({@code vllm} unless
 * said otherwise; {@link EngineEventDecoder#FORMATS} lists the known ones), and optionally its
 * snapshot endpoint (vLLM PR #57789, provisional: docs/LISTENER.md section 8). The command-line form,
 * parsed by {@link #parse}, is {@code ENDPOINT=WORKER[/RANK][,replay=ENDPOINT|,snapshot=ENDPOINT][,topic=TOPIC][,format=FORMAT]};
 * docs/LISTENER.md section 5 states it and the dp-rank rule ({@link DecodeIssue#DP_RANK_OVERRIDDEN}).
 *
 * <p>Thread-safety: immutable.
 *
 * @param endpoint the publisher's PUB endpoint, such as {@code tcp://10.0.0.5:5557}
 * @param workerId the worker id (unsigned 64-bit) the engine's events belong to
 * @param dpRank a fixed dp rank (unsigned 32-bit), or empty to take it from each batch
 * @param replayEndpoint the publisher's ROUTER replay endpoint, or empty if it has none
 * @param topic the topic prefix to subscribe to; empty (the vLLM default) for every message
 * @param format the format of the engine's batch payloads, one of {@link EngineEventDecoder#FORMATS}
 * @param snapshotEndpoint the publisher's snapshot endpoint (the opt-in to the snapshot protocol,
 *     which then replaces replay), or empty
 */
public record EngineEndpoint(
        String endpoint,
        long workerId,
        OptionalInt dpRank,
        Optional<String> replayEndpoint,
        String topic,
        String format,
        Optional<String> snapshotEndpoint) {

    private static final Pattern TCP = Pattern.compile("tcp://(\\[[0-9A-Fa-f:.]+]|[^:/\\s\\[\\]]+):(\\d{1,5})");
    private static final Pattern OTHER = Pattern.compile("(ipc|inproc)://\\S+");

    public EngineEndpoint {
        checkEndpoint(endpoint, "endpoint");
        Objects.requireNonNull(dpRank, "dpRank (use OptionalInt.empty())");
        Objects.requireNonNull(replayEndpoint, "replayEndpoint (use Optional.empty())");
        replayEndpoint.ifPresent(r -> checkEndpoint(r, "replay endpoint"));
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(format, "format");
        if (!EngineEventDecoder.FORMATS.contains(format)) {
            throw new IllegalArgumentException("unknown format '" + format + "' (known formats: "
                    + String.join(", ", EngineEventDecoder.FORMATS) + ")");
        }
        Objects.requireNonNull(snapshotEndpoint, "snapshotEndpoint (use Optional.empty())");
        snapshotEndpoint.ifPresent(r -> checkEndpoint(r, "snapshot endpoint"));
        if (snapshotEndpoint.isPresent() && replayEndpoint.isPresent()) {
            throw new IllegalArgumentException("replay= and snapshot= exclude each other: with a snapshot endpoint a "
                    + "gap is recovered by a new snapshot, not by replay (docs/LISTENER.md section 8)");
        }
    }

    /** An engine without a snapshot endpoint. */
    public EngineEndpoint(
            String endpoint,
            long workerId,
            OptionalInt dpRank,
            Optional<String> replayEndpoint,
            String topic,
            String format) {
        this(endpoint, workerId, dpRank, replayEndpoint, topic, format, Optional.empty());
    }

    /** An engine in the default format ({@value EngineEventDecoder#DEFAULT_FORMAT}). */
    public EngineEndpoint(
            String endpoint, long workerId, OptionalInt dpRank, Optional<String> replayEndpoint, String topic) {
        this(endpoint, workerId, dpRank, replayEndpoint, topic, EngineEventDecoder.DEFAULT_FORMAT);
    }

    /** An engine at {@code endpoint} for worker {@code workerId}, rank from each batch, no replay, every topic, format {@code vllm}. */
    public static EngineEndpoint of(String endpoint, long workerId) {
        return new EngineEndpoint(endpoint, workerId, OptionalInt.empty(), Optional.empty(), "");
    }

    /** This engine with a fixed dp rank. */
    public EngineEndpoint withDpRank(int rank) {
        return new EngineEndpoint(
                endpoint, workerId, OptionalInt.of(rank), replayEndpoint, topic, format, snapshotEndpoint);
    }

    /** This engine with a replay endpoint. */
    public EngineEndpoint withReplay(String replay) {
        return new EngineEndpoint(endpoint, workerId, dpRank, Optional.of(replay), topic, format, snapshotEndpoint);
    }

    /** This engine subscribed to {@code topicPrefix} only. */
    public EngineEndpoint withTopic(String topicPrefix) {
        return new EngineEndpoint(endpoint, workerId, dpRank, replayEndpoint, topicPrefix, format, snapshotEndpoint);
    }

    /** This engine with batch payloads in {@code payloadFormat} (one of {@link EngineEventDecoder#FORMATS}). */
    public EngineEndpoint withFormat(String payloadFormat) {
        return new EngineEndpoint(endpoint, workerId, dpRank, replayEndpoint, topic, payloadFormat, snapshotEndpoint);
    }

    /** This engine with a snapshot endpoint (docs/LISTENER.md section 8), and so without replay. */
    public EngineEndpoint withSnapshot(String snapshot) {
        return new EngineEndpoint(endpoint, workerId, dpRank, Optional.empty(), topic, format, Optional.of(snapshot));
    }

    /** The worker a batch with this dp rank (or none) belongs to: the fixed rank if configured. */
    public Worker worker(OptionalInt batchRank) {
        return new Worker(workerId, dpRank.orElse(batchRank.orElse(0)));
    }

    /**
     * Parses {@code ENDPOINT=WORKER[/RANK][,replay=ENDPOINT|,snapshot=ENDPOINT][,topic=TOPIC][,format=FORMAT]}.
     *
     * @throws IllegalArgumentException with a message naming what is wrong
     */
    public static EngineEndpoint parse(String spec) {
        Objects.requireNonNull(spec, "spec");
        String s = spec.strip();
        int eq = s.indexOf('=');
        if (eq <= 0) {
            throw bad(
                    spec,
                    "expected ENDPOINT=WORKER[/RANK][,replay=ENDPOINT|,snapshot=ENDPOINT][,topic=TOPIC][,format=FORMAT]");
        }
        String endpoint = s.substring(0, eq);
        String[] parts = s.substring(eq + 1).split(",", -1);
        String workerPart = parts[0].strip();
        String rankPart = null;
        int slash = workerPart.indexOf('/');
        if (slash >= 0) {
            rankPart = workerPart.substring(slash + 1);
            workerPart = workerPart.substring(0, slash);
        }
        long worker;
        try {
            worker = Long.parseUnsignedLong(workerPart);
        } catch (NumberFormatException e) {
            throw bad(spec, "worker id '" + workerPart + "' is not an unsigned 64-bit integer");
        }
        OptionalInt rank = OptionalInt.empty();
        if (rankPart != null) {
            try {
                rank = OptionalInt.of(Integer.parseUnsignedInt(rankPart));
            } catch (NumberFormatException e) {
                throw bad(spec, "dp rank '" + rankPart + "' is not an unsigned 32-bit integer");
            }
        }
        Options o = options(spec, parts);
        try {
            return new EngineEndpoint(endpoint, worker, rank, o.replay(), o.topic(), o.format(), o.snapshot());
        } catch (IllegalArgumentException ex) {
            throw bad(spec, ex.getMessage());
        }
    }

    /** The options after the worker of a spec. */
    private record Options(Optional<String> replay, String topic, String format, Optional<String> snapshot) {}

    /** Reads {@code parts[1..]}: {@code replay=}, {@code snapshot=}, {@code topic=} and {@code format=}. */
    private static Options options(String spec, String[] parts) {
        Optional<String> replay = Optional.empty();
        Optional<String> snapshot = Optional.empty();
        String topic = "";
        String format = EngineEventDecoder.DEFAULT_FORMAT;
        for (int i = 1; i < parts.length; i++) {
            String p = parts[i].strip();
            int e = p.indexOf('=');
            String key = e < 0 ? p : p.substring(0, e);
            String value = e < 0 ? null : p.substring(e + 1);
            switch (key) {
                case "replay" -> {
                    if (value == null || value.isEmpty()) {
                        throw bad(spec, "replay= needs an endpoint");
                    }
                    replay = Optional.of(value);
                }
                case "snapshot" -> {
                    if (value == null || value.isEmpty()) {
                        throw bad(spec, "snapshot= needs an endpoint");
                    }
                    snapshot = Optional.of(value);
                }
                case "topic" -> topic = value == null ? "" : value;
                case "format" -> {
                    if (value == null || value.isEmpty()) {
                        throw bad(
                                spec, "format= needs a format (" + String.join(", ", EngineEventDecoder.FORMATS) + ")");
                    }
                    format = value;
                }
                default ->
                    throw bad(
                            spec,
                            "unknown option '" + key
                                    + "' (expected replay=ENDPOINT, snapshot=ENDPOINT, topic=TOPIC or format=FORMAT)");
            }
        }
        return new Options(replay, topic, format, snapshot);
    }

    /** The command-line form of this engine (what {@link #parse} reads). */
    public String toSpec() {
        StringBuilder sb = new StringBuilder(endpoint).append('=').append(Long.toUnsignedString(workerId));
        dpRank.ifPresent(r -> sb.append('/').append(Integer.toUnsignedString(r)));
        replayEndpoint.ifPresent(r -> sb.append(",replay=").append(r));
        snapshotEndpoint.ifPresent(r -> sb.append(",snapshot=").append(r));
        if (!topic.isEmpty()) {
            sb.append(",topic=").append(topic);
        }
        if (!format.equals(EngineEventDecoder.DEFAULT_FORMAT)) {
            sb.append(",format=").append(format);
        }
        return sb.toString();
    }

    @Override
    public String toString() {
        return toSpec();
    }

    private static void checkEndpoint(String e, String what) {
        Objects.requireNonNull(e, what);
        var tcp = TCP.matcher(e);
        if (tcp.matches() && tcp.group(1).equals("*")) {
            throw new IllegalArgumentException(what + " '" + e + "' is not a ZMQ endpoint to connect to: * is what "
                    + "the engine binds; name its host, as in tcp://HOST:" + tcp.group(2));
        }
        if (tcp.matches()) {
            int port = Integer.parseInt(tcp.group(2));
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException(what + " '" + e + "': port " + port + " is outside 1..65535");
            }
            return;
        }
        if (!OTHER.matcher(e).matches()) {
            throw new IllegalArgumentException(what + " '" + e
                    + "' is not a ZMQ endpoint to connect to (tcp://HOST:PORT, ipc://PATH or inproc://NAME)");
        }
    }

    private static IllegalArgumentException bad(String spec, String why) {
        return new IllegalArgumentException("engine '" + spec + "': " + why);
    }
}
