package io.kvprefix.internal.offheap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.testing.TestScale;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The writer gate's rule (its class comment and this package's table of rights): while
 * {@link WriterGate#exclusively} runs its body no writer is inside, so it waits for the writers
 * already in and holds new ones at the door. Each test was seen to fail against a gate that breaks
 * the rule: one whose {@code exclusively} does not wait for the writers inside, and one whose
 * {@code enter} does not check the exclusive flag.
 */
class WriterGateTest {
    private static final long GENEROUS_SECONDS = 60;

    @Test
    void exclusivelyWaitsForAWriterInside() throws Exception {
        WriterGate gate = new WriterGate();
        int token = gate.enter();
        AtomicBoolean ran = new AtomicBoolean();
        CompletableFuture<Boolean> excl = CompletableFuture.supplyAsync(
                () -> gate.exclusively(() -> ran.compareAndSet(false, true)), Thread::startVirtualThread);
        assertFalse(doneWithin(excl, 200), "the body ran while a writer was inside");
        assertFalse(ran.get());
        gate.exit(token);
        assertTrue(excl.get(GENEROUS_SECONDS, TimeUnit.SECONDS));
        assertTrue(ran.get());
    }

    @Test
    void aWriterWaitsAtTheDoorWhileTheBodyRuns() throws Exception {
        WriterGate gate = new WriterGate();
        CountDownLatch inBody = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<Boolean> excl = CompletableFuture.supplyAsync(
                () -> gate.exclusively(() -> {
                    inBody.countDown();
                    await(release);
                    return true;
                }),
                Thread::startVirtualThread);
        assertTrue(inBody.await(GENEROUS_SECONDS, TimeUnit.SECONDS));
        CompletableFuture<Integer> writer = CompletableFuture.supplyAsync(gate::enter, Thread::startVirtualThread);
        assertFalse(doneWithin(writer, 200), "a writer entered while the exclusive body ran");
        release.countDown();
        gate.exit(writer.get(GENEROUS_SECONDS, TimeUnit.SECONDS));
        assertTrue(excl.get(GENEROUS_SECONDS, TimeUnit.SECONDS));
    }

    @Test
    void noWriterIsEverInsideAnExclusiveBody() throws Exception {
        WriterGate gate = new WriterGate();
        AtomicInteger inside = new AtomicInteger();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong entries = new AtomicLong();
        Thread[] writers = new Thread[3];
        for (int t = 0; t < writers.length; t++) {
            writers[t] = Thread.ofPlatform().daemon().start(() -> {
                while (!stop.get()) {
                    int token = gate.enter();
                    inside.incrementAndGet();
                    Thread.onSpinWait();
                    inside.decrementAndGet();
                    gate.exit(token);
                    entries.incrementAndGet();
                }
            });
        }
        // Rounds go on until the writers have entered many times, so the two overlap.
        long wantEntries = TestScale.iterations(20_000, 500_000);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(GENEROUS_SECONDS);
        int[] seen = new int[1];
        while (entries.get() < wantEntries && System.nanoTime() < deadline) {
            gate.exclusively(() -> {
                for (int k = 0; k < 16; k++) {
                    seen[0] = Math.max(seen[0], inside.get());
                    Thread.onSpinWait();
                }
                return true;
            });
        }
        stop.set(true);
        for (Thread t : writers) {
            t.join(Duration.ofSeconds(GENEROUS_SECONDS).toMillis());
        }
        assertTrue(entries.get() >= wantEntries, "the writers entered only " + entries.get() + " times");
        assertEquals(0, seen[0], "a writer was inside while an exclusive body ran");
    }

    private static void await(CountDownLatch l) {
        try {
            if (!l.await(GENEROUS_SECONDS, TimeUnit.SECONDS)) {
                throw new AssertionError("never released");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static boolean doneWithin(CompletableFuture<?> f, long millis) throws InterruptedException {
        try {
            f.get(millis, TimeUnit.MILLISECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            throw new AssertionError(e.getCause());
        }
    }
}
