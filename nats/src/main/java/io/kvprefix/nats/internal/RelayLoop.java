package io.kvprefix.nats.internal;

import io.nats.client.JetStream;
import io.nats.client.PublishOptions;
import io.nats.client.api.PublishAck;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The relay's publishing thread: takes each engine's next frame from its {@link Outbox} and
 * publishes it asynchronously (one frame in flight per engine, any number of engines at once),
 * settling it when JetStream acknowledges it or sending it again after a failure or a missing ack.
 *
 * <p>Thread-safety: {@link #add}, {@link #poke} and {@link #stop} may be called from any thread;
 * {@link #run} runs on the relay's own thread.
 */
public final class RelayLoop implements Runnable {
    private static final System.Logger LOG = System.getLogger("io.kvprefix.nats");
    private static final long RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    private final JetStream js;
    private final String stream;
    private final long ackTimeoutMillis;
    private final List<Outbox> outboxes = new CopyOnWriteArrayList<>();
    private final Object signal = new Object();
    private boolean poked;
    private volatile boolean stopping;
    private volatile boolean paused;
    private volatile long passes;
    private volatile boolean warned;

    public RelayLoop(JetStream js, String stream, long ackTimeoutMillis) {
        this.js = js;
        this.stream = stream;
        this.ackTimeoutMillis = ackTimeoutMillis;
    }

    /** Starts publishing {@code o}'s frames. */
    public void add(Outbox o) {
        outboxes.add(o);
        poke();
    }

    /** Wakes the loop: a record was queued or a frame settled. */
    public void poke() {
        synchronized (signal) {
            poked = true;
            signal.notifyAll();
        }
    }

    /**
     * Holds publishing while {@code paused} (frames in flight settle; no frame is sent meanwhile); a
     * pause returns once the loop has started a pass that sees it (or after a second).
     */
    public void pause(boolean paused) {
        long from = passes;
        this.paused = paused;
        poke();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        while (paused && !stopping && passes < from + 2 && System.nanoTime() < deadline) {
            poke();
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Asks the loop to stop (frames in flight stay unsettled). */
    public void stop() {
        stopping = true;
        poke();
    }

    @Override
    public void run() {
        while (!stopping) {
            long now = System.nanoTime();
            boolean hold = paused;
            passes++; // only the loop's thread writes it
            for (Outbox o : hold ? List.<Outbox>of() : outboxes) {
                Outbox.InFlight f = o.take(now);
                if (f != null) {
                    publish(o, f);
                }
            }
            synchronized (signal) {
                if (!poked && !stopping) {
                    try {
                        signal.wait(20);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                poked = false;
            }
        }
    }

    private void publish(Outbox o, Outbox.InFlight f) {
        PublishOptions opts = PublishOptions.builder()
                .expectedStream(stream)
                .messageId(f.id())
                .build();
        CompletableFuture<PublishAck> ack;
        try {
            ack = js.publishAsync(o.subject(), f.headers(), f.body(), opts);
        } catch (RuntimeException e) {
            fail(o, f, e);
            return;
        }
        ack.orTimeout(ackTimeoutMillis, TimeUnit.MILLISECONDS).whenComplete((a, err) -> {
            if (err == null) {
                o.acked(f, a.isDuplicate());
                warned = false;
            } else {
                fail(o, f, err);
            }
            poke();
        });
    }

    private void fail(Outbox o, Outbox.InFlight f, Throwable e) {
        Throwable cause =
                e.getCause() != null && e instanceof java.util.concurrent.CompletionException ? e.getCause() : e;
        String why = cause instanceof java.util.concurrent.TimeoutException
                ? "no ack within " + ackTimeoutMillis + " ms"
                : String.valueOf(cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage());
        o.failed(f, System.nanoTime() + RETRY_NANOS, why);
        if (!warned) {
            warned = true; // once per outage: the stats count every retry
            LOG.log(
                    Level.WARNING,
                    "kvprefix relay: publishing to " + o.subject() + " failed (" + why
                            + "); retrying the same frame until it lands");
        }
    }
}
