package io.kvprefix.service.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.service.AdmissionSlot;
import io.kvprefix.service.ServiceException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Bounded admission: slots, the queue in arrival order, 429 when it is full or a wait is too long, cancelled waits. */
class AdmissionTest {
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();

    @AfterEach
    void stop() {
        timer.shutdownNow();
    }

    @Test
    void slotsThenTheQueueInOrderThenQueueFull() throws Exception {
        Admission a = new Admission(2, 2, TimeUnit.SECONDS.toNanos(60), timer);
        AdmissionSlot s1 = a.acquire().getNow(null);
        AdmissionSlot s2 = a.acquire().getNow(null);
        assertTrue(s1 != null && s2 != null);
        CompletableFuture<AdmissionSlot> w1 = a.acquire();
        CompletableFuture<AdmissionSlot> w2 = a.acquire();
        assertFalse(w1.isDone() || w2.isDone());
        assertEquals(2, a.queued());
        assertEquals("queue_full", code(a.acquire()));
        s1.release();
        s1.release(); // idempotent: frees one slot, not two
        assertTrue(w1.isDone(), "the oldest waiter gets the slot");
        assertFalse(w2.isDone());
        assertEquals(2, a.inFlight());
        w1.get().release();
        s2.release();
        w2.get().release();
        assertEquals(0, a.inFlight());
        assertEquals(0, a.queued());
    }

    @Test
    void aLongWaitIs429AndACancelledWaitGivesItsTurnAway() throws Exception {
        Admission a = new Admission(1, 5, TimeUnit.MILLISECONDS.toNanos(50), timer);
        AdmissionSlot s = a.acquire().getNow(null);
        assertEquals("queue_timeout", code(a.acquire()));
        assertEquals(0, a.queued());
        Admission b = new Admission(1, 5, TimeUnit.SECONDS.toNanos(60), timer);
        AdmissionSlot held = b.acquire().getNow(null);
        CompletableFuture<AdmissionSlot> gone = b.acquire();
        CompletableFuture<AdmissionSlot> next = b.acquire();
        gone.cancel(false);
        held.release();
        assertTrue(next.isDone() && !next.isCompletedExceptionally(), "the cancelled waiter's turn passed on");
        next.get().release();
        assertEquals(0, b.inFlight());
        s.release();
        assertEquals(0, a.inFlight());
    }

    private static String code(CompletableFuture<AdmissionSlot> f) throws InterruptedException {
        try {
            f.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            ServiceException se = assertInstanceOf(ServiceException.class, e.getCause());
            assertEquals(429, se.status());
            return se.code();
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("no answer", e);
        }
        throw new AssertionError("admitted");
    }
}
