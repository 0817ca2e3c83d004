package io.kvprefix.internal.offheap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.testing.TestScale;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The reader gate's two rules (its class comment and this package's table of rights): {@link
 * ReadGate#synchronize} returns only once every reader that entered before it has left, and it
 * does not wait for readers that enter after it, however many keep coming (the reason for its two
 * epochs). Each test was seen to fail against a gate that breaks its rule: a synchronize that
 * returns at once, and one that waits until no reader of either epoch is inside.
 */
class ReadGateTest {
    private static final Duration GENEROUS = Duration.ofSeconds(60);

    @Test
    void synchronizeWaitsForAReaderInside() throws Exception {
        ReadGate gate = new ReadGate();
        int token = gate.enter();
        CompletableFuture<Void> sync = CompletableFuture.runAsync(gate::synchronize, Thread::startVirtualThread);
        // A gate that does not wait returns at once; give it a fair chance to, then let the reader leave.
        assertFalse(doneWithin(sync, 200), "synchronize returned while a reader that entered before it was inside");
        gate.exit(token);
        sync.get(GENEROUS.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void synchronizeWaitsForNoReaderThatEntersAfterIt() throws InterruptedException {
        // One thread is always inside: it enters again before it leaves, for ever. Readers of the
        // new epoch must not hold a grace period back, so synchronize still returns.
        ReadGate gate = new ReadGate();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong handOvers = new AtomicLong();
        CountDownLatch inside = new CountDownLatch(1);
        Thread.ofPlatform().daemon().start(() -> {
            int held = gate.enter();
            inside.countDown();
            while (!stop.get()) {
                int next = gate.enter();
                gate.exit(held);
                held = next;
                handOvers.incrementAndGet();
            }
            gate.exit(held);
        });
        try {
            assertTrue(inside.await(GENEROUS.toSeconds(), TimeUnit.SECONDS), "the reader never entered");
            assertTimeoutPreemptively(GENEROUS, () -> {
                for (int i = 0; i < 20; i++) {
                    gate.synchronize();
                }
            });
            assertTrue(handOvers.get() > 0, "synchronize returned while the reader was still on its first entry");
        } finally {
            stop.set(true);
        }
    }

    @Test
    void aRetiredObjectIsNeverPoisonedUnderAReaderThatCouldSeeIt() throws Exception {
        // Readers load the current box inside the gate and check, for a while, that it is not poisoned;
        // the writer swaps in a new box, synchronizes, then poisons the old one (as the reclaimer frees
        // memory). It goes on until the readers have read many boxes, so the two overlap.
        ReadGate gate = new ReadGate();
        AtomicReference<AtomicLong> current = new AtomicReference<>(new AtomicLong());
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong violations = new AtomicLong();
        AtomicLong reads = new AtomicLong();
        Thread[] readers = new Thread[2];
        for (int t = 0; t < readers.length; t++) {
            readers[t] = Thread.ofPlatform().daemon().start(() -> {
                while (!stop.get()) {
                    int token = gate.enter();
                    try {
                        AtomicLong box = current.get();
                        for (int k = 0; k < 64; k++) {
                            if (box.get() < 0) {
                                violations.incrementAndGet();
                            }
                            Thread.onSpinWait();
                        }
                    } finally {
                        gate.exit(token);
                    }
                    reads.incrementAndGet();
                }
            });
        }
        long wantReads = TestScale.iterations(20_000, 500_000);
        long deadline = System.nanoTime() + GENEROUS.toNanos();
        for (long i = 1; reads.get() < wantReads && System.nanoTime() < deadline; i++) {
            AtomicLong old = current.getAndSet(new AtomicLong(i));
            gate.synchronize();
            old.set(-1); // poisoned: a reader still on it would see this
        }
        stop.set(true);
        for (Thread t : readers) {
            t.join(GENEROUS.toMillis());
        }
        assertTrue(reads.get() >= wantReads, "the readers read only " + reads.get() + " boxes");
        assertEquals(0, violations.get(), "readers saw a box poisoned after synchronize while they held it");
    }

    private static boolean doneWithin(CompletableFuture<?> f, long millis) throws InterruptedException {
        try {
            f.get(millis, TimeUnit.MILLISECONDS);
            return true;
        } catch (java.util.concurrent.TimeoutException e) {
            return false;
        } catch (java.util.concurrent.ExecutionException e) {
            throw new AssertionError(e.getCause());
        }
    }
}
