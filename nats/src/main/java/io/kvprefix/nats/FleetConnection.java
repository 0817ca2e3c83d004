package io.kvprefix.nats;

import io.nats.client.Connection;
import io.nats.client.ConnectionListener;
import io.nats.client.Consumer;
import io.nats.client.ErrorListener;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.time.Duration;

/**
 * Opens the NATS connection a relay or a replica uses when the application has none of its own: it
 * reconnects forever (every 100 ms at first, as jnats backs off), keeps what is published meanwhile
 * in jnats' reconnect buffer, and reports connection changes and errors as one-line log records on
 * the {@code io.kvprefix.nats} {@link System.Logger} instead of jnats' stack traces.
 *
 * <p>Thread-safety: stateless.
 */
public final class FleetConnection {
    private static final System.Logger LOG = System.getLogger("io.kvprefix.nats");

    private FleetConnection() {}

    /**
     * Connects to {@code url} ({@code nats://HOST:PORT}, or several separated by commas), naming the
     * connection {@code name} on the server.
     *
     * @throws IOException with a one-line reason if the server cannot be reached now
     * @throws IllegalArgumentException if {@code url} is not a NATS URL
     */
    public static Connection open(String url, String name) throws IOException {
        String[] servers = url.split(",", -1);
        for (String s : servers) {
            if (s.isBlank()) { // jnats would take an empty one for nats://localhost:4222
                throw new IllegalArgumentException(
                        "--nats '" + url + "': give one or more nats://HOST:PORT, separated by commas");
            }
        }
        Options options;
        Changes changes = new Changes();
        try {
            options = new Options.Builder()
                    .servers(servers)
                    .connectionName(name)
                    .maxReconnects(-1)
                    .reconnectWait(Duration.ofMillis(100))
                    .connectionTimeout(Duration.ofSeconds(5))
                    .errorListener(new Quiet())
                    .connectionListener((conn, e) -> changes.on(e))
                    .build();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--nats '" + url + "': " + reason(e), e);
        }
        try {
            Connection c = Nats.connect(options);
            changes.established = true;
            return c;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while connecting to " + url, e);
        } catch (IOException e) {
            throw new IOException("cannot connect to NATS at " + url + ": " + e.getMessage(), e);
        }
    }

    /** The innermost message of {@code e}'s causes, without exception class names (a URISyntaxException's reason, say). */
    private static String reason(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        String m = t instanceof java.net.URISyntaxException u
                ? u.getReason() + " at index " + u.getIndex()
                : t.getMessage();
        return m == null ? "not a NATS URL" : m.replaceAll("[a-z]+(\\.[a-z]+)+\\.[A-Za-z]*Exception: ", "");
    }

    /**
     * Connection changes as log lines: a loss is warned about once per outage, and only for a
     * connection that had been established (a first connect that fails says so itself); the
     * re-established connection ends the outage.
     */
    private static final class Changes {
        private volatile boolean established;
        private volatile boolean lost;

        void on(ConnectionListener.Events e) {
            switch (e) {
                case CONNECTED -> established = true;
                case DISCONNECTED -> {
                    if (established && !lost) {
                        lost = true;
                        LOG.log(Level.WARNING, "kvprefix: NATS connection lost; reconnecting");
                    }
                }
                case RECONNECTED -> {
                    lost = false;
                    LOG.log(Level.INFO, "kvprefix: NATS connection re-established");
                }
                default -> LOG.log(Level.DEBUG, "kvprefix: NATS connection " + e);
            }
        }
    }

    /** jnats' errors as one line each at DEBUG (the connection listener says what matters). */
    private static final class Quiet implements ErrorListener {
        @Override
        public void errorOccurred(Connection conn, String error) {
            LOG.log(Level.DEBUG, "kvprefix: NATS error: " + error);
        }

        @Override
        public void exceptionOccurred(Connection conn, Exception exp) {
            LOG.log(Level.DEBUG, "kvprefix: NATS exception: " + exp);
        }

        @Override
        public void slowConsumerDetected(Connection conn, Consumer consumer) {
            LOG.log(Level.WARNING, "kvprefix: NATS slow consumer (messages dropped by the client)");
        }
    }
}
