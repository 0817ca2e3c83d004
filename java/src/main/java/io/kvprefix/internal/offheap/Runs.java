package io.kvprefix.internal.offheap;

import static io.kvprefix.internal.offheap.ChainLayout.CHUNK_ENTRIES;
import static io.kvprefix.internal.offheap.ChainLayout.CHUNK_NEXT;
import static io.kvprefix.internal.offheap.ChainLayout.INLINE_ENTRIES;
import static io.kvprefix.internal.offheap.ChainLayout.RUN_CAPACITY;
import static io.kvprefix.internal.offheap.ChainLayout.RUN_CHUNKS;
import static io.kvprefix.internal.offheap.ChainLayout.RUN_ENTRIES;
import static io.kvprefix.internal.offheap.ChainLayout.RUN_ENTRY0;
import static io.kvprefix.internal.offheap.ChainLayout.RUN_HOLDERS;
import static io.kvprefix.internal.offheap.ChainLayout.RUN_LENGTH;
import static io.kvprefix.internal.offheap.ChainLayout.RUN_LOCALS;
import static io.kvprefix.internal.offheap.ChainLayout.RUN_PARENT;
import static io.kvprefix.internal.offheap.ChainLayout.RUN_START;

/**
 * Operations on one run record at its address (layout in {@link ChainLayout}): its blocks, its
 * holder entries and its count of child runs (the list is in {@link RunLinks}; the lock word is
 * {@link RunLock}'s). Readers use only {@link #length}, {@link #local}, {@link #entryCount} and
 * {@link #entryAddress}.
 *
 * <p>Locks: takes none; every method that changes a run expects its caller to hold the run's lock.
 *
 * <p>Thread-safety: stateless; the run's lock and the publication order of {@link ChainLayout} make
 * concurrent use safe.
 */
final class Runs {
    private Runs() {}

    // ---------------------------------------------------------------- moving a locked run

    /**
     * Copies the locked record at {@code from} (header and blocks) into the fresh record {@code to} of
     * {@code capacity} blocks, locked; the caller then marks {@code from} moved ({@link RunLock#markMoved}).
     */
    static void moveLocked(long from, long to, int capacity) {
        Mem.copy(from, to, ChainLayout.RUN_LOCALS + 8L * length(from));
        Mem.setInt(to + RUN_CAPACITY, capacity);
        RunLock.holdFresh(to);
    }

    // ---------------------------------------------------------------- header fields

    static int length(long run) {
        return Mem.getIntAcquire(run + RUN_LENGTH);
    }

    static int capacity(long run) {
        return Mem.getInt(run + RUN_CAPACITY);
    }

    static int start(long run) {
        return Mem.getInt(run + RUN_START);
    }

    /** The block this run continues, or -1. */
    static int parent(long run) {
        return Mem.getInt(run + RUN_PARENT) - 1;
    }

    static long local(long run, int offset) {
        return Mem.getLong(run + RUN_LOCALS + 8L * offset);
    }

    static int holders(long run) {
        return Mem.getInt(run + RUN_HOLDERS);
    }

    /** Initialises a fresh (zeroed, unpublished) run: where it sits. */
    static void init(long run, int parentBlock, int start) {
        Mem.setInt(run + RUN_PARENT, parentBlock + 1);
        Mem.setInt(run + RUN_START, start);
    }

    /**
     * Writes {@code count} local hashes from {@code locals[from..]} at offset {@code offset} and
     * publishes the new length (release): readers see the hashes before they see the length.
     */
    static void append(long run, int offset, long[] locals, int from, int count) {
        long a = run + RUN_LOCALS + 8L * offset;
        for (int i = 0; i < count; i++) {
            Mem.setLong(a + 8L * i, locals[from + i]);
        }
        Mem.setIntRelease(run + RUN_LENGTH, offset + count);
    }

    /** How many of {@code locals[from .. from+max)} equal the run's blocks from {@code offset} on. */
    static int matching(long run, int offset, int length, long[] locals, int from, int max) {
        int m = 0;
        long a = run + RUN_LOCALS + 8L * offset;
        int limit = Math.min(max, length - offset);
        while (m < limit && Mem.getLong(a + 8L * m) == locals[from + m]) {
            m++;
        }
        return m;
    }

    // ---------------------------------------------------------------- holder entries

    /** Holder positions in use (acquire). */
    static int entryCount(long run) {
        return Mem.getIntAcquire(run + RUN_ENTRIES);
    }

    /** The address of holder position {@code p}, which must be below {@link #entryCount}. */
    static long entryAddress(long run, int p) {
        if (p < INLINE_ENTRIES) {
            return run + RUN_ENTRY0 + 8L * p;
        }
        int first = INLINE_ENTRIES;
        long chunk = Mem.getLongAcquire(run + RUN_CHUNKS);
        for (int k = 0; ; k++) {
            int cap = ChainLayout.chunkCapacity(k);
            if (p < first + cap) {
                return chunk + CHUNK_ENTRIES + 8L * (p - first);
            }
            first += cap;
            chunk = Mem.getLongAcquire(chunk + CHUNK_NEXT);
        }
    }

    /**
     * The address of the first position among the run's entries whose value, masked by
     * {@code mask}, is {@code want}; 0 if none. Walks the inline positions, then each chunk once.
     */
    private static long scan(long run, long mask, long want) {
        int n = entryCount(run);
        int p = 0;
        for (; p < n && p < INLINE_ENTRIES; p++) {
            long a = run + RUN_ENTRY0 + 8L * p;
            if ((Mem.getLongAcquire(a) & mask) == want) {
                return a;
            }
        }
        long chunk = Mem.getLongAcquire(run + RUN_CHUNKS);
        for (int k = 0; p < n; k++) {
            int cap = ChainLayout.chunkCapacity(k);
            for (int q = 0; q < cap && p < n; q++, p++) {
                long a = chunk + CHUNK_ENTRIES + 8L * q;
                if ((Mem.getLongAcquire(a) & mask) == want) {
                    return a;
                }
            }
            chunk = Mem.getLongAcquire(chunk + CHUNK_NEXT);
        }
        return 0;
    }

    /** The address of {@code slot}'s entry in this run, or 0 if it has none. */
    static long findEntry(long run, int slot) {
        return scan(run, 0xFFFFFFFFL, slot + 1L);
    }

    /** {@code slot}'s entry in this run (0 if none). Lock-free: only the slot's own writer changes it. */
    static long entryOf(long run, int slot) {
        long a = findEntry(run, slot);
        return a == 0 ? 0 : Mem.getLongAcquire(a);
    }

    /**
     * Adds an entry (under the lock): in a vacant position if there is one, otherwise at the end,
     * taking a new chunk from {@code arena} if the last one is full. Returns its address, or 0 if the
     * budget does not allow a new chunk.
     */
    static long addEntry(long run, long entry, RunArena arena) {
        long a = holders(run) < entryCount(run) ? scan(run, -1L, 0L) : 0;
        if (a == 0) {
            int n = entryCount(run);
            a = n < INLINE_ENTRIES ? run + RUN_ENTRY0 + 8L * n : chunkPosition(run, n, arena);
            if (a == 0) {
                return 0;
            }
            Mem.setLongRelease(a, entry);
            Mem.setIntRelease(run + RUN_ENTRIES, n + 1);
        } else {
            Mem.setLongRelease(a, entry);
        }
        Mem.setInt(run + RUN_HOLDERS, holders(run) + 1);
        return a;
    }

    /** The address of position {@code p}, the first one past the last, linking a new chunk if needed; 0 if none can be had. */
    private static long chunkPosition(long run, int p, RunArena arena) {
        int first = INLINE_ENTRIES;
        long link = run + RUN_CHUNKS;
        for (int k = 0; ; k++) {
            int cap = ChainLayout.chunkCapacity(k);
            long chunk = Mem.getLong(link);
            if (chunk == 0) {
                chunk = arena.allocateChunk(cap);
                if (chunk == 0) {
                    return 0;
                }
                Mem.setLongRelease(link, chunk); // zeroed positions first, then the link
            }
            if (p < first + cap) {
                return chunk + CHUNK_ENTRIES + 8L * (p - first);
            }
            first += cap;
            link = chunk + CHUNK_NEXT;
        }
    }

    /** Stores an entry (under the lock); a now empty entry vacates its position. */
    static void setEntry(long run, long entryAddress, long entry) {
        if (ChainLayout.entryEmpty(entry)) {
            Mem.setLongRelease(entryAddress, 0L);
            Mem.setInt(run + RUN_HOLDERS, holders(run) - 1);
        } else {
            Mem.setLongRelease(entryAddress, entry);
        }
    }

    /** Changes the pins of {@code slot}'s entry by {@code delta}, adding an entry if it has none (under the lock); false if no entry could be had. */
    static boolean addPins(long run, int slot, int delta, RunArena arena) {
        long ea = findEntry(run, slot);
        if (ea == 0) {
            return addEntry(run, ChainLayout.entry(slot, 0, 0, delta), arena) != 0;
        }
        long e = Mem.getLong(ea);
        setEntry(
                run,
                ea,
                ChainLayout.entry(
                        slot,
                        ChainLayout.entryCutoff(e),
                        ChainLayout.entryUnreachable(e),
                        ChainLayout.entryPins(e) + delta));
        return true;
    }

    /** Hands every entry chunk of a dead run to the reclaimer. */
    static void recycleChunks(long run, Reclaimer reclaimer) {
        for (long c = Mem.getLong(run + RUN_CHUNKS); c != 0; c = Mem.getLong(c + CHUNK_NEXT)) {
            reclaimer.recycleChunkLater(c);
        }
    }
}
