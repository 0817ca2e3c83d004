package io.kvprefix.epp.internal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The endpoint picker's own meters (docs/METRICS.md section 5), beside the router service's: streams
 * open, picks by result, the pick's latency (the first message of a stream in, the destination out),
 * and which endpoint of the list served.
 *
 * <p>Thread-safety: thread-safe.
 */
public final class EppMeters {
    private final MeterRegistry registry;
    private final AtomicInteger open = new AtomicInteger();
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    private final Timer pick;

    public EppMeters(MeterRegistry registry) {
        this.registry = registry;
        Gauge.builder("kvprefix.epp.streams", open::get)
                .description("ext_proc streams open now (one per request through the gateway)")
                .register(registry);
        this.pick = Timer.builder("kvprefix.epp.pick")
                .description("From a stream's first message in to its destination out (body wait, parse, route)")
                .serviceLevelObjectives(
                        Duration.ofNanos(100_000),
                        Duration.ofMillis(1),
                        Duration.ofMillis(5),
                        Duration.ofMillis(25),
                        Duration.ofMillis(100),
                        Duration.ofSeconds(1))
                .register(registry);
    }

    /** A stream opened. */
    public void opened() {
        open.incrementAndGet();
    }

    /** A stream closed. */
    public void closed() {
        open.decrementAndGet();
    }

    /** Streams open now. */
    public int open() {
        return open.get();
    }

    /** A pick with {@code result} ({@code picked}, {@code no_endpoint}, {@code shed}, {@code rejected}) after {@code nanos}. */
    public void picked(String result, long nanos) {
        count("kvprefix.epp.picks", "Destinations asked for, by result", "result", result);
        if (result.equals("picked")) {
            pick.record(Duration.ofNanos(nanos));
        }
    }

    /** The pick's timer. */
    public Timer pickTimer() {
        return pick;
    }

    /** The gateway said who served: {@code first}, {@code fallback} (another of the list) or {@code unknown}. */
    public void served(String which) {
        count(
                "kvprefix.epp.served",
                "Responses by the endpoint that served them, as the gateway reported",
                "endpoint",
                which);
    }

    private void count(String name, String description, String tag, String value) {
        counters.computeIfAbsent(
                        name + "|" + value,
                        k -> Counter.builder(name)
                                .description(description)
                                .tag(tag, value)
                                .register(registry))
                .increment();
    }
}
