package io.kvprefix.internal.offheap;

import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.longs.LongArrayList;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Where runs and entry chunks live: records carved from slabs of pool memory, recycled through free
 * lists per size, and the run table that maps a run id to its record's address (records never move,
 * so a block id stays valid for the life of its run).
 *
 * <p>A record given back ({@link #recycleRun}, {@link #recycleChunk}) must be unreachable for every
 * reader: the {@link Reclaimer} calls these only after the reader gate has drained. The run table
 * grows by copying; the old one is freed the same way.
 *
 * <p>Locks: its monitor, for allocation and recycling (taken under a run lock, never the other way;
 * it may take the {@link Reclaimer}'s monitor inside).
 *
 * <p>Thread-safety: allocation and recycling are synchronised (they happen once per new run, not
 * per block); {@link #address} and {@link #runTable} may be read from any thread without a lock.
 */
final class RunArena {
    /** The run table a reader uses: {@code capacity} run addresses (0 = no run), and its address as a segment for native calls. */
    record RunTable(MemoryPool.Block block, int capacity, MemorySegment segment) {
        RunTable(MemoryPool.Block block, int capacity) {
            this(block, capacity, MemorySegment.ofAddress(block.address));
        }

        long address(int run) {
            return Mem.getLong(block.address + 8L * run);
        }
    }

    private static final long FIRST_SLAB = 64 << 10;
    private static final long MAX_SLAB = 4 << 20;
    /** The smallest slab: two of the largest run records. */
    private static final long MIN_SLAB = 2 * ChainLayout.runBytes(ChainLayout.MAX_RUN);

    private final MemoryPool pool;
    private final Reclaimer reclaimer;
    private final List<MemoryPool.Block> slabs = new ArrayList<>();
    private final LongArrayList[] freeRuns = new LongArrayList[ChainLayout.RUN_CAPACITIES.length];
    private final LongArrayList[] freeChunks = new LongArrayList[ChainLayout.CHUNK_CAPACITIES.length];
    private final IntArrayList freeIds = new IntArrayList();
    private final RunLinks links = new RunLinks();
    /** Run-lock calls through {@link RunLock#lockCurrent} that found the lock held (a contention counter, striped). */
    final java.util.concurrent.atomic.LongAdder lockWaits = new java.util.concurrent.atomic.LongAdder();

    private long bump;
    private long bumpEnd;
    private long nextSlab;
    private long slabBytes;
    private int nextId;
    private long liveRuns;
    /** Bytes of the records in the free lists. */
    private long freeBytes;
    /**
     * {@code max(bumpEnd - bump, freeBytes)}, set under the lock whenever either changes and read
     * without it: {@link #ensureHeadroom} runs on every store, and taking the monitor there made the
     * writers' cores pass its cache line back and forth on every event.
     */
    private volatile long room;

    private long moves;
    private long tableGrowths;
    private volatile RunTable table;

    RunArena(MemoryPool pool, Reclaimer reclaimer, int expectedRuns) {
        this.pool = pool;
        this.reclaimer = reclaimer;
        for (int i = 0; i < freeRuns.length; i++) {
            freeRuns[i] = new LongArrayList();
        }
        for (int i = 0; i < freeChunks.length; i++) {
            freeChunks[i] = new LongArrayList();
        }
        // Slabs start small under a small budget (a 64 KiB budget cannot hold a 64 KiB slab).
        this.nextSlab = Math.max(MIN_SLAB, Math.min(FIRST_SLAB, pool.budget() / 32));
        int cap = Integer.highestOneBit(Math.max(1024, expectedRuns) - 1) << 1;
        MemoryPool.Block b = pool.allocate(8L * cap);
        if (b == null) {
            throw new IllegalArgumentException(
                    "memory budget " + pool.budget() + " bytes is too small for a run table of " + 8L * cap + " bytes");
        }
        this.table = new RunTable(b, cap);
    }

    /** The child-run lists of every run. */
    RunLinks links() {
        return links;
    }

    /** The run table readers use now. */
    RunTable runTable() {
        return table;
    }

    /** The address of run {@code run}'s record (the run must be alive). */
    long address(int run) {
        return table.address(run);
    }

    /** Runs alive now. */
    synchronized long liveRuns() {
        return liveRuns;
    }

    /**
     * A new zeroed run of {@code capacity} blocks (one of {@link ChainLayout#RUN_CAPACITIES}), its
     * capacity field set; -1 if the budget does not allow it.
     */
    synchronized int allocateRun(int capacity) {
        int c = classOf(ChainLayout.RUN_CAPACITIES, capacity);
        long bytes = ChainLayout.runBytes(capacity);
        long a = take(freeRuns[c], bytes);
        if (a == 0) {
            return -1;
        }
        int id = freeIds.isEmpty() ? nextId : freeIds.topInt();
        if (id >= table.capacity() && !growTable(id)) {
            giveBack(freeRuns[c], a, bytes);
            return -1;
        }
        if (freeIds.isEmpty()) {
            nextId++;
        } else {
            freeIds.popInt();
        }
        Mem.setInt(a + ChainLayout.RUN_CAPACITY, capacity);
        Mem.setLongRelease(table.block().address + 8L * id, a);
        liveRuns++;
        return id;
    }

    /**
     * A new run continuing block {@code parent} (-1: none) at position {@code start}, holding
     * {@code locals[from .. from+take)} and one entry of {@code slot} with a pin and nothing else; in
     * the run table but not yet in the child table, so no reader finds it. -1 if the budget does not allow it.
     */
    int newRun(int parent, int start, long[] locals, int from, int take, int slot) {
        int run = allocateRun(ChainLayout.runCapacityFor(take));
        if (run < 0) {
            return -1;
        }
        long a = address(run);
        Runs.init(a, parent, start);
        Runs.append(a, 0, locals, from, take);
        Runs.addEntry(a, ChainLayout.entry(slot, 0, 0, 1), this); // inline: never needs a chunk
        return run;
    }

    /**
     * Moves the locked run {@code run} at {@code a} into a record of {@code capacity} blocks if it
     * is smaller: the new record, locked, with the run table pointing at it and the old record left
     * to the reclaimer (a reader may still be on it). 0, and the run unlocked, if no record can be had.
     */
    long growLocked(int run, long a, int capacity) {
        if (capacity <= Runs.capacity(a)) {
            return a;
        }
        long to = allocateRecord(capacity);
        if (to == 0) {
            RunLock.unlock(a);
            return 0;
        }
        Runs.moveLocked(a, to, capacity);
        moveTo(run, to);
        RunLock.markMoved(a);
        reclaimer.recycleRecordLater(a);
        return to;
    }

    /**
     * A zeroed record of {@code capacity} blocks for run {@code run} to move into (capacity field
     * set; the run table still names the old one), or 0 if the budget does not allow it.
     */
    synchronized long allocateRecord(int capacity) {
        long a = take(freeRuns[classOf(ChainLayout.RUN_CAPACITIES, capacity)], ChainLayout.runBytes(capacity));
        if (a != 0) {
            Mem.setInt(a + ChainLayout.RUN_CAPACITY, capacity);
        }
        return a;
    }

    /**
     * A restore's record: a zeroed record of {@code capacity} blocks, not yet in the run table (see
     * {@link #finishRestore}); 0 if the budget does not allow it. The index is not published yet.
     */
    synchronized long restoreRecord(int capacity) {
        long a = take(freeRuns[classOf(ChainLayout.RUN_CAPACITIES, capacity)], ChainLayout.runBytes(capacity));
        if (a != 0) {
            liveRuns++;
        }
        return a;
    }

    /**
     * A restore in place: {@code runs} records lie in {@code mapped}, pages of the snapshot's
     * copy-on-write mapping (docs/SNAPSHOT.md section 7); held as a slab is, their records recycled
     * like any other. The index is not published yet.
     */
    synchronized void adoptMapped(MemoryPool.Block mapped, int runs) {
        slabs.add(mapped);
        liveRuns += runs;
    }

    /**
     * Ends a restore: {@code addresses[id]} is run {@code id}'s record (0 for none), written into the
     * run table in one copy; the ids below {@code addresses.length} that no run has are free. False if
     * the budget does not allow the table.
     */
    synchronized boolean finishRestore(long[] addresses) {
        if (addresses.length > table.capacity() && !growTable(addresses.length - 1)) {
            return false;
        }
        Mem.copyFrom(MemorySegment.ofArray(addresses), 0, table.block().address, 8L * addresses.length);
        for (int id = addresses.length - 1; id >= 0; id--) {
            if (addresses[id] == 0) {
                freeIds.add(id);
            }
        }
        nextId = addresses.length;
        return true;
    }

    /** Points run {@code run} at its new record (release: readers find the copied record whole). */
    synchronized void moveTo(int run, long address) {
        Mem.setLongRelease(table.block().address + 8L * run, address);
        moves++;
    }

    /** How often the structure grew under readers: runs moved to bigger records, and run-table growths. */
    synchronized long growths() {
        return moves + tableGrowths;
    }

    /** Takes back a record a run moved out of (every reader that could see it has left). */
    synchronized void recycleRecord(long address) {
        takeBackRecord(address);
        noteRoom();
    }

    private void takeBackRecord(long address) {
        int capacity = Mem.getInt(address + ChainLayout.RUN_CAPACITY);
        freeRuns[classOf(ChainLayout.RUN_CAPACITIES, capacity)].add(address);
        freeBytes += ChainLayout.runBytes(capacity);
    }

    /** A new zeroed entry chunk of {@code capacity} positions (capacity field set), or 0 if the budget does not allow it. */
    synchronized long allocateChunk(int capacity) {
        int c = classOf(ChainLayout.CHUNK_CAPACITIES, capacity);
        long a = take(freeChunks[c], ChainLayout.chunkBytes(capacity));
        if (a != 0) {
            Mem.setInt(a + ChainLayout.CHUNK_CAPACITY, capacity);
        }
        return a;
    }

    /** Takes back a run's record and id (every reader that could see it has left). */
    synchronized void recycleRun(int run, long address) {
        takeBackRun(run, address);
        noteRoom();
    }

    private void takeBackRun(int run, long address) {
        int capacity = Mem.getInt(address + ChainLayout.RUN_CAPACITY);
        Mem.setLong(table.block().address + 8L * run, 0L);
        freeRuns[classOf(ChainLayout.RUN_CAPACITIES, capacity)].add(address);
        freeBytes += ChainLayout.runBytes(capacity);
        freeIds.add(run);
        links.reset(run);
        liveRuns--;
    }

    /**
     * A reclaimer's batch under one acquisition of the monitor: {@code runs} as pairs (run id, then
     * its record's address), entry chunks, and records runs moved out of (every reader that could
     * see them has left).
     */
    synchronized void recycleAll(LongArrayList runs, LongArrayList chunks, LongArrayList records) {
        for (int i = 0; i < runs.size(); i += 2) {
            takeBackRun((int) runs.getLong(i), runs.getLong(i + 1));
        }
        for (int i = 0; i < chunks.size(); i++) {
            takeBackChunk(chunks.getLong(i));
        }
        for (int i = 0; i < records.size(); i++) {
            takeBackRecord(records.getLong(i));
        }
        noteRoom();
    }

    /** Takes back an entry chunk (every reader that could see it has left). */
    synchronized void recycleChunk(long address) {
        takeBackChunk(address);
        noteRoom();
    }

    private void takeBackChunk(long address) {
        int capacity = Mem.getInt(address + ChainLayout.CHUNK_CAPACITY);
        freeChunks[classOf(ChainLayout.CHUNK_CAPACITIES, capacity)].add(address);
        freeBytes += ChainLayout.chunkBytes(capacity);
    }

    /**
     * Makes sure about {@code bytes} can be had without asking the pool (carved from the current
     * slab, or records given back), taking a slab now if needed; false if the budget does not allow
     * it. A hint for stores, checked before they change anything: a concurrent store may still use
     * the room up first, or need a record size the free lists lack (the store then undoes itself).
     */
    boolean ensureHeadroom(long bytes) {
        if (room >= bytes) {
            return true;
        }
        synchronized (this) {
            return bumpEnd - bump >= bytes || freeBytes >= bytes || newSlab(bytes);
        }
    }

    /** Publishes the room left after a change of the bump pointer or the free lists (under the lock). */
    private void noteRoom() {
        room = Math.max(bumpEnd - bump, freeBytes);
    }

    /** Blocks stored in live runs (a reader's walk over the run table; dead runs waiting to be recycled do not count). */
    long storedBlocks() {
        RunTable t = table;
        long n = 0;
        for (int r = 0; r < t.capacity(); r++) {
            long a = t.address(r);
            if (a != 0 && RunLock.live(a)) {
                n += Runs.length(a);
            }
        }
        return n;
    }

    /** Heap bytes of the child-run lists. */
    long heapBytes() {
        return links.bytes();
    }

    /** Bytes held: slabs (used or not) and the run table. */
    synchronized long bytes() {
        long b = table.block().bytes();
        for (MemoryPool.Block s : slabs) {
            b += s.bytes();
        }
        return b;
    }

    /** Frees everything; the arena must not be used afterwards (no reader may be on it). */
    synchronized void free() {
        for (MemoryPool.Block s : slabs) {
            s.free();
        }
        slabs.clear();
        table.block().free();
    }

    private long take(LongArrayList free, long bytes) {
        if (!free.isEmpty()) {
            long a = free.popLong();
            freeBytes -= bytes;
            noteRoom();
            Mem.zero(a, bytes);
            return a;
        }
        if (bumpEnd - bump < bytes && !newSlab(bytes)) {
            return 0;
        }
        long a = bump;
        bump += bytes;
        noteRoom();
        return a;
    }

    private void giveBack(LongArrayList free, long address, long bytes) {
        free.add(address);
        freeBytes += bytes;
        noteRoom();
    }

    /** A restore's room for {@code bytes} of records, in one slab the restore's copies touch (not touched up front). */
    synchronized boolean reserveForRestore(long bytes) {
        return bumpEnd - bump >= bytes || newSlab(bytes, false);
    }

    /**
     * A new slab of the next size (doubling up to {@link #MAX_SLAB}), or, when the budget has less
     * left than that, of the largest size down to {@code atLeast} that fits: the last megabytes of a
     * budget are used too.
     */
    private boolean newSlab(long atLeast) {
        return newSlab(atLeast, true);
    }

    private boolean newSlab(long atLeast, boolean prefault) {
        long size = Math.max(nextSlab, atLeast);
        MemoryPool.Block s = pool.allocate(size, prefault);
        while (s == null && size / 2 >= Math.max(atLeast, MIN_SLAB)) {
            size /= 2;
            s = pool.allocate(size, prefault);
        }
        if (s == null) {
            return false;
        }
        slabs.add(s);
        slabBytes += size;
        bump = s.address;
        bumpEnd = s.address + size;
        noteRoom();
        // Slabs grow with what the arena holds, an eighth of it at a time: few slabs, little unused room.
        nextSlab = Math.min(MAX_SLAB, Math.max(nextSlab, slabBytes / 8));
        return true;
    }

    private boolean growTable(int id) {
        RunTable old = table;
        long cap = (long) old.capacity() * 2;
        while (cap <= id) {
            cap *= 2;
        }
        if (cap > ChainLayout.MAX_RUN_ID + 1L) {
            return false;
        }
        MemoryPool.Block b = pool.allocate(8L * cap);
        if (b == null) {
            return false;
        }
        Mem.copy(old.block().address, b.address, 8L * old.capacity());
        table = new RunTable(b, (int) cap);
        tableGrowths++;
        reclaimer.freeLater(old.block());
        return true;
    }

    private static int classOf(int[] capacities, int capacity) {
        for (int i = 0; i < capacities.length; i++) {
            if (capacities[i] == capacity) {
                return i;
            }
        }
        throw new IllegalArgumentException("no size class of " + capacity);
    }
}
