package io.kvprefix.epp;

import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.kvprefix.epp.internal.EppMeters;
import io.kvprefix.epp.internal.Pick;
import io.kvprefix.epp.internal.Picker;
import io.kvprefix.epp.internal.Wire;
import io.kvprefix.service.RouterService;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * {@code kvprefix epp}: an Endpoint Picker for the Gateway API Inference Extension over a
 * {@link RouterService} (docs/EPP.md): Envoy's ext_proc {@code ExternalProcessor} on one port, gRPC
 * health ({@code liveness}, {@code readiness}, the ext_proc service) on another. Readiness follows the
 * service: NOT_SERVING until an engine is up and the index has caught up with the engines' events.
 *
 * <pre>{@code
 * try (RouterService service = RouterService.builder().engine(EngineSpec.parse("7=http://10.0.0.5:8000")).build();
 *         EppServer epp = EppServer.start(service, EppServer.options().port(9002).healthPort(9003))) {
 *     ... // the gateway asks 9002; the kubelet probes 9003
 * }
 * }</pre>
 *
 * <p>Thread-safety: thread-safe; {@link #close()} may be called from any thread.
 */
public final class EppServer implements AutoCloseable {
    /** The health service names a probe may ask for, beside the empty one (the server's). */
    public static final String LIVENESS = "liveness";

    /** The readiness service name (GIE's). */
    public static final String READINESS = "readiness";

    private final Server grpc;
    private final Server health;
    private final HealthStatusManager status;
    private final ScheduledExecutorService timer;
    private final EppMeters meters;

    private EppServer(
            Server grpc, Server health, HealthStatusManager status, ScheduledExecutorService timer, EppMeters meters) {
        this.grpc = grpc;
        this.health = health;
        this.status = status;
        this.timer = timer;
        this.meters = meters;
    }

    /** Options at their defaults. */
    public static Options options() {
        return new Options();
    }

    /**
     * Binds both ports and starts serving.
     *
     * @throws IllegalArgumentException naming the port if it cannot be bound
     */
    public static EppServer start(RouterService service, Options o) {
        Objects.requireNonNull(service, "service");
        EppMeters meters = new EppMeters(service.meterRegistry());
        Pick pick = new Pick(service, o.fallbacks);
        Server grpc = bind(
                NettyServerBuilder.forAddress(new InetSocketAddress(o.host, o.port))
                        .addService(new Picker(pick, meters, service.maxBodyBytes()))
                        .maxInboundMessageSize((int) Math.min(Integer.MAX_VALUE, service.maxBodyBytes() + 65_536)),
                "--port " + o.port);
        HealthStatusManager status = new HealthStatusManager();
        Server health;
        try {
            health = bind(
                    NettyServerBuilder.forAddress(new InetSocketAddress(o.host, o.healthPort))
                            .addService(status.getHealthService()),
                    "--health-port " + o.healthPort);
        } catch (RuntimeException e) {
            grpc.shutdownNow();
            throw e;
        }
        status.setStatus(LIVENESS, ServingStatus.SERVING);
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "kvprefix-epp-readiness");
            t.setDaemon(true);
            return t;
        });
        Runnable ready = () -> {
            ServingStatus s = service.notReady() == null ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
            status.setStatus(READINESS, s);
            status.setStatus(Wire.EXT_PROC_SERVICE, s);
            status.setStatus(HealthStatusManager.SERVICE_NAME_ALL_SERVICES, s);
        };
        ready.run();
        timer.scheduleWithFixedDelay(ready, o.readinessMillis, o.readinessMillis, TimeUnit.MILLISECONDS);
        return new EppServer(grpc, health, status, timer, meters);
    }

    private static Server bind(NettyServerBuilder b, String what) {
        try {
            return b.build().start();
        } catch (IOException e) {
            throw new IllegalArgumentException(what + ": cannot listen: " + e.getMessage(), e);
        }
    }

    /** The ext_proc port (the one the system chose, if 0 was asked for). */
    public int port() {
        return ((InetSocketAddress) grpc.getListenSockets().get(0)).getPort();
    }

    /** The health port. */
    public int healthPort() {
        return ((InetSocketAddress) health.getListenSockets().get(0)).getPort();
    }

    /** ext_proc streams open now. */
    public int openStreams() {
        return meters.open();
    }

    /**
     * Stops: health goes NOT_SERVING, new streams are refused, open ones get up to 10 s to end, then
     * both servers stop. The service is the caller's to close. Idempotent.
     */
    @Override
    public void close() {
        timer.shutdownNow();
        status.enterTerminalState();
        grpc.shutdown();
        try {
            if (!grpc.awaitTermination(10, TimeUnit.SECONDS)) {
                grpc.shutdownNow();
            }
        } catch (InterruptedException e) {
            grpc.shutdownNow();
            Thread.currentThread().interrupt();
        }
        health.shutdownNow();
    }

    /**
     * The server's options.
     *
     * <p>Thread-safety: not thread-safe; use one per thread.
     */
    public static final class Options {
        private String host = "0.0.0.0";
        private int port = 9002;
        private int healthPort = 9003;
        private int fallbacks = 2;
        private long readinessMillis = 1000;

        Options() {}

        /** The address to bind (default {@code 0.0.0.0}). */
        public Options host(String host) {
            this.host = Objects.requireNonNull(host, "host");
            return this;
        }

        /** The ext_proc port (default 9002, GIE's; 0: any free port). */
        public Options port(int port) {
            this.port = checkPort(port, "--port");
            return this;
        }

        /** The gRPC health port (default 9003, GIE's; 0: any free port). */
        public Options healthPort(int port) {
            this.healthPort = checkPort(port, "--health-port");
            return this;
        }

        /** How many next-best engines follow the choice in the destination list (default 2). */
        public Options fallbacks(int n) {
            if (n < 0) {
                throw new IllegalArgumentException("--fallbacks must be >= 0, got " + n);
            }
            this.fallbacks = n;
            return this;
        }

        /** How often readiness is checked against the service, in milliseconds (default 1000). */
        public Options readinessInterval(long millis) {
            if (millis < 1) {
                throw new IllegalArgumentException("the readiness interval must be >= 1 ms, got " + millis);
            }
            this.readinessMillis = millis;
            return this;
        }

        private static int checkPort(int port, String option) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException(option + " must be 0..65535 (0: any free port), got " + port);
            }
            return port;
        }
    }
}
