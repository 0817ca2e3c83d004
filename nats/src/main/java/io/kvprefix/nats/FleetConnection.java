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
        Options options;
        try {
            options = new Options.Builder()
                    .servers(url.split(","))
                    .connectionName(name)
                    .maxReconnects(-1)
                    .reconnectWait(Duration.ofMillis(100))
                    .connectionTimeout(Duration.ofSeconds(5))
                    .errorListener(new Quiet())
                    .connectionListener(FleetConnection::changed)
                    .build();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--nats '" + url + "': " + e.getMessage(), e);
        }
        try {
            return Nats.connect(options);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while connecting to " + url, e);
        } catch (IOException e) {
            throw new IOException("cannot connect to NATS at " + url + ": " + e.getMessage(), e);
        }
    }

    private static void changed(Connection c, ConnectionListener.Events e) {
        switch (e) {
            case DISCONNECTED -> LOG.log(Level.WARNING, "kvprefix: NATS connection lost; reconnecting");
            case RECONNECTED -> LOG.log(Level.INFO, "kvprefix: NATS connection re-established");
            default -> LOG.log(Level.DEBUG, "kvprefix: NATS connection " + e);
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
