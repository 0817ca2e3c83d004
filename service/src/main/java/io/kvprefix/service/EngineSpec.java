package io.kvprefix.service;

import io.kvprefix.Worker;
import io.kvprefix.zmq.EngineEndpoint;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Objects;
import java.util.Optional;

/**
 * One engine the service routes to: its worker, the base URL of its OpenAI-compatible HTTP API, and
 * where its KV events come from (its ZMQ publisher and replay socket, or nothing when a fleet stream
 * carries them).
 *
 * <p>The command-line form, parsed by {@link #parse}, is
 * {@code WORKER[/RANK]=http://HOST:PORT[,events=ENDPOINT][,replay=ENDPOINT][,topic=T][,format=F]}:
 * {@code events}, {@code replay}, {@code topic} and {@code format} are {@code kvprefix listen
 * --engine}'s, read by {@link EngineEndpoint#parse}. Without {@code /RANK} the worker is rank 0 and
 * the events' ranks are taken from each batch, as in {@code listen}; with it, every event of the
 * engine goes to that rank.
 *
 * <p>Thread-safety: immutable.
 *
 * @param worker the worker the engine's events and decisions belong to
 * @param baseUrl the engine's HTTP base URL, {@code http://HOST:PORT} (a path prefix is kept)
 * @param events its KV-event publisher, or empty
 */
public record EngineSpec(Worker worker, URI baseUrl, Optional<EngineEndpoint> events) {
    public EngineSpec {
        Objects.requireNonNull(worker, "worker");
        Objects.requireNonNull(events, "events (use Optional.empty())");
        baseUrl = checkUrl(Objects.requireNonNull(baseUrl, "baseUrl"));
        if (events.isPresent() && events.get().workerId() != worker.workerId()) {
            throw new IllegalArgumentException("the events' worker id "
                    + Long.toUnsignedString(events.get().workerId()) + " differs from the engine's " + worker);
        }
    }

    /** An engine at {@code baseUrl} for worker {@code workerId} (rank 0), without an event publisher. */
    public static EngineSpec of(long workerId, String baseUrl) {
        return new EngineSpec(Worker.of(workerId), URI.create(baseUrl), Optional.empty());
    }

    /**
     * Parses {@code WORKER[/RANK]=http://HOST:PORT[,events=ENDPOINT][,replay=ENDPOINT][,topic=T][,format=F]}.
     *
     * @throws IllegalArgumentException with a message naming the spec and what is wrong
     */
    public static EngineSpec parse(String spec) {
        Objects.requireNonNull(spec, "spec");
        String s = spec.strip();
        int eq = s.indexOf('=');
        if (eq <= 0) {
            throw bad(spec, "expected WORKER[/RANK]=http://HOST:PORT[,events=ENDPOINT][,replay=ENDPOINT]");
        }
        String workerPart = s.substring(0, eq).strip();
        String[] parts = s.substring(eq + 1).split(",", -1);
        URI url;
        try {
            url = checkUrl(new URI(parts[0].strip()));
        } catch (URISyntaxException | IllegalArgumentException e) {
            throw bad(spec, e instanceof URISyntaxException u ? "'" + u.getInput() + "' is not a URL" : e.getMessage());
        }
        String events = null;
        StringBuilder eventOptions = new StringBuilder();
        for (int i = 1; i < parts.length; i++) {
            String p = parts[i].strip();
            int e = p.indexOf('=');
            String key = e < 0 ? p : p.substring(0, e);
            String value = e < 0 ? "" : p.substring(e + 1);
            switch (key) {
                case "events" -> {
                    if (value.isEmpty()) {
                        throw bad(spec, "events= needs a ZMQ endpoint, such as tcp://HOST:5557");
                    }
                    events = value;
                }
                case "replay", "topic", "format" -> eventOptions.append(',').append(p);
                default ->
                    throw bad(
                            spec,
                            "unknown option '" + key
                                    + "' (expected events=ENDPOINT, replay=ENDPOINT, topic=TOPIC or format=FORMAT)");
            }
        }
        if (events == null && !eventOptions.isEmpty()) {
            throw bad(spec, "replay=, topic= and format= belong to an events= publisher, and none is given");
        }
        EngineEndpoint endpoint;
        try {
            // the event part is listen's --engine form: ENDPOINT=WORKER[/RANK][,replay=...][,topic=...][,format=...]
            endpoint = events == null ? null : EngineEndpoint.parse(events + "=" + workerPart + eventOptions);
        } catch (IllegalArgumentException e) {
            throw bad(spec, e.getMessage());
        }
        Worker worker = endpoint != null ? worker(endpoint) : parseWorker(spec, workerPart);
        return new EngineSpec(worker, url, Optional.ofNullable(endpoint));
    }

    private static Worker worker(EngineEndpoint e) {
        return Worker.of(e.workerId(), e.dpRank().orElse(0));
    }

    private static Worker parseWorker(String spec, String part) {
        int slash = part.indexOf('/');
        String id = slash < 0 ? part : part.substring(0, slash);
        long worker;
        try {
            worker = Long.parseUnsignedLong(id);
        } catch (NumberFormatException e) {
            throw bad(spec, "worker id '" + id + "' is not an unsigned 64-bit integer");
        }
        if (slash < 0) {
            return Worker.of(worker);
        }
        try {
            return Worker.of(worker, Integer.parseUnsignedInt(part.substring(slash + 1)));
        } catch (NumberFormatException e) {
            throw bad(spec, "dp rank '" + part.substring(slash + 1) + "' is not an unsigned 32-bit integer");
        }
    }

    private static URI checkUrl(URI u) {
        String scheme = u.getScheme();
        if (scheme == null || !scheme.equalsIgnoreCase("http")) {
            throw new IllegalArgumentException(
                    "engine URL '" + u + "' must start with http:// (https is not supported)");
        }
        if (u.getHost() == null) {
            throw new IllegalArgumentException("engine URL '" + u + "' has no host");
        }
        if (u.getPort() > 65535) {
            throw new IllegalArgumentException("engine URL '" + u + "': port " + u.getPort() + " is outside 1..65535");
        }
        if (u.getRawQuery() != null || u.getRawFragment() != null || u.getRawUserInfo() != null) {
            throw new IllegalArgumentException(
                    "engine URL '" + u + "' must be http://HOST:PORT[/PATH], without user, query or fragment");
        }
        String path = u.getRawPath() == null ? "" : u.getRawPath();
        while (path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        return URI.create("http://" + u.getRawAuthority() + path);
    }

    /** The port of {@link #baseUrl()} (80 when it names none). */
    public int port() {
        return baseUrl.getPort() < 0 ? 80 : baseUrl.getPort();
    }

    /** The host of {@link #baseUrl()}, without brackets for an IPv6 literal. */
    public String host() {
        String h = baseUrl.getHost();
        return h.startsWith("[") && h.endsWith("]") ? h.substring(1, h.length() - 1) : h;
    }

    /** The path prefix of {@link #baseUrl()}: empty, or {@code /PATH} without a trailing slash. */
    public String pathPrefix() {
        return baseUrl.getRawPath() == null ? "" : baseUrl.getRawPath();
    }

    /** The command-line form ({@link #parse} reads it back). */
    public String toSpec() {
        StringBuilder sb = new StringBuilder(
                worker.dpRank() == 0 && events.map(e -> e.dpRank().isEmpty()).orElse(true)
                        ? Long.toUnsignedString(worker.workerId())
                        : worker.toString());
        sb.append('=').append(baseUrl);
        events.ifPresent(e -> {
            sb.append(",events=").append(e.endpoint());
            e.replayEndpoint().ifPresent(r -> sb.append(",replay=").append(r));
            if (!e.topic().isEmpty()) {
                sb.append(",topic=").append(e.topic());
            }
            if (!e.format().equals(io.kvprefix.zmq.EngineEventDecoder.DEFAULT_FORMAT)) {
                sb.append(",format=").append(e.format());
            }
        });
        return sb.toString();
    }

    @Override
    public String toString() {
        return toSpec();
    }

    private static IllegalArgumentException bad(String spec, String why) {
        return new IllegalArgumentException("engine '" + spec + "': " + why);
    }
}
