package io.kvprefix.internal.offheap;

import static io.kvprefix.internal.offheap.ChainLayout.CHILD_BUSY;
import static io.kvprefix.internal.offheap.ChainLayout.CHILD_EMPTY;
import static io.kvprefix.internal.offheap.ChainLayout.CHILD_LOCAL;
import static io.kvprefix.internal.offheap.ChainLayout.CHILD_PARENT;
import static io.kvprefix.internal.offheap.ChainLayout.CHILD_REMOVED;
import static io.kvprefix.internal.offheap.ChainLayout.CHILD_RUN;
import static io.kvprefix.internal.offheap.ChainLayout.CHILD_STRIDE;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * One generation of the child table (records in {@link ChainLayout}): which run continues a block
 * with a given local hash, for every run that starts at a branch (or a chain's first block). Open
 * addressing with linear probing over a power-of-two number of records; a removed run leaves a
 * tombstone, which the next claim of the same key takes again (a record's key, once written, never
 * changes within a generation, so a key has one record and its writers meet on that record's CAS),
 * and which a rebuild otherwise drops. Room for new records is reserved before a store inserts, so the
 * table never fills past its load limit and every probe ends at an empty record.
 *
 * <p>Locks: none; a record is claimed by CAS, its key written, then its run published with a
 * release store; a rebuild copies the table with every writer held out ({@link Generations#growChildren}).
 *
 * <p>Thread-safety: readers may probe from any thread; writers insert concurrently (a record is
 * claimed by CAS, its key written, then its run published with release semantics) and remove by
 * CAS; a rebuild into a new generation happens while every writer is held out.
 */
final class ChildTable {
    /** Records in use (live, removed or reserved) may fill this fraction of the table. */
    static final int MAX_LOAD_PERCENT = 70;
    /** A rebuild leaves the table at most this full. */
    static final int TARGET_LOAD_PERCENT = 40;
    /** ... or, when the budget has no room for that, at most this full (rebuilt more often, but not refused). */
    static final int TIGHT_LOAD_PERCENT = 60;

    static final int MIN_CAPACITY = 1 << 10;
    private static final int NOT_FOUND = -1;

    private final MemoryPool.Block block;
    final long base;
    /** The table as a zero-length segment at its address, what the native kernel is passed (made once, not per call). */
    final MemorySegment segment;

    final int mask;
    final int capacity;
    private final long maxUsed;
    /** Records live, removed or reserved by stores in progress. */
    private final AtomicLong used = new AtomicLong();
    /** Tombstones among them. */
    private final AtomicLong removed = new AtomicLong();
    /** Claims that lost a record's CAS to another writer and looked again (a contention counter, striped). */
    private final LongAdder claimRetries = new LongAdder();
    /** Claims that waited for a record another writer was filling (a contention counter, striped). */
    private final LongAdder claimWaits = new LongAdder();
    /** Claims that took their key's own tombstone instead of a new record. */
    private final LongAdder tombstonesReused = new LongAdder();

    private ChildTable(MemoryPool.Block block, int capacity) {
        this.block = block;
        this.base = block.address;
        this.segment = MemorySegment.ofAddress(base);
        this.capacity = capacity;
        this.mask = capacity - 1;
        this.maxUsed = (long) capacity * MAX_LOAD_PERCENT / 100;
    }

    /**
     * A new empty table of at least {@code MIN_CAPACITY} records with room for {@code records}, or
     * null if the budget does not allow it; a rebuild ({@code rebuild}) may use the pool's reserve.
     */
    static ChildTable allocate(MemoryPool pool, long records, boolean rebuild) {
        return allocate(pool, records, TARGET_LOAD_PERCENT, rebuild);
    }

    /** As {@link #allocate(MemoryPool, long, boolean)}, at most {@code loadPercent} full. */
    static ChildTable allocate(MemoryPool pool, long records, int loadPercent, boolean rebuild) {
        int cap = capacityFor(records, loadPercent);
        if (cap < 0) {
            return null;
        }
        MemoryPool.Block b = rebuild ? pool.allocateReserved(cap * CHILD_STRIDE) : pool.allocate(cap * CHILD_STRIDE);
        return b == null ? null : new ChildTable(b, cap);
    }

    static int capacityFor(long records) {
        return capacityFor(records, TARGET_LOAD_PERCENT);
    }

    static int capacityFor(long records, int loadPercent) {
        long need = Math.max(MIN_CAPACITY, (records * 100 + loadPercent - 1) / loadPercent);
        if (need > (1 << 30)) {
            return -1;
        }
        return Integer.highestOneBit((int) need - 1) << 1;
    }

    long bytes() {
        return block.bytes();
    }

    MemoryPool.Block block() {
        return block;
    }

    void free() {
        block.free();
    }

    /** Claims of this generation that lost a record's CAS to another writer. */
    long claimRetries() {
        return claimRetries.sum();
    }

    /** Claims of this generation that waited for a record another writer was filling. */
    long claimWaits() {
        return claimWaits.sum();
    }

    /** Claims of this generation that took their key's own tombstone. */
    long tombstonesReused() {
        return tombstonesReused.sum();
    }

    /** Tombstones in this generation. */
    long tombstones() {
        return removed.get();
    }

    /** Live records (not counting tombstones or reservations). */
    long live() {
        return used.get() - removed.get();
    }

    /** Reserves room for {@code n} new records; false if that would pass the load limit. */
    boolean tryReserve(int n) {
        if (used.addAndGet(n) <= maxUsed) {
            return true;
        }
        used.addAndGet(-n);
        return false;
    }

    /**
     * Records a writer thread may keep reserved between its stores ({@link #reserve}): a store
     * reserves a few records and almost always leaves them unused, and giving them back each time
     * cost two atomic additions per store on this table's one counter, whose cache line the writers'
     * cores then passed back and forth.
     */
    static final int KEEP = 8;

    /**
     * Reserves room for {@code n} new records for a store on the thread of {@code ws}, from its
     * credit in this table first, topping the credit up to {@link #KEEP} when there is room and to
     * exactly what is missing when there is not (the test is then the one {@link #tryReserve}
     * makes). False if that would pass the load limit; the thread's credit is then given back, so
     * that a rebuild sizes the table by what is used.
     */
    boolean reserve(int n, WriteScratch ws) {
        if (ws.creditTable != this) { // a credit of an older generation: the rebuild did not count it
            ws.creditTable = this;
            ws.childCredit = 0;
        }
        int c = ws.childCredit;
        if (c >= n) {
            ws.childCredit = c - n;
            return true;
        }
        if (n < KEEP && tryReserve(KEEP - c)) {
            ws.childCredit = KEEP - n;
            return true;
        }
        if (tryReserve(n - c)) {
            ws.childCredit = 0;
            return true;
        }
        unreserve(c);
        ws.childCredit = 0;
        return false;
    }

    /** A store on the thread of {@code ws} left {@code unused} of its {@link #reserve}d records: kept as credit, up to {@link #KEEP}. */
    void release(int unused, WriteScratch ws) {
        int total = ws.childCredit + unused;
        int keep = Math.min(total, KEEP);
        unreserve(total - keep);
        ws.childCredit = keep;
    }

    /** Gives back reserved records a store did not use. */
    void unreserve(int n) {
        if (n != 0) {
            used.addAndGet(-n);
        }
    }

    private long record(int i) {
        return base + i * CHILD_STRIDE;
    }

    /** The run continuing {@code parentBlock} (-1: a chain's start) with block local hash {@code local}, or -1. */
    int find(int parentBlock, long local) {
        int p = parentBlock + 1;
        int i = ChainLayout.childHome(parentBlock, local, mask);
        for (int n = 0; n <= mask; n++) {
            long r = record(i);
            int run = Mem.getIntAcquire(r + CHILD_RUN);
            if (run == CHILD_EMPTY) {
                return NOT_FOUND;
            }
            if (run > 0 && Mem.getLong(r + CHILD_LOCAL) == local && Mem.getInt(r + CHILD_PARENT) == p) {
                return run - 1;
            }
            i = (i + 1) & mask;
        }
        return NOT_FOUND;
    }

    /**
     * Records {@code run} as the child of {@code (parentBlock, local)} unless one is there (the caller
     * reserved a record); returns the run now recorded, which is {@code run} if it was inserted.
     */
    int insertIfAbsent(int parentBlock, long local, int run) {
        long r = claim(parentBlock, local);
        if (r < 0) {
            return (int) ~r;
        }
        if (tookTombstone(r)) {
            unreserve(1); // the caller's reserved record goes unused
        }
        publish(r, run);
        return run;
    }

    /** The tag {@link #claim} sets on a record that was its key's tombstone (records are 16-byte aligned). */
    private static final long TOMBSTONE_TAKEN = 1;

    /**
     * True if the record {@link #claim} returned was its key's own tombstone: the table holds no more
     * records than before, so the room the caller reserved for one goes unused (a store keeps it as
     * its thread's credit, {@link #release}, instead of giving it back to the shared count).
     */
    static boolean tookTombstone(long record) {
        return (record & TOMBSTONE_TAKEN) != 0;
    }

    /** The address of the record {@link #claim} returned, without its tag. */
    static long address(long record) {
        return record & ~TOMBSTONE_TAKEN;
    }

    /**
     * Claims the record for {@code (parentBlock, local)} (the caller reserved one): its key written
     * and its run field "being written", so that a writer with the same key waits for {@link
     * #publish} and a reader skips it. Returns the record's address (a new one, or the key's own
     * tombstone taken again, tagged: {@link #tookTombstone}), or {@code ~run} if run {@code run}
     * already has the key (nothing claimed). A store branching without the parent's lock links
     * its run between the claim and the publication (this package's {@code package-info.java},
     * the protocol of a branch).
     */
    long claim(int parentBlock, long local) {
        int p = parentBlock + 1;
        int i = ChainLayout.childHome(parentBlock, local, mask);
        int spins = 0;
        while (true) {
            long r = record(i);
            int st = Mem.getIntAcquire(r + CHILD_RUN);
            if (st == CHILD_EMPTY) {
                if (!Mem.casInt(r + CHILD_RUN, CHILD_EMPTY, CHILD_BUSY)) {
                    claimRetries.increment(); // lost the race for this record: look at it again
                    continue;
                }
                Mem.setLong(r + CHILD_LOCAL, local);
                Mem.setInt(r + CHILD_PARENT, p);
                return r;
            }
            if (st == CHILD_BUSY) { // another writer is filling this record: wait to compare its key
                if (spins == 0) {
                    claimWaits.increment();
                }
                if (++spins > 64) {
                    Thread.yield(); // its writer may have lost its core between the claim and the publication
                } else {
                    Thread.onSpinWait();
                }
                continue;
            }
            boolean same = Mem.getLong(r + CHILD_LOCAL) == local && Mem.getInt(r + CHILD_PARENT) == p;
            if (st > 0 && same) {
                return ~(long) (st - 1);
            }
            if (st == CHILD_REMOVED && same) { // this key's own tombstone: the record is taken again
                if (!Mem.casInt(r + CHILD_RUN, CHILD_REMOVED, CHILD_BUSY)) {
                    claimRetries.increment();
                    continue;
                }
                removed.decrementAndGet(); // counted in used as a tombstone, now as live: used is unchanged
                tombstonesReused.increment();
                return r | TOMBSTONE_TAKEN;
            }
            i = (i + 1) & mask;
        }
    }

    /** Publishes {@code run} in the record {@link #claim} returned (a release store: its key is read after). */
    static void publish(long record, int run) {
        Mem.setIntRelease(address(record) + CHILD_RUN, run + 1);
    }

    /** Removes the record of {@code run} under {@code (parentBlock, local)}, leaving a tombstone. */
    void remove(int parentBlock, long local, int run) {
        int p = parentBlock + 1;
        int i = ChainLayout.childHome(parentBlock, local, mask);
        for (int n = 0; n <= mask; n++) {
            long r = record(i);
            int st = Mem.getIntAcquire(r + CHILD_RUN);
            if (st == CHILD_EMPTY) {
                break;
            }
            if (st == run + 1 && Mem.getLong(r + CHILD_LOCAL) == local && Mem.getInt(r + CHILD_PARENT) == p) {
                if (Mem.casInt(r + CHILD_RUN, st, CHILD_REMOVED)) {
                    removed.incrementAndGet();
                }
                return;
            }
            i = (i + 1) & mask;
        }
        throw new IllegalStateException("child record of run " + run + " not found");
    }

    /**
     * A restore: fills this empty table with one record per run, {@code (parents[k], locals[k]) ->
     * runs[k]} for {@code k < n}, laid out on the heap and copied in at once (the index is not
     * published yet). False, and the table unchanged, if two runs have the same key.
     */
    boolean restore(int[] parents, long[] locals, int[] runs, int n) {
        if (n > (long) capacity * MAX_LOAD_PERCENT / 100) {
            throw new IllegalStateException("child table too small for a restore of " + n + " runs");
        }
        long[] image = new long[2 * capacity]; // per record: local, then parent + 1 | (run + 1) << 32
        for (int k = 0; k < n; k++) {
            int i = ChainLayout.childHome(parents[k], locals[k], mask);
            long key = (parents[k] + 1L) & 0xFFFFFFFFL;
            while (image[2 * i + 1] != 0) {
                if (image[2 * i] == locals[k] && (image[2 * i + 1] & 0xFFFFFFFFL) == key) {
                    return false;
                }
                i = (i + 1) & mask;
            }
            image[2 * i] = locals[k];
            image[2 * i + 1] = key | (runs[k] + 1L) << 32;
        }
        Mem.copyFrom(MemorySegment.ofArray(image), 0, base, capacity * CHILD_STRIDE);
        used.set(n);
        return true;
    }

    /** Copies every live record into {@code to} (every writer is held out); returns how many. */
    long copyInto(ChildTable to) {
        long n = 0;
        for (int i = 0; i < capacity; i++) {
            long r = record(i);
            int run = Mem.getIntAcquire(r + CHILD_RUN);
            if (run > 0) {
                to.insertIfAbsent(Mem.getInt(r + CHILD_PARENT) - 1, Mem.getLong(r + CHILD_LOCAL), run - 1);
                n++;
            }
        }
        to.used.set(n);
        return n;
    }
}
