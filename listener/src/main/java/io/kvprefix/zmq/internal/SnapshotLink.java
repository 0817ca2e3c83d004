package io.kvprefix.zmq.internal;

import io.kvprefix.zmq.DecodeIssue;
import io.kvprefix.zmq.SubscriberStats.Counter;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The sockets of the snapshot protocol for one engine (provisional vLLM PR #57789, opted into with
 * {@code snapshot=ENDPOINT}; docs/LISTENER.md section 8): a DEALER to the engine's snapshot endpoint
 * that asks {@code ["", "SNAPSHOT"]} and reads the answer, and the live stream's batches and idle
 * heartbeats (an empty payload; its sequence frame names the last batch published) fed to a
 * {@link SnapshotSync}, which decides what the owning {@link EngineSession} applies. A request
 * unanswered for the replay timeout (doubling, up to 8 times it) is asked again on a new socket, so
 * a late answer cannot be taken for the new one's; a snapshot batch that does not decode fails the
 * snapshot closed.
 *
 * <p>Thread-safety: not thread-safe; the subscriber's I/O thread drives it, as it does the session.
 */
public final class SnapshotLink implements SnapshotSync.Port {
    private final EngineSession session;
    private final String endpoint;
    private final EngineCounters counters;
    private final long timeoutNanos;
    private final SnapshotSync sync;
    private final Consumer<ZMQ.Socket> configure;
    private ZContext context;
    private ZMQ.Socket dealer;
    private long sentAt;
    private long timeout;
    private boolean sendFailed;

    /**
     * @param session the engine's session, which decodes and applies
     * @param endpoint the engine's snapshot endpoint
     * @param settings the subscriber's settings (the replay timeout, the live batches held at most)
     * @param configure sets a new socket's options as the session does its own
     */
    public SnapshotLink(
            EngineSession session,
            String endpoint,
            EngineCounters counters,
            SubscriberSettings settings,
            Consumer<ZMQ.Socket> configure) {
        this.session = session;
        this.endpoint = endpoint;
        this.counters = counters;
        this.timeoutNanos = settings.replayTimeoutNanos();
        this.timeout = timeoutNanos;
        this.configure = configure;
        this.sync = new SnapshotSync(this, settings.maxPendingBatches(), counters);
    }

    /** Opens the DEALER to the snapshot endpoint. */
    public void open(ZContext ctx) {
        this.context = ctx;
        dealer = ctx.createSocket(SocketType.DEALER);
        configure.accept(dealer);
        dealer.setRcvHWM(1_000); // one answer per request; a snapshot is one multipart message
        if (!dealer.connect(endpoint)) {
            throw new IllegalArgumentException("cannot connect to " + endpoint + " (errno " + dealer.errno() + ")");
        }
    }

    /** Clears the engine's workers and asks for its snapshot. */
    public void start() {
        sync.start();
    }

    /** The snapshot socket (for polling), or null. */
    public ZMQ.Socket socket() {
        return dealer;
    }

    /** Closes the socket (idempotent). */
    public void close() {
        if (dealer != null) {
            dealer.close();
            dealer = null;
        }
    }

    /** A live batch with a readable number. */
    public void onLive(long seq, String id, byte[] payload) {
        sync.onLive(id, seq, payload);
    }

    /** A live message with an empty payload: an idle heartbeat naming the last batch published (-1: none). */
    public void onHeartbeat(byte[] topic, byte[] seqFrame) {
        if (seqFrame.length != 8 && seqFrame.length != 24) {
            counters.issue(DecodeIssue.BAD_SEQUENCE);
            return;
        }
        sync.onHeartbeat(
                PublisherIdentity.of(topic, seqFrame), ByteBuffer.wrap(seqFrame).getLong());
    }

    /** Reads the snapshot socket's answers (at most {@code max}). */
    public void read(int max) {
        for (int i = 0; i < max && dealer != null; i++) {
            byte[] first = dealer.recv(ZMQ.DONTWAIT);
            if (first == null) {
                break;
            }
            List<byte[]> frames = new ArrayList<>();
            frames.add(first);
            while (dealer.hasReceiveMore()) {
                frames.add(dealer.recv(0));
            }
            // ["", uuid, resume_seq, count, batch..., "END"]; without the delimiter it is refused whole
            sync.onSnapshotFrames(first.length == 0 ? frames.subList(1, frames.size()) : frames);
            if (sync.synced()) {
                timeout = timeoutNanos;
            }
        }
    }

    /** Time passes: an unanswered request is asked again on a new socket, an unsent one is sent. */
    public void tick(long now) {
        if (sync.waiting() && now - sentAt > timeout) {
            counters.increment(Counter.SNAPSHOT_TIMEOUTS);
            close();
            open(context);
            session.socketsReplaced();
            timeout = Math.min(timeout * 2, timeoutNanos * 8);
            sync.retry("no snapshot answer within " + (timeout / 2 / 1_000_000) + " ms");
        } else if (sendFailed && !sync.waiting() && now - sentAt > timeoutNanos / 10) {
            sync.retry("the snapshot request could not be sent");
        }
    }

    /** {@code snapshotting}, {@code live} or {@code unsynced} ({@link SnapshotSync#state}). */
    public String state() {
        return sync.state();
    }

    /** The last live number applied (a snapshot's resume point counts), or -1. */
    public long lastApplied() {
        return sync.lastApplied();
    }

    /** Live batches held while a snapshot is awaited. */
    public int held() {
        return sync.held();
    }

    // ------------------------------------------------------------------ SnapshotSync.Port

    @Override
    public void apply(long seq, byte[] payload) {
        if (seq >= 0) {
            session.apply(seq, payload);
            return;
        }
        long errorsBefore = decodeErrors();
        session.apply(seq, payload);
        if (decodeErrors() != errorsBefore) {
            throw new IllegalArgumentException("a snapshot batch did not decode");
        }
    }

    private long decodeErrors() {
        long n = 0;
        for (DecodeIssue i : DecodeIssue.values()) {
            if (i.category() == DecodeIssue.Category.ERROR) {
                n += counters.get(i);
            }
        }
        return n;
    }

    @Override
    public boolean requestSnapshot() {
        boolean sent;
        sentAt = System.nanoTime();
        try {
            sent = dealer != null
                    && dealer.send(new byte[0], ZMQ.SNDMORE | ZMQ.DONTWAIT)
                    && dealer.send(SnapshotReply.REQUEST, ZMQ.DONTWAIT);
        } catch (RuntimeException e) {
            sent = false;
        }
        sendFailed = !sent;
        return sent;
    }

    @Override
    public void clearWorkers() {
        session.clearWorkers();
    }

    @Override
    public void log(boolean warning, String message) {
        session.log(warning, message);
    }
}
