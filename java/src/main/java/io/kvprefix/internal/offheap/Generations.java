package io.kvprefix.internal.offheap;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The index's shared structures over time: the current child table and its rebuilds, the gates
 * that keep writers out during a rebuild ({@link WriterGate}) and keep memory alive for readers
 * ({@link ReadGate}), and the {@link Reclaimer} that frees what they may still be on. Writers enter
 * both gates for the length of one event: they navigate runs other workers may free.
 *
 * <p>Locks: owns the two gates; {@link #growChildren}, {@link #withWritersHeldOut} and {@link #close}
 * hold every writer out ({@link WriterGate#exclusively}) and are called outside the gates.
 *
 * <p>Thread-safety: {@link #children} and the gates from any thread; {@link #growChildren} and
 * {@link #close} hold every writer out.
 */
final class Generations {
    private final MemoryPool pool;
    private final ReadGate readers = new ReadGate();
    private final WriterGate writers = new WriterGate();
    private final Reclaimer reclaimer = new Reclaimer(readers);
    private final AtomicLong rebuilds = new AtomicLong();
    /** Claim retries and waits of the tables rebuilt away (written with every writer held out). */
    private volatile long retiredRetries;

    private volatile long retiredWaits;
    private volatile ChildTable children;
    private volatile boolean closed;

    Generations(MemoryPool pool, long expectedRuns) {
        this.pool = pool;
        ChildTable t = ChildTable.allocate(pool, expectedRuns, false);
        if (t == null && expectedRuns > 0) { // the hint did not fit the budget
            t = ChildTable.allocate(pool, 0, false);
        }
        if (t == null) {
            throw new IllegalArgumentException(
                    "memory budget " + pool.budget() + " bytes is too small for an empty child table");
        }
        this.children = t;
        pool.reserve(t.bytes()); // room for a rebuild of the same size, whatever else fills the budget
    }

    static IllegalStateException closedException() {
        return new IllegalStateException("index closed");
    }

    ChildTable children() {
        return children;
    }

    Reclaimer reclaimer() {
        return reclaimer;
    }

    boolean closed() {
        return closed;
    }

    long rebuilds() {
        return rebuilds.get();
    }

    /** Child-record claims that lost a CAS and looked again, over every generation. */
    long claimRetries() {
        return retiredRetries + children.claimRetries();
    }

    /** Child-record claims that waited for another writer's record being written, over every generation. */
    long claimWaits() {
        return retiredWaits + children.claimWaits();
    }

    /** Registers a writer for one event (both gates); pass the token to {@link #exitWrite}. */
    long enterWrite() {
        int w = writers.enter();
        int r = readers.enter();
        return (long) w << 32 | (r & 0xFFFFFFFFL);
    }

    void exitWrite(long token) {
        readers.exit((int) token);
        writers.exit((int) (token >>> 32));
    }

    int enterRead() {
        return readers.enter();
    }

    void exitRead(int token) {
        readers.exit(token);
    }

    /** Waits until every reader (and writer) that entered before this call has left. */
    void synchronizeReaders() {
        readers.synchronize();
    }

    /**
     * Runs {@code body} with every writer held out and inside the read gate: a view nothing changes
     * under, for explain (the writers wait for as long as {@code body} runs). Called outside the gates.
     */
    <T> T withWritersHeldOut(Supplier<T> body) {
        List<T> out = new ArrayList<>(1);
        writers.exclusively(() -> {
            if (closed) {
                throw closedException();
            }
            int token = readers.enter();
            try {
                out.add(body.get());
            } finally {
                readers.exit(token);
            }
            return true;
        });
        return out.get(0);
    }

    /**
     * Rebuilds the child table with room for {@code more} more records, dropping tombstones; false if
     * the budget does not allow it. Called outside the gates.
     */
    boolean growChildren(int more) {
        ChildTable[] old = new ChildTable[1];
        boolean ok = writers.exclusively(() -> {
            if (closed) {
                throw closedException();
            }
            ChildTable t = children;
            if (t.tryReserve(more)) { // another writer rebuilt meanwhile
                t.unreserve(more);
                return true;
            }
            ChildTable fresh = ChildTable.allocate(pool, t.live() + more, true);
            if (fresh == null) { // the budget is full: a fuller table (rebuilt again sooner) rather than a refusal
                fresh = ChildTable.allocate(pool, t.live() + more, ChildTable.TIGHT_LOAD_PERCENT, true);
            }
            if (fresh == null) {
                return false;
            }
            t.copyInto(fresh);
            retiredRetries += t.claimRetries();
            retiredWaits += t.claimWaits();
            children = fresh;
            rebuilds.incrementAndGet();
            old[0] = t;
            return true;
        });
        if (old[0] != null) {
            reclaimer.freeLater(old[0].block());
            reclaimer.flush();
            pool.reserve(children.bytes());
        }
        return ok;
    }

    /** Closes: later writers and readers see {@code closed}; waits for those in flight, then runs {@code freeAll}. False if already closed. */
    boolean close(Runnable freeAll) {
        boolean first = writers.exclusively(() -> {
            if (closed) {
                return false;
            }
            closed = true;
            return true;
        });
        if (!first) {
            return false;
        }
        readers.synchronize();
        reclaimer.flush();
        children.free();
        freeAll.run();
        return true;
    }
}
