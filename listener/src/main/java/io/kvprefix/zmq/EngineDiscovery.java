package io.kvprefix.zmq;

import io.kvprefix.zmq.internal.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * An engine found, not listed: asks a vLLM server's {@code GET /kv_event_sources} where it publishes
 * its KV events and turns each data-parallel rank's answer into an {@link EngineEndpoint}
 * (the spec form {@code URL=WORKER[,format=F]} and the fields read: docs/LISTENER.md
 * section 5).
 *
 * <p>Thread-safety: stateless; the HTTP client is the JDK's, shared.
 */
public final class EngineDiscovery {
    private static final HttpClient HTTP = HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(5))
            .followRedirects(HttpClient.Redirect.NEVER)
            .build();

    private EngineDiscovery() {}

    /** An engine to discover: its HTTP base URL, the worker id its events belong to, their format. */
    public record Spec(URI url, long workerId, String format) {
        /**
         * Parses {@code http://HOST:PORT=WORKER[,format=F]}.
         *
         * @throws IllegalArgumentException naming what is wrong
         */
        public static Spec parse(String spec) {
            String s = spec.strip();
            int eq = s.lastIndexOf('=', s.contains(",") ? s.indexOf(',') : s.length());
            if (!s.startsWith("http://") || eq < 0) {
                throw new IllegalArgumentException(
                        "engine URL '" + spec + "': expected http://HOST:PORT=WORKER[,format=FORMAT]");
            }
            String[] parts = s.substring(eq + 1).split(",", -1);
            long worker;
            try {
                worker = Long.parseUnsignedLong(parts[0].strip());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(
                        "engine URL '" + spec + "': worker id '" + parts[0] + "' is not an unsigned 64-bit integer");
            }
            String format = EngineEventDecoder.DEFAULT_FORMAT;
            for (int i = 1; i < parts.length; i++) {
                String p = parts[i].strip();
                if (!p.startsWith("format=") || !EngineEventDecoder.FORMATS.contains(p.substring(7))) {
                    throw new IllegalArgumentException("engine URL '" + spec + "': unknown option '" + p
                            + "' (expected format= one of " + EngineEventDecoder.FORMATS + ")");
                }
                format = p.substring(7);
            }
            URI url;
            try {
                url = URI.create(s.substring(0, eq));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("engine URL '" + spec + "': " + e.getMessage(), e);
            }
            if (url.getHost() == null || url.getPort() < 0) {
                throw new IllegalArgumentException("engine URL '" + spec + "': expected http://HOST:PORT");
            }
            return new Spec(url, worker, format);
        }
    }

    /**
     * Asks {@code spec.url()} for its event sources, one {@link EngineEndpoint} per dp rank.
     *
     * @throws IOException if the server cannot be reached, does not answer 200, or answers what is
     *     not vLLM's list
     */
    public static List<EngineEndpoint> discover(Spec spec, Duration timeout) throws IOException {
        URI u = spec.url().resolve("/kv_event_sources");
        HttpResponse<String> r;
        try {
            r = HTTP.send(
                    HttpRequest.newBuilder(u).timeout(timeout).GET().build(), HttpResponse.BodyHandlers.ofString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted asking " + u, e);
        }
        if (r.statusCode() != 200) {
            throw new IOException(u + " answered " + r.statusCode() + " (vLLM serves it since 2026-09, #55844)");
        }
        try {
            return sources(r.body(), spec.url().getHost(), spec.workerId(), spec.format());
        } catch (IllegalArgumentException e) {
            throw new IOException(u + ": " + e.getMessage(), e);
        }
    }

    /**
     * Reads vLLM's answer: a JSON array (or an object whose {@code sources} is one) of
     * {@code {data_parallel_rank, endpoint, replay_endpoint, topic}}; an endpoint bound to every
     * interface ({@code *}, {@code 0.0.0.0}, {@code ::}) is reached at {@code host}, the server's.
     *
     * @throws IllegalArgumentException naming what is missing or malformed
     */
    public static List<EngineEndpoint> sources(String json, String host, long workerId, String format) {
        Object tree = Json.parse(json);
        if (tree instanceof Map<?, ?> m && m.get("sources") instanceof List<?> l) {
            tree = l;
        }
        if (!(tree instanceof List<?> list)) {
            throw new IllegalArgumentException("not a JSON array of event sources");
        }
        List<EngineEndpoint> out = new ArrayList<>();
        for (Object o : list) {
            if (!(o instanceof Map<?, ?> m) || !(m.get("endpoint") instanceof String endpoint)) {
                throw new IllegalArgumentException("an event source without an endpoint: " + o);
            }
            Object rank = m.get("data_parallel_rank");
            OptionalInt dp = rank instanceof Long r ? OptionalInt.of(r.intValue()) : OptionalInt.empty();
            Optional<String> replay = m.get("replay_endpoint") instanceof String re && !re.isEmpty()
                    ? Optional.of(reachable(re, host))
                    : Optional.empty();
            String topic = m.get("topic") instanceof String t ? t : "";
            out.add(new EngineEndpoint(reachable(endpoint, host), workerId, dp, replay, topic, format));
        }
        return out;
    }

    private static String reachable(String endpoint, String host) {
        for (String any : List.of("tcp://*:", "tcp://0.0.0.0:", "tcp://[::]:", "tcp://:::")) {
            if (endpoint.startsWith(any)) {
                String h = host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
                return "tcp://" + h + ":" + endpoint.substring(any.length());
            }
        }
        return endpoint;
    }
}
