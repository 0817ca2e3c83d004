package io.kvprefix.zmq.internal;

import io.kvprefix.EventStatus;
import io.kvprefix.KvEvent;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.zmq.BatchDecodeException;
import io.kvprefix.zmq.BatchTap;
import io.kvprefix.zmq.DecodeIssue;
import io.kvprefix.zmq.DecodedBatch;
import io.kvprefix.zmq.EngineEndpoint;
import io.kvprefix.zmq.EngineEventDecoder;
import io.kvprefix.zmq.ResumePoint;
import io.kvprefix.zmq.SubscriberStats.Counter;
import io.kvprefix.zmq.SubscriberStats.EventKind;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZEvent;
import org.zeromq.ZMQ;
import org.zeromq.ZMonitor;

/**
 * One subscribed engine: its SUB socket (live batches) and a monitor of its connections, its DEALER
 * socket (replay requests and answers), its decoder (the {@link EngineEventDecoder} of the engine's
 * format) and {@link EngineSync}, and its counters. Events are applied to the index here, in sequence
 * order. The publisher's identity, when its frames carry one, is read by {@link PublisherIdentity}.
 * With a snapshot endpoint, a {@link SnapshotLink} replaces the replay socket and {@link EngineSync}
 * (docs/LISTENER.md section 8). Without an index, the batches are handed to a {@link BatchTap} instead.
 *
 * <p>Thread-safety: every method except the gauges ({@link #engine()}, {@link #counters()},
 * {@link #state()}, {@link #lastSeq()}, {@link #lagMillis()}, {@link #pending()},
 * {@link #resumePoint()}) must be called on the subscriber's I/O thread, which owns the sockets; the
 * gauges may be read from any thread.
 */
public final class EngineSession implements EngineSync.Port {
    private static final System.Logger LOG = System.getLogger("io.kvprefix.zmq");
    /** Replay end marker: a sequence frame of eight 0xff bytes (vLLM's -1) with an empty payload. */
    private static final long END_SEQ = -1L;

    private static final AtomicLong MONITORS = new AtomicLong();

    private final EngineEndpoint engine;
    /** The index fed, or null when a {@link BatchTap} is handed the batches instead. */
    private final PrefixIndex index;

    private final BatchTap tap;
    /** Where to take up the stream, or null to start it afresh. */
    private final ResumePoint resume;

    private final SubscriberSettings settings;
    private final EngineCounters counters = new EngineCounters();
    private final EngineEventDecoder decoder;
    private final EngineSync sync;
    /** With a snapshot endpoint, the snapshot protocol's sockets and state machine; else null. */
    private final SnapshotLink snapshots;
    /** The workers this engine has fed, which a resync clears. */
    private final Set<Worker> workersFed = new LinkedHashSet<>();

    private final Set<DecodeIssue> logged = EnumSet.noneOf(DecodeIssue.class);
    private boolean applyErrorLogged;
    private Runnable socketsChanged = () -> {};

    private ZContext context;
    private ZMQ.Socket sub;
    private ZMQ.Socket monitor;
    private ZMQ.Socket dealer;
    /** Whether the live connection was lost since it was last established. */
    private boolean disconnected;

    private volatile String state = "waiting";
    private volatile long lastSeq = -1;
    private volatile long lagMillis = -1;
    private volatile int pending;
    private volatile ResumePoint resumePoint;

    /**
     * A session that feeds {@code index}, or, when {@code index} is null, hands its batches to
     * {@code tap}.
     *
     * @param resume where the state of this engine ends (restored from a snapshot, or where a relay
     *     stopped), or null to start from sequence 0
     */
    public EngineSession(
            EngineEndpoint engine, PrefixIndex index, BatchTap tap, SubscriberSettings settings, ResumePoint resume) {
        if ((index == null) == (tap == null)) {
            throw new IllegalArgumentException("a session feeds an index or a tap, exactly one");
        }
        this.engine = engine;
        this.index = index;
        this.tap = tap;
        this.resume = resume;
        this.settings = settings;
        this.decoder = EngineEventDecoder.forEngine(engine);
        // with a snapshot endpoint the snapshot replaces a restored position, and EngineSync (no replay) only counts
        ResumePoint from = engine.snapshotEndpoint().isPresent() ? null : resume;
        this.sync = new EngineSync(
                this,
                counters,
                engine.replayEndpoint().isPresent(),
                from == null ? 0 : from.nextSeq(),
                from == null || from.batchHash().isEmpty()
                        ? null
                        : from.batchHash().getAsLong(),
                settings.replayTimeoutNanos(),
                settings.maxPendingBatches());
        if (engine.snapshotEndpoint().isPresent() && tap != null) {
            throw new IllegalArgumentException("engine '" + engine + "': snapshot= is read by a subscriber that feeds "
                    + "an index, not by a relay (docs/LISTENER.md section 8)");
        }
        this.snapshots = engine.snapshotEndpoint()
                .map(e -> new SnapshotLink(this, e, counters, settings, this::configure))
                .orElse(null);
        engine.dpRank().ifPresent(r -> workersFed.add(new Worker(engine.workerId(), r)));
        if (resume != null && index != null && engine.dpRank().isEmpty()) {
            // the restored state holds the ranks its batches named: a resync must clear them too
            for (Worker w : index.workers()) {
                if (w.workerId() == engine.workerId()) {
                    workersFed.add(w);
                }
            }
        }
        publishGauges();
    }

    public EngineEndpoint engine() {
        return engine;
    }

    public EngineCounters counters() {
        return counters;
    }

    public String state() {
        return state;
    }

    public long lastSeq() {
        return lastSeq;
    }

    public long lagMillis() {
        return lagMillis;
    }

    public int pending() {
        return pending;
    }

    /**
     * Before {@link #open}: the index was restored from a snapshot in which this engine had fed
     * {@code workers} (a resync clears them too).
     */
    public void fedBefore(Collection<Worker> workers) {
        workersFed.addAll(workers);
    }

    /** The last batch applied (-1 if none), for a snapshot; on the I/O thread. */
    public long lastApplied() {
        return snapshots != null ? snapshots.lastApplied() : sync.lastApplied();
    }

    /** The hash of the last batch applied, if known, for a snapshot; on the I/O thread. */
    public java.util.OptionalLong lastHash() {
        return sync.lastHashKnown() ? java.util.OptionalLong.of(sync.lastHash()) : java.util.OptionalLong.empty();
    }

    /** The workers this engine has fed (which a resync clears), for a snapshot; on the I/O thread. */
    public List<Worker> workersFed() {
        return List.copyOf(workersFed);
    }

    /** Where the index's state of this engine ends now (the last batch applied), if anywhere. */
    public Optional<ResumePoint> resumePoint() {
        return Optional.ofNullable(resumePoint);
    }

    // ------------------------------------------------------------------ sockets (I/O thread)

    /** Creates and connects the sockets; {@code socketsChanged} is called whenever they are replaced. */
    public void open(ZContext ctx, Runnable socketsChanged) {
        this.context = ctx;
        this.socketsChanged = socketsChanged;
        try {
            sub = ctx.createSocket(SocketType.SUB);
            configure(sub);
            sub.setRcvHWM(settings.receiveHighWaterMark());
            sub.subscribe(engine.topic().getBytes(StandardCharsets.UTF_8));
            // the connection's drops and handshakes: a reconnected engine may be another process
            String monitorAddress = "inproc://kvprefix-zmq-monitor-" + MONITORS.incrementAndGet();
            sub.monitor(monitorAddress, ZMQ.EVENT_DISCONNECTED | ZMQ.EVENT_HANDSHAKE_PROTOCOL);
            monitor = ctx.createSocket(SocketType.PAIR);
            monitor.setLinger(0);
            monitor.connect(monitorAddress);
            connect(sub, engine.endpoint());
            if (engine.replayEndpoint().isPresent()) {
                openDealer();
            }
            if (snapshots != null) {
                snapshots.open(ctx);
            }
        } catch (RuntimeException e) {
            closeSockets();
            throw e;
        }
    }

    /** With a replay endpoint, asks the engine at once for what it has (the sockets are open). */
    public void start(long now) {
        if (snapshots != null) {
            snapshots.start();
        } else {
            sync.start(now);
        }
        publishGauges();
    }

    /** The live socket (for polling). */
    public ZMQ.Socket liveSocket() {
        return sub;
    }

    /** The live socket's monitor (for polling), or null. */
    public ZMQ.Socket monitorSocket() {
        return monitor;
    }

    /** The replay socket, or with a snapshot endpoint the snapshot socket (for polling), or null. */
    public ZMQ.Socket replaySocket() {
        return snapshots != null ? snapshots.socket() : dealer;
    }

    /** The snapshot link replaced its socket: the loop polls the new one. */
    void socketsReplaced() {
        socketsChanged.run();
    }

    private void openDealer() {
        dealer = context.createSocket(SocketType.DEALER);
        configure(dealer);
        // Replays arrive in one burst; a large receive queue keeps the engine's ROUTER from dropping answers.
        dealer.setRcvHWM(Math.max(settings.receiveHighWaterMark(), 1_000_000));
        connect(dealer, engine.replayEndpoint().orElseThrow());
    }

    private void configure(ZMQ.Socket s) {
        s.setLinger(0);
        s.setReconnectIVL(100);
        s.setReconnectIVLMax(settings.reconnectMaxMillis());
        // JeroMQ 0.6.0 sometimes leaves a freshly connected TCP socket unregistered in its I/O thread
        // (jeromq PR #1022): the ZMTP handshake never happens until this timer drops the connection and
        // ZMQ reconnects. The default (30 s) would leave such an engine silent for that long.
        s.setHandshakeIvl(settings.handshakeMillis());
        if (settings.heartbeatMillis() > 0) {
            s.setHeartbeatIvl(settings.heartbeatMillis());
            s.setHeartbeatTimeout(settings.heartbeatMillis() * 3);
        }
    }

    private static void connect(ZMQ.Socket s, String endpoint) {
        boolean ok;
        try {
            ok = s.connect(endpoint);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("cannot connect to " + endpoint + ": " + describe(e), e);
        }
        if (!ok) {
            throw new IllegalArgumentException("cannot connect to " + endpoint + " (errno " + s.errno() + ")");
        }
    }

    /** Closes the sockets (idempotent); the gauges keep what they showed last. */
    public void closeSockets() {
        if (sub != null) {
            sub.close();
            sub = null;
        }
        if (monitor != null) {
            monitor.close();
            monitor = null;
        }
        if (dealer != null) {
            dealer.close();
            dealer = null;
        }
        if (snapshots != null) {
            snapshots.close();
        }
    }

    /** Reads what the live socket has (at most {@code max} messages). */
    public void readLive(long now, int max) {
        readMonitor(now, max); // a drop or a new connection is handled before any batch it came before
        for (int i = 0; i < max && sub != null; i++) {
            List<byte[]> frames = receive(sub);
            if (frames == null) {
                break;
            }
            if (frames.size() != 3) {
                issue(
                        DecodeIssue.BAD_FRAMES,
                        "live message with " + frames.size() + " frames, expected [topic, seq, payload]");
                continue;
            }
            byte[] seqFrame = frames.get(1);
            if (snapshots != null && frames.get(2).length == 0) {
                snapshots.onHeartbeat(frames.get(0), seqFrame); // docs/LISTENER.md section 8
                continue;
            }
            long seq = sequence(seqFrame);
            if (seq < 0) {
                continue;
            }
            String id = PublisherIdentity.of(frames.get(0), seqFrame);
            if (snapshots != null) {
                snapshots.onLive(seq, id, frames.get(2));
            } else {
                sync.onLive(seq, id, frames.get(2), now);
            }
        }
        publishGauges();
    }

    /** Reads the live socket's connection events: a handshake after a drop is a reconnection. */
    public void readMonitor(long now, int max) {
        for (int i = 0; i < max && monitor != null; i++) {
            ZEvent e = ZEvent.recv(monitor, ZMQ.DONTWAIT);
            if (e == null) {
                break;
            }
            if (e.getEvent() == ZMonitor.Event.DISCONNECTED) {
                disconnected = true;
            } else if (e.getEvent() == ZMonitor.Event.HANDSHAKE_PROTOCOL) {
                boolean reconnect = disconnected;
                disconnected = false;
                sync.onConnected(reconnect, now);
            }
        }
        publishGauges();
    }

    /** Reads what the replay socket has (at most {@code max} messages). */
    public void readReplay(long now, int max) {
        if (snapshots != null) {
            snapshots.read(max);
            publishGauges();
            return;
        }
        for (int i = 0; i < max && dealer != null; i++) {
            List<byte[]> frames = receive(dealer);
            if (frames == null) {
                break;
            }
            // ["", seq, payload] (vLLM up to mid-2026) or ["", topic, seq, payload] (current vLLM)
            if ((frames.size() != 3 && frames.size() != 4) || frames.get(0).length != 0) {
                issue(
                        DecodeIssue.BAD_FRAMES,
                        "replay answer with " + frames.size()
                                + " frames, expected [\"\", seq, payload] or [\"\", topic, seq, payload]");
                continue;
            }
            byte[] seqFrame = frames.get(frames.size() - 2);
            byte[] payload = frames.get(frames.size() - 1);
            if (seqFrame.length == 8 && ByteBuffer.wrap(seqFrame).getLong() == END_SEQ && payload.length == 0) {
                sync.onReplayEnd(now);
                continue;
            }
            long seq = sequence(seqFrame);
            if (seq >= 0) {
                sync.onReplayBatch(seq, payload, now);
            }
        }
        publishGauges();
    }

    /** Gives up a replay that took too long. */
    public void tick(long now) {
        if (snapshots != null) {
            snapshots.tick(now);
        } else {
            sync.onTick(now);
        }
        publishGauges();
    }

    private static List<byte[]> receive(ZMQ.Socket s) {
        byte[] first = s.recv(ZMQ.DONTWAIT);
        if (first == null) {
            return null;
        }
        List<byte[]> frames = new ArrayList<>(4);
        frames.add(first);
        while (s.hasReceiveMore()) {
            frames.add(s.recv(0)); // the parts of a multipart message arrive together
        }
        return frames;
    }

    /**
     * The sequence number in the first 8 bytes (big-endian) of an 8-byte frame, or of a 24-byte one
     * (vLLM PR #57789 appends a 16-byte publisher id), or -1 (counted) if the frame is neither.
     */
    private long sequence(byte[] frame) {
        if (frame.length != 8 && frame.length != 24) {
            issue(DecodeIssue.BAD_SEQUENCE, "sequence frame of " + frame.length + " bytes, expected 8 (or 24)");
            return -1;
        }
        long seq = ByteBuffer.wrap(frame).getLong(); // the first 8 bytes, big-endian
        if (seq < 0) {
            issue(DecodeIssue.BAD_SEQUENCE, "sequence number " + Long.toUnsignedString(seq) + " is out of range");
            return -1;
        }
        return seq;
    }

    private void publishGauges() {
        state = snapshots != null ? snapshots.state() : sync.state();
        pending = snapshots != null ? snapshots.held() : sync.pending();
        long last = snapshots != null ? snapshots.lastApplied() : sync.lastApplied();
        ResumePoint r = resumePoint;
        OptionalLong hash = sync.lastHashKnown() ? OptionalLong.of(sync.lastHash()) : OptionalLong.empty();
        if (last < 0) {
            resumePoint = null;
        } else if (r == null || r.lastSeq() != last || !r.batchHash().equals(hash)) {
            resumePoint = new ResumePoint(last, hash);
        }
        lastSeq = last; // published last: a reader that sees it sees the batch applied
    }

    // ------------------------------------------------------------------ EngineSync.Port

    @Override
    public void apply(long seq, byte[] payload) {
        if (tap != null) {
            tap.batch(engine, seq, payload);
            return;
        }
        DecodedBatch batch;
        try {
            batch = decoder.decode(payload);
        } catch (BatchDecodeException e) {
            issue(e.issue(), "batch " + seq + ": " + e.getMessage());
            return;
        }
        for (DecodedBatch.Issue i : batch.issues()) {
            issue(i.issue(), "batch " + seq + ": " + i.detail());
        }
        if (!batch.events().isEmpty()) {
            workersFed.add(batch.worker());
        }
        for (KvEvent e : batch.events()) {
            EventKind kind = switch (e) {
                case KvEvent.Removed r -> EventKind.REMOVED;
                case KvEvent.Cleared c -> EventKind.CLEARED;
                default -> EventKind.STORED;
            };
            EventStatus status = applyToIndex(e);
            if (status != null) {
                counters.event(kind, status);
                if (status == EventStatus.OK) {
                    countBlocks(e);
                }
            }
        }
        if (Double.isFinite(batch.timestamp())) {
            lagMillis = Math.max(0, System.currentTimeMillis() - (long) (batch.timestamp() * 1000.0));
        }
    }

    private void countBlocks(KvEvent e) {
        switch (e) {
            case KvEvent.Stored st -> counters.add(Counter.BLOCKS_STORED, st.blockHashes().length);
            case KvEvent.StoredTokens st -> counters.add(Counter.BLOCKS_STORED, st.blockHashes().length);
            case KvEvent.Removed r -> counters.add(Counter.BLOCKS_REMOVED, r.blockHashes().length);
            default -> {}
        }
    }

    private EventStatus applyToIndex(KvEvent e) {
        try {
            return index.apply(e);
        } catch (RuntimeException ex) {
            counters.increment(Counter.APPLY_ERRORS);
            if (!applyErrorLogged) {
                applyErrorLogged = true;
                LOG.log(
                        Level.WARNING,
                        engine.endpoint() + ": the index refused an event: " + describe(ex)
                                + " (logged once; counted as apply_errors)");
            }
            return null;
        }
    }

    @Override
    public boolean requestReplay(long fromSeq) {
        if (dealer == null) {
            return false;
        }
        byte[] seq = ByteBuffer.allocate(8).putLong(fromSeq).array(); // vLLM reads it as 8 bytes big-endian
        try {
            return dealer.send(new byte[0], ZMQ.SNDMORE | ZMQ.DONTWAIT) && dealer.send(seq, ZMQ.DONTWAIT);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, engine.endpoint() + ": cannot send a replay request: " + describe(e));
            return false;
        }
    }

    @Override
    public void abandonReplay() {
        if (dealer != null) {
            dealer.close();
            dealer = null;
        }
        if (engine.replayEndpoint().isPresent() && context != null) {
            try {
                openDealer();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, engine.endpoint() + ": cannot reopen the replay socket: " + describe(e));
            }
        }
        socketsChanged.run();
    }

    @Override
    public void clearWorkers() {
        if (tap != null) {
            tap.cleared(engine);
            return;
        }
        for (Worker w : workersFed) {
            applyToIndex(new KvEvent.Cleared(w));
        }
    }

    @Override
    public void log(boolean warning, String message) {
        LOG.log(warning ? Level.WARNING : Level.INFO, engine.endpoint() + ": " + message);
    }

    /** The engine is being removed: drop what it fed into the index ({@code RemoveWorker} unless another engine shares its worker id). */
    public void forget(boolean workerIdShared) {
        if (tap != null) {
            return; // a tap is told of the engine's batches, not of who subscribes to it
        }
        if (workerIdShared) {
            clearWorkers();
        } else {
            applyToIndex(new KvEvent.RemoveWorker(engine.workerId()));
        }
    }

    private void issue(DecodeIssue issue, String detail) {
        counters.issue(issue);
        if (logged.add(issue)) {
            LOG.log(
                    issue.category() == DecodeIssue.Category.ERROR ? Level.WARNING : Level.INFO,
                    engine.endpoint() + ": " + issue.wireName() + ": " + detail + " (logged once per engine; counted)");
        }
    }

    private static String describe(Throwable e) {
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}
