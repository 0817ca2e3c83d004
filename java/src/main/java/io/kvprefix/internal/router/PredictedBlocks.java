package io.kvprefix.internal.router;

import io.kvprefix.EventStatus;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;
import it.unimi.dsi.fastutil.longs.LongArrayList;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.function.LongSupplier;

/**
 * Predicted cache contents for deployments without KV events (Dynamo's "approximate" mode;
 * {@code Router.Builder.predicted}): after a decision, the request's blocks are recorded as held by
 * the chosen worker, each with a time to live that a later decision for the same worker refreshes,
 * and with a bound on the total. They live in a {@link PrefixIndex} this object owns, so matching
 * them is the index's ordinary exact match; how they are keyed and expired is in this package's
 * {@code package-info.java}. Time comes from the given clock (nanoseconds, like
 * {@link System#nanoTime()}); a clock that steps back is treated as standing still.
 *
 * <p>Thread-safety: thread-safe; writes (record, expire, remove) are serialised by this object's lock,
 * matches go to the index without it (the index allows matches concurrent with writes).
 */
public final class PredictedBlocks implements AutoCloseable {
    private final PrefixIndex index;
    private final long ttlNanos;
    private final long maxBlocks;
    private final LongSupplier clock;

    private final HashMap<Worker, Holder> holders = new HashMap<>();
    private final ArrayList<Holder> dirty = new ArrayList<>();
    private Entry oldest;
    private Entry youngest;
    private long size;
    private long lastNow;
    private boolean timeSeen;
    private long failedEvents;
    private boolean closed;

    /**
     * @param index the index to keep predicted blocks in (owned: closed by {@link #close()})
     * @param ttlNanos how long a block stays predicted after it was last routed, at least 1
     * @param maxBlocks the most predicted (worker, block) pairs, at least 1
     * @param clock nanosecond clock
     */
    public PredictedBlocks(PrefixIndex index, long ttlNanos, long maxBlocks, LongSupplier clock) {
        this.index = index;
        this.ttlNanos = ttlNanos;
        this.maxBlocks = maxBlocks;
        this.clock = clock;
    }

    /** The index holding the predicted blocks. */
    public PrefixIndex index() {
        return index;
    }

    /** Matches against the predicted blocks (no lock). */
    public void match(long[] localHashes, int offset, int length, MatchResult into) {
        index.match(localHashes, offset, length, into);
    }

    /** Predicted blocks of {@code worker}. */
    public long blockCount(Worker worker) {
        return index.blockCount(worker);
    }

    /** Number of predicted (worker, block) pairs. */
    public synchronized long size() {
        return size;
    }

    /** Events the index refused (for example past its memory budget); those blocks are simply not predicted. */
    public synchronized long failedEvents() {
        return failedEvents;
    }

    /** Expires every block whose time to live has run out; returns how many. */
    public synchronized int expire() {
        if (closed) {
            return 0;
        }
        int n = expireLocked(now());
        flush();
        return n;
    }

    /**
     * Records that {@code load}'s worker now holds the request's blocks {@code chains[0..n)} (local
     * hashes {@code locals[0..n)}), refreshing those it already held. Expires due blocks first and
     * enforces the size bound after. Does nothing if the worker was unregistered meanwhile.
     */
    public synchronized void record(WorkerLoad load, long[] locals, long[] chains, int n) {
        if (closed) {
            return;
        }
        long now = now();
        expireLocked(now);
        if (!load.isRemoved() && n > 0) {
            recordLocked(load.worker(), locals, chains, n, now);
            while (size > maxBlocks) {
                dropOldest();
            }
        }
        flush();
    }

    private void recordLocked(Worker worker, long[] locals, long[] chains, int n, long now) {
        Holder h = holders.get(worker);
        if (h == null) {
            h = new Holder(worker);
            holders.put(worker, h);
        }
        int held = 0;
        while (held < n && h.byChain.containsKey(chains[held])) {
            held++;
        }
        int touched = n;
        if (held < n) {
            long[] names = Arrays.copyOfRange(chains, held, n);
            long[] hashes = Arrays.copyOfRange(locals, held, n);
            KvEvent.Stored ev = held == 0
                    ? KvEvent.Stored.root(worker, names, hashes)
                    : KvEvent.Stored.after(worker, chains[held - 1], names, hashes);
            if (index.apply(ev) == EventStatus.OK) {
                for (int i = held; i < n; i++) {
                    h.byChain.put(chains[i], new Entry(h, chains[i]));
                }
                size += n - held;
            } else {
                failedEvents++;
                touched = held;
            }
        }
        for (int i = touched - 1; i >= 0; i--) {
            Entry e = h.byChain.get(chains[i]);
            e.touched = now;
            unlink(e);
            linkYoungest(e);
        }
    }

    /**
     * Forgets every predicted block of {@code worker} (in the index too: {@code cleared}, or
     * {@code remove_worker} when no other dp rank of its id has predicted blocks, which frees its slot).
     */
    public synchronized void removeWorker(Worker worker) {
        if (closed) {
            return;
        }
        Holder h = holders.remove(worker);
        if (h != null) {
            for (Entry e : h.byChain.values()) {
                unlink(e);
                size--;
            }
            h.byChain.clear();
        }
        boolean otherRank = false;
        for (Worker w : holders.keySet()) {
            if (w.workerId() == worker.workerId()) {
                otherRank = true;
                break;
            }
        }
        index.apply(otherRank ? new KvEvent.Cleared(worker) : new KvEvent.RemoveWorker(worker.workerId()));
    }

    private long now() {
        long t = clock.getAsLong();
        if (timeSeen && t - lastNow < 0) {
            t = lastNow;
        }
        lastNow = t;
        timeSeen = true;
        return t;
    }

    private int expireLocked(long now) {
        int n = 0;
        while (oldest != null && now - oldest.touched >= ttlNanos) {
            dropOldest();
            n++;
        }
        return n;
    }

    private void dropOldest() {
        Entry e = oldest;
        unlink(e);
        e.holder.byChain.remove(e.chain);
        size--;
        if (e.holder.pending.isEmpty()) {
            dirty.add(e.holder);
        }
        e.holder.pending.add(e.chain);
    }

    /** Sends the queued removals to the index, one {@code removed} event per worker. */
    private void flush() {
        for (int i = 0; i < dirty.size(); i++) {
            Holder h = dirty.get(i);
            if (index.apply(new KvEvent.Removed(h.worker, h.pending.toLongArray())) != EventStatus.OK) {
                failedEvents++;
            }
            h.pending.clear();
        }
        dirty.clear();
    }

    private void unlink(Entry e) {
        if (!e.linked) {
            return;
        }
        if (e.older == null) {
            oldest = e.younger;
        } else {
            e.older.younger = e.younger;
        }
        if (e.younger == null) {
            youngest = e.older;
        } else {
            e.younger.older = e.older;
        }
        e.older = null;
        e.younger = null;
        e.linked = false;
    }

    private void linkYoungest(Entry e) {
        e.older = youngest;
        e.younger = null;
        if (youngest == null) {
            oldest = e;
        } else {
            youngest.younger = e;
        }
        youngest = e;
        e.linked = true;
    }

    /** Closes the owned index; later calls do nothing (matches fail as the index's do). Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        holders.clear();
        oldest = null;
        youngest = null;
        size = 0;
        index.close();
    }

    /** Per worker: its predicted blocks by chain hash, and removals queued for the index. */
    private static final class Holder {
        final Worker worker;
        final Long2ObjectOpenHashMap<Entry> byChain = new Long2ObjectOpenHashMap<>();
        final LongArrayList pending = new LongArrayList();

        Holder(Worker worker) {
            this.worker = worker;
        }
    }

    /** One predicted (worker, block), a node of the expiry list. */
    private static final class Entry {
        final Holder holder;
        final long chain;
        long touched;
        Entry older;
        Entry younger;
        boolean linked;

        Entry(Holder holder, long chain) {
            this.holder = holder;
            this.chain = chain;
        }
    }
}
