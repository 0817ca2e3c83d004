package io.kvprefix.service.internal;

import io.kvprefix.Worker;
import io.kvprefix.service.Usage;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The service's meters (docs/METRICS.md section 4), the same for every front door: requests by worker,
 * route and outcome; errors the service answered itself, by code; load-only decisions by reason;
 * retries; engines going down; the route decision's and the tokenizer's cost; time to the first
 * response byte per worker; and the usage the engines reported next to what the index predicted, per
 * worker, so that the engines' measured hit rate and the index's prediction sit side by side.
 *
 * <p>Thread-safety: thread-safe; meters are made once per label set (concurrent maps) and Micrometer's
 * meters are thread-safe.
 */
public final class ServiceMeters {
    private static final Duration[] LATENCY_BUCKETS = {
        Duration.ofNanos(1_000),
        Duration.ofNanos(2_000),
        Duration.ofNanos(5_000),
        Duration.ofNanos(10_000),
        Duration.ofNanos(20_000),
        Duration.ofNanos(50_000),
        Duration.ofNanos(100_000),
        Duration.ofNanos(200_000),
        Duration.ofNanos(500_000),
        Duration.ofMillis(1),
        Duration.ofMillis(2),
        Duration.ofMillis(5),
        Duration.ofMillis(10),
        Duration.ofMillis(50),
        Duration.ofMillis(100),
        Duration.ofMillis(500),
        Duration.ofSeconds(1),
        Duration.ofSeconds(5),
        Duration.ofSeconds(30)
    };

    private final MeterRegistry registry;
    private final Map<List<String>, Counter> counters = new ConcurrentHashMap<>();
    private final Map<String, Timer> timers = new ConcurrentHashMap<>();
    private final Timer route;

    public ServiceMeters(MeterRegistry registry) {
        this.registry = registry;
        this.route = timer(
                "kvprefix.service.route",
                "The route decision: hash, match and policy (tokenizing not included)",
                null,
                null);
    }

    /** Binds a gauge read at scrape time. */
    public void gauge(String name, String description, Supplier<Number> value, String... tags) {
        Gauge.builder(name, value).description(description).tags(tags).register(registry);
    }

    private Counter counter(String name, String description, String... tags) {
        List<String> key = new java.util.ArrayList<>(tags.length + 1);
        key.add(name);
        key.addAll(List.of(tags));
        return counters.computeIfAbsent(
                key,
                k -> Counter.builder(name).description(description).tags(tags).register(registry));
    }

    private Timer timer(String name, String description, String tag, String value) {
        String key = name + (tag == null ? "" : "|" + tag + "=" + value);
        return timers.computeIfAbsent(key, k -> {
            Timer.Builder b = Timer.builder(name).description(description).serviceLevelObjectives(LATENCY_BUCKETS);
            if (tag != null) {
                b.tags(tag, value);
            }
            return b.register(registry);
        });
    }

    /** One route decision took {@code nanos}. */
    public void routeNanos(long nanos) {
        route.record(Duration.ofNanos(nanos));
    }

    /** The route decisions timed so far: their count, total and largest time. */
    public Timer routeTimer() {
        return route;
    }

    /** One tokenization of {@code model}'s prompt took {@code nanos}. */
    public void tokenizeNanos(String model, long nanos) {
        timer("kvprefix.service.tokenize", "Turning a text or chat prompt into the engine's tokens", "model", model)
                .record(Duration.ofNanos(nanos));
    }

    /** A request was routed to {@code w}, by cache or by load alone for {@code reason}. */
    public void routed(Worker w, boolean byCache, String reason) {
        if (!byCache) {
            counter("kvprefix.service.load.only", "Requests routed by load alone, by reason", "reason", reason)
                    .increment();
        }
    }

    /** The first response byte from {@code w} came {@code nanos} after the request was forwarded. */
    public void firstByte(Worker w, long nanos) {
        timer(
                        "kvprefix.service.first.byte",
                        "From forwarding a request to the engine's first response byte",
                        "worker",
                        w.toString())
                .record(Duration.ofNanos(nanos));
    }

    /** A request routed to {@code w} ended: {@code ok}, {@code failed}, {@code cancelled} or {@code expired}. */
    public void finished(Worker w, boolean byCache, String outcome) {
        counter(
                        "kvprefix.service.requests",
                        "Requests routed, by worker, route (cache or load-only) and outcome",
                        "worker",
                        w.toString(),
                        "route",
                        byCache ? "cache" : "load-only",
                        "outcome",
                        outcome)
                .increment();
    }

    /** The service answered a request itself with the error {@code code}. */
    public void error(String code) {
        counter("kvprefix.service.errors", "Requests the router answered itself with an error, by code", "code", code)
                .increment();
    }

    /** A request was retried on another engine. */
    public void retry() {
        counter("kvprefix.service.retries", "Requests sent again to the next engine after a connection failure")
                .increment();
    }

    /** Engine {@code w} left routing because of {@code cause} ({@code health} or {@code request}). */
    public void engineDown(Worker w, String cause) {
        counter(
                        "kvprefix.service.engine.down",
                        "Times an engine left routing, by worker and cause",
                        "worker",
                        w.toString(),
                        "cause",
                        cause)
                .increment();
    }

    /**
     * The usage {@code w} reported for a request, the tokens the index predicted it held
     * ({@code predictedCachedTokens}) and the infinite cache's share ({@code boundTokens}, -1 if
     * unknown): the three cached counts go only to requests whose engine reported cached tokens, so
     * their ratios compare like with like, and a prediction more than one block ({@code blockSize})
     * off the report counts a mismatch (docs/METRICS.md section 4).
     */
    public void usage(Worker w, Usage u, long predictedCachedTokens, long boundTokens, int blockSize) {
        String worker = w.toString();
        counter("kvprefix.service.prompt.tokens", "Prompt tokens the engines reported, by worker", "worker", worker)
                .increment(u.promptTokens());
        counter(
                        "kvprefix.service.completion.tokens",
                        "Completion tokens the engines reported, by worker",
                        "worker",
                        worker)
                .increment(u.completionTokens());
        if (u.hasCachedTokens()) {
            String d = "Prompt tokens found cached, by worker: as the engine reported (source=engine), as the"
                    + " index predicted when it routed (source=index) and as one shared never-evicting cache would"
                    + " hold them (source=bound), for requests whose engine reported them";
            counter("kvprefix.service.cached.tokens", d, "worker", worker, "source", "engine")
                    .increment(u.cachedTokens());
            long predicted = Math.min(predictedCachedTokens, u.promptTokens());
            counter("kvprefix.service.cached.tokens", d, "worker", worker, "source", "index")
                    .increment(predicted);
            if (boundTokens >= 0) {
                counter("kvprefix.service.cached.tokens", d, "worker", worker, "source", "bound")
                        .increment(Math.min(boundTokens, u.promptTokens()));
            }
            long gap = predicted - u.cachedTokens();
            if (Math.abs(gap) > blockSize) {
                counter(
                                "kvprefix.service.cache.mismatch",
                                "Requests whose engine reported cached tokens more than one block away from the"
                                        + " index's prediction, by worker and direction",
                                "worker",
                                worker,
                                "direction",
                                gap > 0 ? "over" : "under")
                        .increment();
            }
            counter(
                            "kvprefix.service.cache.reported.prompt.tokens",
                            "Prompt tokens of the requests whose engine reported cached tokens, by worker",
                            "worker",
                            worker)
                    .increment(u.promptTokens());
        }
    }

    /** The registry the meters are in. */
    public MeterRegistry registry() {
        return registry;
    }
}
