package io.kvprefix.nats.internal;

import io.kvprefix.PrefixIndex;
import io.kvprefix.zmq.EngineEndpoint;
import io.nats.client.Message;
import io.nats.client.impl.Headers;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * What a replica does with each message of the stream, in stream order: checks that the stream
 * sequence follows the last one applied (a jump means the stream's retention dropped messages this
 * replica never read: every engine's workers are cleared and the replica goes on from there, a
 * counted <em>resync</em>), finds the engine's {@link EngineFeed} by subject, and applies the frame's
 * records. One message is applied under {@link #lock()}, which a snapshot takes to cut the state
 * between two messages.
 *
 * <p>Thread-safety: {@link #onMessage} runs on one thread at a time (the consumer's); everything
 * else takes the lock.
 */
public final class ReplicaCore {
    private static final System.Logger LOG = System.getLogger("io.kvprefix.nats");

    private final PrefixIndex index;
    private final ReentrantLock lock = new ReentrantLock();
    private final Map<String, EngineFeed> feeds = new LinkedHashMap<>();
    private final LagHistogram lags = new LagHistogram();
    /** The stream sequence of the last message applied (or covered by the snapshot restored), 0 if none. */
    private volatile long applied;

    private volatile long pending = -1;
    private volatile long lastLagMicros = -1;
    /** Bumped when the stream is made anew: a consumer of an older one has its messages ignored. */
    private volatile long generation;

    private long resyncs;
    private long messages;
    private long badMessages;

    public ReplicaCore(PrefixIndex index) {
        this.index = index;
    }

    /** The lock a message is applied under. */
    public ReentrantLock lock() {
        return lock;
    }

    /** The stream sequence of the last message applied (0 if none). */
    public long applied() {
        return applied;
    }

    /** Messages left in the stream after the last one applied, as the server said with it; -1 before the first. */
    public long pending() {
        return pending;
    }

    /** The lag of the last batch applied, in microseconds; -1 if none. */
    public long lastLagMicros() {
        return lastLagMicros;
    }

    public LagHistogram lags() {
        return lags;
    }

    /** Sets where the state restored from a snapshot ends; call before the first message. */
    public void restoredUpTo(long streamSeq, List<EngineFeed> restored) {
        lock.lock();
        try {
            applied = streamSeq;
            for (EngineFeed f : restored) {
                feeds.put(f.subject(), f);
            }
        } finally {
            lock.unlock();
        }
    }

    /** The current generation: a consumer started now passes it to {@link #onMessage(Message, long)}. */
    public long generation() {
        return generation;
    }

    /** Applies one message of the stream; never throws for anything the stream holds. */
    public void onMessage(Message m) {
        onMessage(m, generation);
    }

    /**
     * Applies one message of the stream read by a consumer of {@code gen}; a consumer of a stream since
     * made anew has its messages ignored.
     */
    public void onMessage(Message m, long gen) {
        lock.lock();
        try {
            if (gen != generation) {
                return;
            }
            long seq = m.metaData().streamSequence();
            if (seq <= applied) {
                return; // delivered again after a consumer reset: applied already
            }
            if (seq != applied + 1) {
                resync(applied + 1, seq);
            }
            messages++;
            apply(m);
            applied = seq;
            pending = m.metaData().pendingCount();
        } catch (RuntimeException e) {
            badMessages++;
            LOG.log(Level.WARNING, "kvprefix replica: message skipped: " + e, e);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Stream messages {@code from} to {@code to - 1} are gone: clear every engine's workers and take
     * every engine's records up afresh.
     */
    public void resync(long from, long to) {
        resyncs++;
        LOG.log(
                Level.WARNING,
                "kvprefix replica: stream messages " + from + ".." + (to - 1)
                        + " were dropped by the stream's retention before this replica read them; "
                        + "clearing every engine's workers and going on from " + to + " (a resync)");
        for (EngineFeed f : feeds.values()) {
            f.clear(index);
            f.forgetPosition();
        }
    }

    /**
     * The stream was made anew (deleted and created again, or a server restarted without its store):
     * clear every engine's workers, forget the engines and start over at the new stream's start.
     *
     * @return the new generation, for the consumer of the new stream
     */
    public long newStream() {
        lock.lock();
        try {
            for (EngineFeed f : feeds.values()) {
                f.clear(index);
            }
            feeds.clear();
            applied = 0;
            pending = -1;
            return ++generation;
        } finally {
            lock.unlock();
        }
    }

    private void apply(Message m) {
        Headers h = m.getHeaders();
        String spec = h == null ? null : h.getFirst(Frames.ENGINE);
        String first = h == null ? null : h.getFirst(Frames.FIRST_REC);
        if (spec == null || first == null || !Frames.FORMAT.equals(h.getFirst(Frames.VERSION))) {
            badMessages++;
            LOG.log(
                    Level.WARNING,
                    "kvprefix replica: message on " + m.getSubject() + " is not a version-" + Frames.FORMAT
                            + " frame; skipped");
            return;
        }
        EngineFeed feed = feeds.get(m.getSubject());
        if (feed == null) {
            feed = new EngineFeed(EngineEndpoint.parse(spec), m.getSubject());
            feeds.put(m.getSubject(), feed);
        }
        List<Frames.Record> records;
        long firstRec;
        try {
            firstRec = Long.parseLong(first);
            records = Frames.records(m.getData());
        } catch (IllegalArgumentException e) {
            feed.badFrame(e.getMessage());
            return;
        }
        for (int i = 0; i < records.size(); i++) {
            feed.apply(firstRec + i, records.get(i), index, this::lag);
        }
    }

    private void lag(long micros) {
        lags.add(micros);
        lastLagMicros = micros;
    }

    /**
     * Runs {@code atCut} between two messages, with the stream sequence the index covers now and the
     * engines' feeds, and returns what it returns: a snapshot taken in it holds exactly the messages up
     * to that sequence. Messages wait meanwhile.
     */
    public <T> T cut(java.util.function.BiFunction<Long, List<EngineFeed>, T> atCut) {
        lock.lock();
        try {
            return atCut.apply(applied, List.copyOf(feeds.values()));
        } finally {
            lock.unlock();
        }
    }

    /** The engines seen, in order of their first message. */
    public List<EngineFeed> feeds() {
        lock.lock();
        try {
            return new ArrayList<>(feeds.values());
        } finally {
            lock.unlock();
        }
    }

    /** Resyncs, messages applied, messages skipped as unreadable. */
    public long[] counters() {
        lock.lock();
        try {
            return new long[] {resyncs, messages, badMessages};
        } finally {
            lock.unlock();
        }
    }
}
