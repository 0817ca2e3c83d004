/**
 * kvprefix-metrics: what operators see of a kvprefix index, router and event subscriber, through
 * Micrometer (see the {@code io.kvprefix.metrics} package).
 *
 * <p>One package is exported, {@code io.kvprefix.metrics}; {@code io.kvprefix.metrics.internal} is an
 * implementation detail. The core library, the listener and Micrometer are required transitively,
 * since the exported API takes and returns their types ({@code PrefixIndex}, {@code KvEventSubscriber},
 * {@code MeterRegistry}); Micrometer's modules are automatic ones, which javac warns about in a
 * {@code requires transitive} (this module's pom turns that one warning off).
 * The listener is optional ({@code requires static}): only {@code SubscriberMetrics} needs it. The
 * endpoint is a plain server socket (docs/METRICS.md section 2), so no HTTP library is required.
 */
module io.kvprefix.metrics {
    requires transitive io.kvprefix;
    requires static transitive io.kvprefix.zmq;
    requires transitive micrometer.core;
    requires transitive micrometer.registry.prometheus;

    exports io.kvprefix.metrics;
}
