package io.kvprefix.nats.internal;

import io.kvprefix.EventStatus;
import io.kvprefix.KvEvent;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.zmq.BatchDecodeException;
import io.kvprefix.zmq.DecodeIssue;
import io.kvprefix.zmq.DecodedBatch;
import io.kvprefix.zmq.EngineEndpoint;
import io.kvprefix.zmq.EngineEventDecoder;
import io.kvprefix.zmq.SubscriberStats.EventKind;
import java.lang.System.Logger.Level;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * One engine as a replica sees it in the stream: its decoder, the workers it fed (which a clear
 * clears), the number of the next record expected, and its counters. Records are applied in their
 * numbers' order: one already applied is a duplicate and skipped; one past the next expected means
 * records are missing (never written by a correct relay; the engine's workers are cleared, counted
 * as a gap).
 *
 * <p>Thread-safety: not thread-safe; the replica applies on one thread at a time, and the counters
 * are read under the same lock.
 */
public final class EngineFeed {
    private static final System.Logger LOG = System.getLogger("io.kvprefix.nats");

    /** Counter slots, in {@link #counters()}. */
    public static final int BATCHES = 0, CLEARS = 1, DUPLICATES = 2, GAPS = 3, APPLY_ERRORS = 4, BAD_FRAMES = 5;

    private static final int FIXED = 6;

    private final EngineEndpoint engine;
    private final String subject;
    private final EngineEventDecoder decoder;
    private final Set<Worker> workersFed = new LinkedHashSet<>();
    private final Set<DecodeIssue> logged = EnumSet.noneOf(DecodeIssue.class);
    private final long[] counters =
            new long[FIXED + EventKind.values().length * EventStatus.values().length + DecodeIssue.values().length];
    private long nextRec = -1;
    private long lastSeq = -1;
    private boolean applyErrorLogged;

    public EngineFeed(EngineEndpoint engine, String subject) {
        this.engine = engine;
        this.subject = subject;
        this.decoder = EngineEventDecoder.forEngine(engine);
        engine.dpRank().ifPresent(r -> workersFed.add(new Worker(engine.workerId(), r)));
    }

    public EngineEndpoint engine() {
        return engine;
    }

    public String subject() {
        return subject;
    }

    /** The number of the next record expected, or -1 before the first. */
    public long nextRec() {
        return nextRec;
    }

    /** The engine sequence number of the last batch applied, or -1. */
    public long lastSeq() {
        return lastSeq;
    }

    /** The workers this engine fed. */
    public Set<Worker> workersFed() {
        return Set.copyOf(workersFed);
    }

    /** Restores the state saved with a snapshot: the next record, the last batch and the workers fed. */
    public void restore(long nextRec, long lastSeq, Set<Worker> workers) {
        this.nextRec = nextRec;
        this.lastSeq = lastSeq;
        workersFed.addAll(workers);
    }

    /** Forgets where the engine's records were (a resync of the whole replica): the next record starts afresh. */
    public void forgetPosition() {
        nextRec = -1;
    }

    /**
     * Applies record number {@code rec} to {@code index}; {@code lagSink} gets the batch's age in
     * microseconds when the format carries the engine's publish time.
     */
    public void apply(long rec, Frames.Record r, PrefixIndex index, java.util.function.LongConsumer lagSink) {
        if (nextRec >= 0 && rec < nextRec) {
            counters[DUPLICATES]++;
            return;
        }
        if (nextRec >= 0 && rec > nextRec) {
            counters[GAPS]++;
            LOG.log(
                    Level.WARNING,
                    "kvprefix replica: " + subject + ": records " + nextRec + ".." + (rec - 1)
                            + " are missing from the stream; clearing the engine's workers");
            clear(index);
        }
        nextRec = rec + 1;
        if (r.isClear()) {
            counters[CLEARS]++;
            clear(index);
            lastSeq = -1;
            return;
        }
        counters[BATCHES]++;
        lastSeq = r.seq();
        DecodedBatch batch;
        try {
            batch = decoder.decode(r.payload());
        } catch (BatchDecodeException e) {
            issue(e.issue(), "batch " + r.seq() + ": " + e.getMessage());
            return;
        }
        for (DecodedBatch.Issue i : batch.issues()) {
            issue(i.issue(), "batch " + r.seq() + ": " + i.detail());
        }
        if (!batch.events().isEmpty()) {
            workersFed.add(batch.worker());
        }
        for (KvEvent e : batch.events()) {
            EventKind kind = switch (e) {
                case KvEvent.Removed x -> EventKind.REMOVED;
                case KvEvent.Cleared x -> EventKind.CLEARED;
                default -> EventKind.STORED;
            };
            EventStatus status = applyToIndex(index, e);
            if (status != null) {
                counters[FIXED + kind.ordinal() * EventStatus.values().length + status.ordinal()]++;
            }
        }
        if (Double.isFinite(batch.timestamp())) {
            java.time.Instant now = java.time.Instant.now();
            long micros = now.getEpochSecond() * 1_000_000L + now.getNano() / 1000 - (long) (batch.timestamp() * 1e6);
            lagSink.accept(Math.max(0, micros));
        }
    }

    /** A frame of this engine could not be read: counted; its records are lost (the next is a gap). */
    public void badFrame(String why) {
        counters[BAD_FRAMES]++;
        LOG.log(Level.WARNING, "kvprefix replica: " + subject + ": unreadable frame skipped: " + why);
    }

    /** Applies {@code Cleared} to every worker the engine fed. */
    public void clear(PrefixIndex index) {
        for (Worker w : workersFed) {
            applyToIndex(index, new KvEvent.Cleared(w));
        }
    }

    private EventStatus applyToIndex(PrefixIndex index, KvEvent e) {
        try {
            return index.apply(e);
        } catch (RuntimeException ex) {
            counters[APPLY_ERRORS]++;
            if (!applyErrorLogged) {
                applyErrorLogged = true;
                LOG.log(
                        Level.WARNING,
                        "kvprefix replica: " + subject + ": the index refused an event: " + ex
                                + " (logged once; counted as apply_errors)");
            }
            return null;
        }
    }

    private void issue(DecodeIssue issue, String detail) {
        counters[FIXED + EventKind.values().length * EventStatus.values().length + issue.ordinal()]++;
        if (logged.add(issue) && issue.category() == DecodeIssue.Category.ERROR) {
            LOG.log(
                    Level.WARNING,
                    "kvprefix replica: " + subject + ": " + issue.wireName() + ": " + detail
                            + " (logged once per engine; counted)");
        }
    }

    /** A copy of the counters: the fixed slots, then events by kind and status, then decode issues. */
    public long[] counters() {
        return counters.clone();
    }

    /** Where events of {@code kind} with {@code status} are counted in {@link #counters()}. */
    public static int eventSlot(EventKind kind, EventStatus status) {
        return FIXED + kind.ordinal() * EventStatus.values().length + status.ordinal();
    }

    /** Where {@code issue} is counted in {@link #counters()}. */
    public static int issueSlot(DecodeIssue issue) {
        return FIXED + EventKind.values().length * EventStatus.values().length + issue.ordinal();
    }
}
