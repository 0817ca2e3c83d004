package io.kvprefix.service.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvprefix.service.internal.EngineRegistry.Engine;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Checks every engine every interval (docs/SERVE.md section 5): {@code GET /health} must answer 200
 * and {@code GET /v1/models} a model list, each within the timeout; then the engine is up with those
 * models, otherwise down with the reason (connection refused, a status, a timeout, a malformed list).
 * A refused connection or an answer that is wrong takes the engine down at once; a check that only ran
 * out of time does so when the check before it failed too (a loaded machine can miss one deadline; a
 * hung engine misses them all). The checks of one round run side by side on the JDK's HTTP client.
 *
 * <p>Thread-safety: thread-safe; rounds run on the service's timer thread, one at a time.
 */
public final class HealthChecker implements AutoCloseable {
    private final EngineRegistry registry;
    private final Duration timeout;
    private final ExecutorService executor;
    private final HttpClient http;
    private final java.util.concurrent.ConcurrentHashMap<Engine, Integer> timeouts =
            new java.util.concurrent.ConcurrentHashMap<>();
    private ScheduledFuture<?> task;

    public HealthChecker(EngineRegistry registry, Duration timeout) {
        this.registry = registry;
        this.timeout = timeout;
        this.executor = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "kvprefix-service-health");
            t.setDaemon(true);
            return t;
        });
        this.http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(timeout)
                .executor(executor)
                .build();
    }

    /** Runs a round now, waiting for it (each check ends within the timeout). */
    public void checkNow() {
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (Engine e : registry.engines()) {
            all.add(check(e));
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).join();
    }

    /** Runs a round every {@code interval} on {@code timer}. */
    public synchronized void start(ScheduledExecutorService timer, Duration interval) {
        long ms = Math.max(1, interval.toMillis());
        task = timer.scheduleWithFixedDelay(this::roundQuietly, ms, ms, TimeUnit.MILLISECONDS);
    }

    private void roundQuietly() {
        try {
            checkNow();
        } catch (RuntimeException e) {
            System.getLogger("io.kvprefix.service").log(System.Logger.Level.WARNING, "health check round: " + e);
        }
    }

    private CompletableFuture<Void> check(Engine e) {
        URI base = e.spec().baseUrl();
        return get(base.resolve(base.getRawPath() + "/health"))
                .thenCompose(r -> {
                    if (r.statusCode() != 200) {
                        throw new CompletionException(new IOException("/health answered " + r.statusCode()));
                    }
                    return get(base.resolve(base.getRawPath() + "/v1/models"));
                })
                .thenAccept(r -> {
                    if (r.statusCode() != 200) {
                        throw new CompletionException(new IOException("/v1/models answered " + r.statusCode()));
                    }
                    registry.healthy(e, models(r.body()));
                    timeouts.remove(e);
                })
                .exceptionally(t -> {
                    boolean timedOut = unwrap(t) instanceof HttpTimeoutException;
                    int missed = timedOut ? timeouts.merge(e, 1, Integer::sum) : 0;
                    if (!timedOut || missed >= 2 || !e.up()) {
                        registry.down(e, describe(t));
                    }
                    return null;
                });
    }

    private CompletableFuture<HttpResponse<byte[]>> get(URI uri) {
        HttpRequest req = HttpRequest.newBuilder(uri).timeout(timeout).GET().build();
        return http.sendAsync(req, HttpResponse.BodyHandlers.ofByteArray());
    }

    /** The model list of a {@code /v1/models} body: {@code data[].id} to its card. */
    static Map<String, JsonNode> models(byte[] body) {
        JsonNode root;
        try {
            root = Classifier.JSON.readTree(body);
        } catch (IOException ex) {
            throw new CompletionException(new IOException("/v1/models is not JSON"));
        }
        JsonNode data = root == null ? null : root.get("data");
        if (data == null || !data.isArray()) {
            throw new CompletionException(new IOException("/v1/models has no data list"));
        }
        Map<String, JsonNode> out = new LinkedHashMap<>();
        for (JsonNode card : data) {
            JsonNode id = card.get("id");
            if (id != null && id.isTextual()) {
                out.putIfAbsent(id.asText(), card);
            }
        }
        return out;
    }

    private static Throwable unwrap(Throwable t) {
        while (t instanceof CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    static String describe(Throwable t) {
        while ((t instanceof CompletionException || t.getCause() instanceof ConnectException) && t.getCause() != null) {
            t = t.getCause();
        }
        if (t instanceof ConnectException) {
            return "health check: connection refused";
        }
        if (t instanceof HttpTimeoutException) {
            return "health check: no answer within the timeout";
        }
        String m = t.getMessage();
        return "health check: " + (m == null || m.isBlank() ? t.getClass().getSimpleName() : m);
    }

    @Override
    public synchronized void close() {
        if (task != null) {
            task.cancel(false);
        }
        http.shutdownNow();
        executor.shutdownNow();
    }
}
