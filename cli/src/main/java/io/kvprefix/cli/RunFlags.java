package io.kvprefix.cli;

import io.kvprefix.metrics.MetricsServer;
import io.kvprefix.service.EngineStatus;
import io.kvprefix.service.RouterService;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * The options of every command that runs until it is stopped ({@code serve}, {@code epp},
 * {@code listen}, {@code relay}), declared here once: the metrics port, how long to run, quiet; and
 * the run the front doors share once they are up: the {@code READY} line, then until Ctrl-C, SIGTERM
 * or {@code --duration} (docs/OPERATING.md sections 9 and 11).
 *
 * <p>Thread-safety: a picocli mixin, used once by one thread.
 */
final class RunFlags {
    @Option(
            names = "--metrics-port",
            paramLabel = "PORT",
            description = {
                "also serve /metrics (Prometheus text), /health/live and /health/ready on this port",
                "(0: any free port, which it prints; readiness: docs/METRICS.md section 2)"
            })
    Integer metricsPort;

    @Option(
            names = "--duration",
            paramLabel = "SECONDS",
            description = "stop after this many seconds (default: run until Ctrl-C)")
    Double duration;

    @Option(
            names = {"-q", "--quiet"},
            description = "no progress or stats lines on standard error (what fails is still said)")
    boolean quiet;

    /** Checks {@code --metrics-port} (0..65535). */
    void checkMetricsPort() {
        RouterFlags.checkPort("--metrics-port", metricsPort);
    }

    /** {@code --duration}, checked; null: until stopped. */
    Duration runFor() {
        return Check.secondsOrNull("--duration", duration);
    }

    /** The command's lifecycle, with the front doors' 30-second drain. */
    Lifecycle lifecycle(String command) {
        return Lifecycle.start(command, Duration.ofSeconds(30), quiet);
    }

    /** {@code --metrics-port}'s server for {@code service} (null without the option). */
    MetricsServer metrics(RouterService service, String host) {
        if (metricsPort == null) {
            return null;
        }
        if (!(service.meterRegistry() instanceof PrometheusMeterRegistry p)) {
            throw new IllegalStateException("the service's meters are not in a Prometheus registry");
        }
        try {
            return MetricsServer.start(
                    new InetSocketAddress(host, metricsPort), p, service::notReady, service.beforeScrape());
        } catch (IOException e) {
            throw new IllegalArgumentException("--metrics-port " + metricsPort + ": " + e.getMessage(), e);
        }
    }

    /** Engines up now. */
    static long up(RouterService service) {
        return service.engines().stream().filter(EngineStatus::up).count();
    }

    /**
     * Prints {@code READY {PORTS,"metrics_port":M,"engines":N,"engines_up":UP}} ({@code ports} is the
     * front door's own, such as {@code "port":8000}) and runs until stopped; returns once stopping.
     */
    void serveUntilStopped(Lifecycle life, String ports, RouterService service, MetricsServer metrics, long up)
            throws InterruptedException {
        life.result(
                "serving",
                "READY {" + ports + ",\"metrics_port\":"
                        + (metrics == null ? "null" : metrics.address().getPort()) + ",\"engines\":"
                        + service.engines().size() + ",\"engines_up\":" + up + "}");
        life.runUntilStopped(runFor(), null, List.of());
        life.stopping();
    }
}
