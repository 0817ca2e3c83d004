/**
 * Metrics for kvprefix through Micrometer, the JVM's metrics facade, named and labelled by Prometheus
 * conventions, and a small HTTP endpoint for the long-running commands.
 *
 * <p><b>Binders.</b> {@link io.kvprefix.metrics.PrefixIndexMetrics} (sizes, memory, rebuilds, events
 * per status, and match latency through a timing decorator), {@link io.kvprefix.metrics.RouterMetrics}
 * (decisions per worker, cached blocks per decision, decisions below the minimum match, predicted
 * blocks) and {@link io.kvprefix.metrics.SubscriberMetrics} (per engine: events per kind and status,
 * blocks stored and removed, gaps, replays, resyncs, decode errors, ignored events, lag). Each is a
 * Micrometer {@code MeterBinder}: {@code new RouterMetrics(router).bindTo(registry)}. The names and
 * their labels are listed in docs/METRICS.md section 1; labels are bounded: engine (one per subscribed
 * engine), event kind, status, issue, and worker only where the set is the router's own members.
 *
 * <p><b>Cost.</b> Counters and gauges are read from the objects' own statistics at scrape time, so
 * they cost nothing between scrapes; a scrape reads each object's statistics once
 * ({@link io.kvprefix.metrics.MetricsServer} refreshes them right before it renders). Two things are
 * recorded as they happen: match latency, by a decorator {@code PrefixIndex} that times each match
 * call ({@link io.kvprefix.metrics.PrefixIndexMetrics#timed}: the index itself is untouched), and
 * routing decisions, by a {@link io.kvprefix.RoutingObserver} the router calls after each decision.
 * benchmarks/RESULTS.md section 3.6 has the measured cost of both.
 *
 * <p><b>The endpoint.</b> {@link io.kvprefix.metrics.MetricsServer} serves {@code /metrics} (the
 * Prometheus text format, rendered by Micrometer's Prometheus registry), {@code /health/live} and
 * {@code /health/ready} on a plain server socket: one thread per connection (virtual threads), a
 * deadline for each whole exchange, one request per connection and a bound on connections, so that a
 * stalled client (half a request, a port scan) never holds the health checks that a liveness probe
 * reads. The JDK's {@code com.sun.net.httpserver} was the first choice and was dropped: it reads
 * request heads on its executor's threads with no time limit unless a process-wide system property
 * is set before its first use, which a library cannot promise.
 *
 * <p>The Grafana dashboard {@code metrics/grafana/kvprefix-dashboard.json} charts these metrics;
 * {@code DashboardTest} checks that every metric it names exists.
 */
package io.kvprefix.metrics;
