package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The run-until-stopped lifecycle of listen, relay and the fleet replica, in this JVM: its loop ends
 * at the deadline or when the input ends, runs its periodic tasks in order, and prints the final lines
 * before the summary. A stop by signal is {@code ListenCommandTest}'s (a real process and SIGTERM).
 */
class LifecycleTest {
    @Test
    @Timeout(60)
    void theLoopEndsWhenItsInputEndsWithoutADeadline() throws Exception {
        AtomicInteger ticks = new AtomicInteger();
        try (Lifecycle life = Lifecycle.start("test", Duration.ofSeconds(1), true)) {
            life.runUntilStopped(
                    null,
                    () -> ticks.get() >= 3,
                    List.of(new Lifecycle.Periodic(Duration.ofMillis(1), ticks::incrementAndGet)));
        }
        assertTrue(ticks.get() >= 3, "" + ticks);
    }

    @Test
    @Timeout(60)
    void theLoopEndsAtTheDeadlineAndRunsDueTasksInTheirOrder() throws Exception {
        List<String> ran = new ArrayList<>();
        long t0 = System.nanoTime();
        try (Lifecycle life = Lifecycle.start("test", Duration.ofSeconds(1), true)) {
            life.runUntilStopped(
                    Duration.ofMillis(400),
                    null,
                    List.of(
                            new Lifecycle.Periodic(Duration.ofMillis(50), () -> ran.add("save")),
                            new Lifecycle.Periodic(Duration.ofMillis(50), () -> ran.add("stats"))));
        }
        assertTrue(System.nanoTime() - t0 >= 400_000_000L, "not before the deadline");
        assertTrue(ran.size() >= 2, "" + ran);
        for (int i = 0; i + 1 < ran.size(); i += 2) {
            assertEquals(List.of("save", "stats"), ran.subList(i, i + 2), "due together, in the order given: " + ran);
        }
    }

    @Test
    void theLastLinesGoToStandardOutputThenTheSummaryToStandardError() {
        PrintStream oldOut = System.out, oldErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream(), err = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            try (Lifecycle life = Lifecycle.start("relay", Duration.ofSeconds(1), false)) {
                life.log("one");
                life.result("a summary", "{\"a\":1}", "{\"b\":2}");
            }
            try (Lifecycle quiet = Lifecycle.start("relay", Duration.ofSeconds(1), true)) {
                quiet.status("not shown");
                quiet.result("not shown either", "{\"c\":3}");
            }
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
        }
        assertEquals("{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n", out.toString(StandardCharsets.UTF_8));
        assertEquals("kvprefix relay: one\nkvprefix relay: a summary\n", err.toString(StandardCharsets.UTF_8));
    }
}
