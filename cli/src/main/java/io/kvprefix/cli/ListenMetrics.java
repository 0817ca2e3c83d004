package io.kvprefix.cli;

import io.kvprefix.PrefixIndex;
import io.kvprefix.metrics.MetricsServer;
import io.kvprefix.metrics.PrefixIndexMetrics;
import io.kvprefix.metrics.SubscriberMetrics;
import io.kvprefix.zmq.KvEventSubscriber;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The metrics endpoint of {@code kvprefix listen --metrics-port} and {@code relay --metrics-port}
 * (docs/METRICS.md section 2): a
 * Prometheus registry with the index's and the subscriber's meters, served with {@code /health/live}
 * and {@code /health/ready} (ready once the subscriber runs and every engine has synced, or been
 * declared absent when {@code --ready-with-absent-engines} allows it).
 *
 * <p>Thread-safety: {@link #watch}, {@link #watchSnapshots} and {@link #close} on the command's
 * thread (before the saves); the endpoint's thread reads the volatile subscriber.
 */
final class ListenMetrics implements AutoCloseable {
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final List<Runnable> refresh = new CopyOnWriteArrayList<>();
    private final MetricsServer server;
    private volatile java.util.function.Supplier<io.kvprefix.zmq.SubscriberStats> subscriber;
    /** A replica's or a Dynamo source's meters, whose readiness then rules; null with a subscriber. */
    private volatile StatsMeters<?> stream;

    private volatile String notReady = "starting";
    private volatile boolean absentIsReady;
    private io.micrometer.core.instrument.Counter savesOk;
    private io.micrometer.core.instrument.Counter savesFailed;
    private volatile long lastSaveNanos = -1;

    private ListenMetrics(String host, int port) {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("--metrics-port must be 0..65535 (0: any free port), got " + port);
        }
        InetSocketAddress address = new InetSocketAddress(host, port);
        if (address.isUnresolved()) {
            throw new IllegalArgumentException("--metrics-host: cannot resolve '" + host + "'");
        }
        try {
            server = MetricsServer.start(
                    address, registry, this::readiness, List.of(() -> refresh.forEach(Runnable::run)));
        } catch (IOException e) {
            throw new IllegalArgumentException("--metrics-port " + port + ": " + e.getMessage(), e);
        }
    }

    /**
     * Binds the meters of {@code listen --snapshot}'s saves; only a process that saves a snapshot
     * exports them (a relay or a replica would show a save that never happens: docs/METRICS.md section 1).
     */
    void watchSnapshots() {
        savesOk = saves("ok");
        savesFailed = saves("failed");
        io.micrometer.core.instrument.Gauge.builder("kvprefix.snapshot.age", this, ListenMetrics::snapshotAge)
                .description("seconds since the last snapshot --snapshot saved, -1 before the first")
                .baseUnit("seconds")
                .register(registry);
    }

    private io.micrometer.core.instrument.Counter saves(String result) {
        return io.micrometer.core.instrument.Counter.builder("kvprefix.snapshot.saves")
                .description("saves of --snapshot, by result (docs/METRICS.md section 1)")
                .tag("result", result)
                .register(registry);
    }

    private double snapshotAge() {
        long at = lastSaveNanos;
        return at < 0 ? -1 : (System.nanoTime() - at) / 1e9;
    }

    /** A save of {@code --snapshot} ended: counted by result; a good one resets the snapshot's age ({@link #watchSnapshots} first). */
    void saved(boolean ok) {
        if (ok) {
            savesOk.increment();
            lastSaveNanos = System.nanoTime();
        } else {
            savesFailed.increment();
        }
    }

    /** Binds the endpoint (a usage error, exit status 2, if it cannot be bound). */
    static ListenMetrics start(String host, int port) {
        return new ListenMetrics(host, port);
    }

    /** Where the endpoint listens, for the log line. */
    String url() {
        InetSocketAddress a = server.address();
        String host =
                a.getAddress().isAnyLocalAddress() ? "0.0.0.0" : a.getAddress().getHostAddress();
        return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort() + "/metrics";
    }

    /** {@code index} with its match calls timed, and its meters bound. */
    PrefixIndex instrument(PrefixIndex index) {
        PrefixIndex timed = PrefixIndexMetrics.timed(index, registry);
        PrefixIndexMetrics m = new PrefixIndexMetrics(timed);
        m.bindTo(registry);
        refresh.add(m::refresh);
        return timed;
    }

    /** Binds the subscriber's meters; readiness follows it from now on ({@code absentIsReady}: see the option). */
    void watch(KvEventSubscriber sub, boolean absentIsReady) {
        this.absentIsReady = absentIsReady;
        SubscriberMetrics m = new SubscriberMetrics(sub);
        m.bindTo(registry);
        refresh.add(m::refresh);
        subscriber = sub::stats;
        notReady = null;
    }

    /**
     * Binds a relay's meters and those of the subscriber inside it; readiness follows that subscriber
     * from now on, by the rule {@code listen}'s has (docs/METRICS.md section 2).
     */
    void watch(io.kvprefix.nats.EventRelay relay, boolean absentIsReady) {
        this.absentIsReady = absentIsReady;
        RelayMeters r = new RelayMeters(relay);
        r.bindTo(registry);
        refresh.add(r::refresh);
        SubscriberMetrics m = new SubscriberMetrics(() -> relay.stats().subscriber(), List.of());
        m.bindTo(registry);
        refresh.add(m::refresh);
        subscriber = () -> relay.stats().subscriber();
        notReady = null;
    }

    /** Binds a fleet replica's meters; readiness follows it from now on (docs/METRICS.md section 2). */
    void watch(io.kvprefix.nats.StreamReplica replica) {
        watchStream(new ReplicaMeters(replica, replica.stats()));
    }

    /** Binds a Dynamo source's meters; readiness follows it from now on (docs/METRICS.md section 2). */
    void watch(DynamoMeters m) {
        watchStream(m);
    }

    private void watchStream(StatsMeters<?> m) {
        m.bindTo(registry);
        refresh.add(m::refresh);
        this.stream = m;
        notReady = null;
    }

    /** The subscriber has stopped: not ready any more (the endpoint still serves until {@link #close}). */
    void stopping() {
        notReady = "stopping";
    }

    private String readiness() {
        String why = notReady;
        if (why != null) {
            return why;
        }
        StatsMeters<?> m = stream;
        return m != null ? m.notReady() : subscriber.get().notReady(absentIsReady);
    }

    @Override
    public void close() {
        server.close();
        registry.close();
    }
}
