package io.kvprefix.internal.snapshot;

import static io.kvprefix.internal.snapshot.SnapshotFormat.MAX_RUN;
import static io.kvprefix.internal.snapshot.SnapshotFormat.OFFSET_BITS;
import static io.kvprefix.internal.snapshot.SnapshotFormat.SEGMENT_HEADER_BYTES;

import java.lang.foreign.MemorySegment;

/**
 * One worker view's name map in a snapshot, checked: its segments in directory order
 * (docs/SNAPSHOT.md section 3.3), each a 16-byte header and a table as the chain index lays it out.
 * The checks: every header's capacity, names, depth and prefix in range; the segments tile the
 * directory exactly, in order; every table's names count as its header says and name blocks that
 * exist in runs the worker view has a holder entry in; an any-tier view's tiers non-empty sets of known tiers where a name is and 0 elsewhere;
 * the padding zero; and the segments add up to the worker record's names and bytes. So a restore
 * can copy each table whole and rebuild the directory without looking again.
 *
 * <p>Thread-safety: immutable once read.
 */
public final class NameSegments {
    private final int depth;
    private final int[] capacity;
    private final int[] names;
    private final int[] depths;
    private final int[] prefix;
    private final long[] table;

    private NameSegments(int depth, int n) {
        this.depth = depth;
        this.capacity = new int[n];
        this.names = new int[n];
        this.depths = new int[n];
        this.prefix = new int[n];
        this.table = new long[n];
    }

    /**
     * Reads and checks worker record {@code w}'s segments; {@code held} is, by run id, the length of
     * each run {@code w} has a holder entry in, 0 for every other id (at least one entry long).
     */
    static NameSegments read(SnapshotReader r, int w, ChainImage.WorkerRecord wr, byte[] held) {
        NameSegments s = new NameSegments(wr.depth(), wr.segments());
        boolean tagged = wr.isView();
        long at = wr.names();
        long end = at + wr.nameBytes();
        long covered = 0; // directory entries covered so far
        long total = 0;
        for (int k = 0; k < wr.segments(); k++) {
            if (end - at < SEGMENT_HEADER_BYTES) {
                throw bad(r, w, "segment " + k + " is cut short");
            }
            int cap = r.getInt(at + SnapshotFormat.S_CAPACITY);
            int count = r.getInt(at + SnapshotFormat.S_NAMES);
            int d = r.getInt(at + SnapshotFormat.S_DEPTH);
            int p = r.getInt(at + SnapshotFormat.S_PREFIX);
            boolean ok = cap >= SnapshotFormat.MIN_NAME_CAPACITY
                    && cap <= SnapshotFormat.MAX_NAME_CAPACITY
                    && count >= 0
                    && count <= SnapshotFormat.maxNames(cap)
                    && d >= 0
                    && d <= s.depth
                    && p >= 0
                    && p < (1L << d)
                    && ((long) p << (s.depth - d)) == covered
                    && end - at >= SnapshotFormat.segmentBytes(cap, tagged);
            if (!ok) {
                throw bad(r, w, "segment " + k);
            }
            covered += 1L << (s.depth - d);
            long t = at + SEGMENT_HEADER_BYTES;
            checkTable(r, w, k, t, cap, count, tagged, held);
            s.capacity[k] = cap;
            s.names[k] = count;
            s.depths[k] = d;
            s.prefix[k] = p;
            s.table[k] = t;
            total += count;
            at += SnapshotFormat.segmentBytes(cap, tagged);
        }
        if (covered != 1L << s.depth || at != end) {
            throw bad(r, w, "its segments do not cover its directory");
        }
        if (total != wr.nameCount()) {
            throw bad(r, w, "its segments hold " + total + " names, its record says " + wr.nameCount());
        }
        return s;
    }

    /** Segment {@code k}'s table at {@code t}: its names count and name blocks that exist and are held, a view's tiers, the padding. */
    private static void checkTable(
            SnapshotReader r, int w, int k, long t, int cap, int count, boolean tagged, byte[] held) {
        long c = scanValues(r.map(), t + 8L * cap, cap, held); // read where they lie: no copy
        if ((c >>> 32) != 0) {
            throw bad(r, w, "segment " + k + " names a block that does not exist or that it holds no entry for");
        }
        if ((int) c != count) {
            throw bad(r, w, "segment " + k + " has " + (int) c + " names, its header says " + count);
        }
        if (tagged) {
            checkTiers(r, w, k, t + 8L * cap, t + 12L * cap, cap);
        }
        long tableEnd = t + SnapshotFormat.segmentTableBytes(cap, tagged);
        r.requireZeroPadding(
                tableEnd, t - SEGMENT_HEADER_BYTES + SnapshotFormat.segmentBytes(cap, tagged), SnapshotFormat.NAMES);
    }

    private static RuntimeException bad(SnapshotReader r, int w, String what) {
        return r.bad("damaged names section (worker " + w + ", " + what + ")");
    }

    /**
     * Counts the non-empty values among the {@code n} at {@code at} (low 32 bits) and whether one
     * names a block that does not exist or lies in a run the worker holds no entry in (high 32 bits):
     * one lookup in {@code held} (the length of each run by id where the worker holds an entry) each,
     * without branches, since many records are empty, at random. A small method of its own, so that
     * the JIT compiles its loop tightly.
     */
    private static long scanValues(MemorySegment map, long at, int n, byte[] held) {
        int last = held.length - 1;
        int count = 0;
        int bad = 0;
        for (int i = 0; i < n; i++) {
            int v = map.get(SnapshotFormat.INT, at + 4L * i);
            int b = v - 1;
            int run = b >>> OFFSET_BITS; // below 2^26: the differences below cannot overflow
            int nz = (v | -v) >>> 31; // 1 if v is not 0
            int known = (run - last - 1) >>> 31; // 1 if run <= last
            int inRun = ((b & (MAX_RUN - 1)) - held[Math.min(run, last)]) >>> 31; // 1 if its offset < the length
            count += nz;
            bad |= nz & ~(known & inRun);
        }
        return (long) bad << 32 | count;
    }

    /** A view's tiers at {@code tiers}: a non-empty set of known tiers where a name is (its value at {@code values} not 0), 0 elsewhere. */
    private static void checkTiers(SnapshotReader r, int w, int k, long values, long tiers, int cap) {
        byte[] t = new byte[cap];
        r.getBytes(tiers, t, cap);
        for (int i = 0; i < cap; i++) {
            int tag = t[i] & 0xFF;
            if (r.getInt(values + 4L * i) == 0 ? tag != 0 : (tag == 0 || (tag & ~SnapshotFormat.TIERS) != 0)) {
                throw bad(r, w, "segment " + k + ", the tiers of record " + i);
            }
        }
    }

    /** The directory's depth. */
    public int depth() {
        return depth;
    }

    public int count() {
        return capacity.length;
    }

    /** Records of segment {@code k}. */
    public int capacity(int k) {
        return capacity[k];
    }

    /** Names in segment {@code k}. */
    public int names(int k) {
        return names[k];
    }

    /** How many top hash bits segment {@code k}'s keys share. */
    public int depth(int k) {
        return depths[k];
    }

    /** Those bits. */
    public int prefix(int k) {
        return prefix[k];
    }

    /** The offset in the file of segment {@code k}'s table: keys, then values, then a view's tiers. */
    public long table(int k) {
        return table[k];
    }
}
