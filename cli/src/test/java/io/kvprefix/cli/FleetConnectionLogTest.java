package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.nats.FleetConnection;
import io.kvprefix.nats.testing.NatsServer;
import io.nats.client.Connection;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link FleetConnection}'s log (what {@code relay} and {@code listen --nats} print) while a real nats-server is stopped and started again (issue 31
 * item 6): "NATS connection lost; reconnecting" once per outage however many reconnect attempts
 * fail meanwhile (before: about 7 a second while NATS was down), "re-established" when it is back,
 * and once more for the next outage. The attempts are counted from the connection's own DEBUG
 * records, so the test waits for them rather than for a length of time.
 */
class FleetConnectionLogTest {
    private static final String LOST = "kvprefix: NATS connection lost; reconnecting";
    private static final String BACK = "kvprefix: NATS connection re-established";

    @TempDir
    Path dir;

    /** The records of the {@code io.kvprefix.nats} logger, as "LEVEL message". */
    private static final class Records extends Handler {
        final List<String> lines = new CopyOnWriteArrayList<>();

        @Override
        public void publish(LogRecord r) {
            lines.add(r.getLevel() + " " + r.getMessage());
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}

        long count(String message) {
            return lines.stream().filter(l -> l.endsWith(" " + message)).count();
        }

        /** Records at DEBUG (FINE) after the first {@code from}: jnats' failed attempts and events. */
        long debugSince(int from) {
            return lines.subList(from, lines.size()).stream()
                    .filter(l -> l.startsWith("FINE "))
                    .count();
        }
    }

    @Test
    void aLostConnectionIsWarnedAboutOncePerOutage() throws Exception {
        Logger log = Logger.getLogger("io.kvprefix.nats"); // held: JUL keeps its loggers weakly
        Level was = log.getLevel();
        Records records = new Records();
        records.setLevel(Level.ALL);
        log.setLevel(Level.ALL);
        log.addHandler(records);
        try (NatsServer server = new NatsServer(dir)) {
            Connection c = FleetConnection.open(server.url(), "kvprefix-test-outage");
            try {
                for (int outage = 1; outage <= 2; outage++) {
                    int at = records.lines.size();
                    server.stop();
                    // many reconnect attempts fail while the server is down: wait for several
                    await(
                            "failed reconnect attempts during outage " + outage,
                            records,
                            () -> records.debugSince(at) >= 8);
                    assertEquals(outage, records.count(LOST), "one warning per outage: " + records.lines);
                    server.start();
                    long back = outage;
                    await("the connection re-established", records, () -> records.count(BACK) == back);
                    assertEquals(Connection.Status.CONNECTED, c.getStatus());
                }
                assertEquals(2, records.count(LOST), records.lines.toString());
            } finally {
                c.close();
            }
        } finally {
            log.removeHandler(records);
            log.setLevel(was);
        }
    }

    private static void await(String what, Records records, BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!done.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "never: " + what + "; the log: " + records.lines);
            Thread.sleep(50);
        }
    }
}
