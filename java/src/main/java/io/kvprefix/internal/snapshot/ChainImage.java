package io.kvprefix.internal.snapshot;

import static io.kvprefix.internal.snapshot.SnapshotFormat.INLINE_ENTRIES;
import static io.kvprefix.internal.snapshot.SnapshotFormat.MAX_RUN;
import static io.kvprefix.internal.snapshot.SnapshotFormat.OFFSET_BITS;
import static io.kvprefix.internal.snapshot.SnapshotFormat.RUN_HEADER_BYTES;
import static io.kvprefix.internal.snapshot.SnapshotFormat.RUN_PREFIX_BYTES;

import io.kvprefix.Worker;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.stream.IntStream;

/**
 * The index state of a checked {@link SnapshotReader}: its workers, runs, name maps and side sets,
 * with the structural checks both restores rely on done once, here (docs/SNAPSHOT.md section 4):
 * every id, length, count and link in range and consistent, so that a restore never places memory
 * by a number it has not checked. Accessors take a run's ordinal (its place in the runs section).
 *
 * <p>Thread-safety: immutable once read; the reader must stay open while it is used.
 */
public final class ChainImage {
    /**
     * One worker view's record: a worker's GPU view, or its any-tier view (docs/SPEC.md section 3.1).
     *
     * @param viewOf -1 for a GPU view; for an any-tier view, the slot of its worker's GPU view
     * @param segments how many segments its name map has
     * @param depth its name map's directory depth
     * @param nameBytes the bytes of its name map in the file (every segment's header and table)
     * @param names the offset of its name map in the file (its first segment's header)
     * @param side the offset of its side sets in the file (extra names, then unreachable blocks)
     */
    public record WorkerRecord(
            Worker worker,
            int slot,
            int viewOf,
            long distinct,
            int segments,
            int depth,
            long nameBytes,
            int nameCount,
            int extraCount,
            int unreachableCount,
            long names,
            long side) {
        /** True for an any-tier view, whose name map carries each name's tiers. */
        public boolean isView() {
            return viewOf >= 0;
        }
    }

    private final SnapshotReader r;
    private final WorkerRecord[] workers;
    /** Each worker view's name map, checked. */
    private final NameSegments[] nameMaps;
    /** Worker ordinal by slot, -1 for none. */
    private final int[] workerBySlot;

    private final int runs;
    /** Per run (by ordinal): where its header is in the file, and its header's fields. */
    private final long[] header;

    private final int[] ids;
    private final int[] length;
    private final int[] entries;
    private final int[] start;
    private final int[] parent;
    private final int[] capacity;
    private final int[] firstChild;
    private final int[] nextSibling;
    private final int[] attachBound;
    private final int[] children;
    private final long[] entry0;
    private final long[] entry1;
    private final long[] local0;
    /** Blocks of each run by id (0: no such run). */
    private byte[] lengthById = new byte[0];

    private int[] ordinalById = new int[0];

    /** Every holder entry as (worker &lt;&lt; 32 | run ordinal), sorted once the runs are read. */
    private long[] holdings = new long[64];

    private int holdingCount;

    private ChainImage(SnapshotReader r, int maxWorkers) {
        this.r = r;
        this.workers = new WorkerRecord[r.items(SnapshotFormat.WORKERS)];
        this.nameMaps = new NameSegments[workers.length];
        this.workerBySlot = new int[maxWorkers];
        this.runs = r.items(SnapshotFormat.RUNS);
        this.header = new long[runs];
        this.ids = new int[runs];
        this.length = new int[runs];
        this.entries = new int[runs];
        this.start = new int[runs];
        this.parent = new int[runs];
        this.capacity = new int[runs];
        this.firstChild = new int[runs];
        this.nextSibling = new int[runs];
        this.attachBound = new int[runs];
        this.children = new int[runs];
        this.entry0 = new long[runs];
        this.entry1 = new long[runs];
        this.local0 = new long[runs];
    }

    /** Reads and checks the state sections of {@code r} for an index of {@code maxWorkers} slots. */
    public static ChainImage read(SnapshotReader r, int maxWorkers) {
        ChainImage im = new ChainImage(r, maxWorkers);
        im.readWorkers(maxWorkers);
        im.readRuns(maxWorkers);
        im.checkLinks();
        // Per thread, the length of each run by id where the worker at hand holds an entry (0 elsewhere):
        // one lookup in a byte per run checks a name, set and cleared for each worker.
        ThreadLocal<byte[]> scratch = ThreadLocal.withInitial(() -> new byte[Math.max(1, im.maxRunId() + 1)]);
        IntStream.range(0, im.workers.length)
                .parallel()
                .forEach(
                        w -> { // workers are independent: on every core
                            byte[] held = scratch.get();
                            im.markHeld(w, held, true);
                            try {
                                im.nameMaps[w] = NameSegments.read(r, w, im.workers[w], held);
                                im.checkSide(w, held);
                            } finally {
                                im.markHeld(w, held, false);
                            }
                        });
        return im;
    }

    private RuntimeException bad(int section, String what) {
        return r.bad("damaged " + SnapshotFormat.sectionName(section) + " section (" + what + ")");
    }

    // ------------------------------------------------------------------ workers

    private void readWorkers(int maxWorkers) {
        int n = workers.length;
        if (n > maxWorkers || r.length(SnapshotFormat.WORKERS) != (long) SnapshotFormat.WORKER_BYTES * n) {
            throw bad(SnapshotFormat.WORKERS, n + " workers");
        }
        Arrays.fill(workerBySlot, -1);
        long names = r.offset(SnapshotFormat.NAMES);
        long side = r.offset(SnapshotFormat.SIDE);
        for (int w = 0; w < n; w++) {
            workers[w] = readWorker(w, maxWorkers, names, side);
            workerBySlot[workers[w].slot()] = w;
            names += workers[w].nameBytes();
            side += 8L * workers[w].extraCount() + 4L * workers[w].unreachableCount();
        }
        checkViews();
        if (names != r.offset(SnapshotFormat.NAMES) + r.length(SnapshotFormat.NAMES)
                || r.items(SnapshotFormat.NAMES) != n) {
            throw bad(SnapshotFormat.NAMES, "its length does not match the workers' name maps");
        }
        if (r.items(SnapshotFormat.SIDE) != n) {
            throw bad(SnapshotFormat.SIDE, "items");
        }
        r.requireZeroPadding(side, r.offset(SnapshotFormat.SIDE) + r.length(SnapshotFormat.SIDE), SnapshotFormat.SIDE);
    }

    /** Reads and checks worker record {@code w} (slots ascending), whose maps start at {@code names} and {@code side}. */
    private WorkerRecord readWorker(int w, int maxWorkers, long names, long side) {
        long at = r.offset(SnapshotFormat.WORKERS) + (long) SnapshotFormat.WORKER_BYTES * w;
        Worker worker = new Worker(r.getLong(at + SnapshotFormat.W_ID), r.getInt(at + SnapshotFormat.W_RANK));
        int slot = r.getInt(at + SnapshotFormat.W_SLOT);
        int viewOf = r.getInt(at + SnapshotFormat.W_VIEW_OF) - 1;
        long distinct = r.getLong(at + SnapshotFormat.W_DISTINCT);
        int segments = r.getInt(at + SnapshotFormat.W_SEGMENTS);
        int depth = r.getInt(at + SnapshotFormat.W_DEPTH);
        long nameBytes = r.getLong(at + SnapshotFormat.W_NAME_BYTES);
        int count = r.getInt(at + SnapshotFormat.W_NAMES);
        int extra = r.getInt(at + SnapshotFormat.W_EXTRA);
        int unreachable = r.getInt(at + SnapshotFormat.W_UNREACHABLE);
        boolean ok = (w == 0 || slot > workers[w - 1].slot())
                && slot >= 0
                && slot < maxWorkers
                && viewOf >= -1
                && viewOf < maxWorkers
                && viewOf != slot
                && depth >= 0
                && depth <= SnapshotFormat.MAX_NAME_DEPTH
                && segments >= 1
                && segments <= 1 << depth
                && nameBytes >= segments * SnapshotFormat.segmentBytes(SnapshotFormat.MIN_NAME_CAPACITY, viewOf >= 0)
                && nameBytes <= r.length(SnapshotFormat.NAMES)
                && count >= 0
                && distinct >= 0
                && distinct <= count
                && extra >= 0
                && extra <= distinct
                && unreachable >= 0
                && unreachable <= distinct;
        if (!ok) {
            throw bad(SnapshotFormat.WORKERS, "worker record " + w);
        }
        return new WorkerRecord(
                worker, slot, viewOf, distinct, segments, depth, nameBytes, count, extra, unreachable, names, side);
    }

    /** Every worker has one GPU view; an any-tier view belongs to its own worker's GPU view, one at most each. */
    private void checkViews() {
        Set<Worker> gpu = new HashSet<>();
        Set<Integer> viewed = new HashSet<>();
        for (WorkerRecord wr : workers) {
            boolean ok;
            if (!wr.isView()) {
                ok = gpu.add(wr.worker());
            } else {
                int g = workerBySlot[wr.viewOf()];
                ok = g >= 0
                        && !workers[g].isView()
                        && workers[g].worker().equals(wr.worker())
                        && viewed.add(wr.viewOf());
            }
            if (!ok) {
                throw bad(SnapshotFormat.WORKERS, "the views of worker " + wr.worker());
            }
        }
    }

    // ------------------------------------------------------------------ runs

    private void readRuns(int maxWorkers) {
        long at = r.offset(SnapshotFormat.RUNS);
        long end = at + r.length(SnapshotFormat.RUNS);
        long[] held = new long[workers.length];
        long[] unreachable = new long[workers.length];
        int[] seenIn = new int[workers.length];
        long[] h = new long[(RUN_PREFIX_BYTES + RUN_HEADER_BYTES) / 8];
        for (int k = 0; k < runs; k++) {
            if (end - at < RUN_PREFIX_BYTES + RUN_HEADER_BYTES + 8) {
                throw bad(SnapshotFormat.RUNS, "truncated at run " + k);
            }
            r.getLongs(at, h); // one bulk read of the record's prefix and header, not one per field
            long bytes = readRun(k, at, h, maxWorkers);
            if (end - at < bytes) {
                throw bad(SnapshotFormat.RUNS, "run record " + k);
            }
            checkEntries(k, (int) (h[8] >>> 32), held, unreachable, seenIn);
            at += bytes;
        }
        if (at != end) {
            throw bad(SnapshotFormat.RUNS, (end - at) + " bytes after the last run");
        }
        for (int w = 0; w < workers.length; w++) {
            if (held[w] != workers[w].distinct() || unreachable[w] != workers[w].unreachableCount()) {
                throw bad(SnapshotFormat.RUNS, "the runs' holder entries do not add up to worker " + w + "'s blocks");
            }
        }
        Arrays.sort(holdings, 0, holdingCount);
        int maxId = runs == 0 ? -1 : ids[runs - 1];
        lengthById = new byte[maxId + 1];
        ordinalById = new int[maxId + 1];
        for (int k = 0; k < runs; k++) {
            lengthById[ids[k]] = (byte) length[k];
            ordinalById[ids[k]] = k;
        }
    }

    /** Checks and keeps run {@code k}'s prefix and header {@code h} (the record at {@code at}); returns the record's length. */
    private long readRun(int k, long at, long[] h, int maxWorkers) {
        int id = (int) h[0];
        int len = (int) h[2];
        int n = (int) (h[2] >>> 32);
        int cap = (int) (h[7] >>> 32);
        int bound = (int) (h[1] >>> 32);
        boolean ok = (k == 0 || id > ids[k - 1])
                && id >= 0
                && id <= SnapshotFormat.MAX_RUN_ID
                && Arrays.binarySearch(SnapshotFormat.RUN_CAPACITIES, cap) >= 0
                && len >= 1
                && len <= cap
                && n >= 0
                && n <= maxWorkers
                && bound >= 0
                && bound <= len
                && h[3] == 0 // chunks
                && (int) h[7] == 0 // lock
                && (int) h[6] >= 0 // start
                && (int) (h[6] >>> 32) >= 0 // parent + 1
                && (int) h[8] >= 0; // children
        if (!ok) {
            throw bad(SnapshotFormat.RUNS, "run record " + k);
        }
        header[k] = at + RUN_PREFIX_BYTES;
        ids[k] = id;
        length[k] = len;
        entries[k] = n;
        start[k] = (int) h[6];
        parent[k] = (int) (h[6] >>> 32) - 1;
        capacity[k] = cap;
        firstChild[k] = (int) (h[0] >>> 32) - 1;
        nextSibling[k] = (int) h[1] - 1;
        attachBound[k] = bound;
        children[k] = (int) h[8];
        entry0[k] = h[4];
        entry1[k] = h[5];
        local0[k] = r.getLong(header[k] + RUN_HEADER_BYTES);
        return RUN_PREFIX_BYTES + RUN_HEADER_BYTES + 8L * len + 8L * Math.max(0, n - INLINE_ENTRIES);
    }

    /** Checks run {@code k}'s holder entries against its holder count; adds each worker's blocks held there. */
    private void checkEntries(int k, int holderCount, long[] held, long[] unreachable, int[] seenIn) {
        int len = length[k];
        int holders = 0;
        for (int p = 0; p < entries[k]; p++) {
            long e = entry(k, p);
            if (e == 0) {
                continue;
            }
            int slot = SnapshotFormat.entrySlot(e);
            int w = slot >= 0 && slot < workerBySlot.length ? workerBySlot[slot] : -1;
            int cut = SnapshotFormat.entryCutoff(e);
            int un = SnapshotFormat.entryUnreachable(e);
            if (w < 0 || seenIn[w] == k + 1 || SnapshotFormat.entryHigh(e) != 0 || cut + un == 0 || cut + un > len) {
                throw bad(SnapshotFormat.RUNS, "holder entry " + p + " of run " + ids[k]);
            }
            seenIn[w] = k + 1;
            if (holdingCount == holdings.length) {
                holdings = Arrays.copyOf(holdings, holdingCount * 2);
            }
            holdings[holdingCount++] = (long) w << 32 | k;
            held[w] += cut + un;
            unreachable[w] += un;
            holders++;
        }
        if (holders != holderCount || holders + children[k] == 0) {
            throw bad(SnapshotFormat.RUNS, "holder count of run " + ids[k]);
        }
    }

    /** Parents, positions and the lists of child runs: every link names a run that exists and agrees. */
    private void checkLinks() {
        int[] childrenSeen = new int[runs];
        for (int k = 0; k < runs; k++) {
            int p = parent(k);
            if (p < 0) {
                if (start(k) != 0 || nextSibling[k] != -1) { // a chain's first run is in no child list
                    throw bad(SnapshotFormat.RUNS, "run " + ids[k] + " starts a chain at position " + start(k));
                }
                continue;
            }
            int pk = ordinalOfBlock(p);
            int off = p & (MAX_RUN - 1);
            if (pk < 0
                    || start(pk) + off + 1 != start(k)
                    || off >= attachBound[pk]
                    || (off + 1 < length(pk) && local(pk, off + 1) == local(k, 0))) {
                throw bad(SnapshotFormat.RUNS, "the parent of run " + ids[k]);
            }
            childrenSeen[pk]++;
        }
        for (int k = 0; k < runs; k++) {
            int c = firstChild[k];
            for (int i = 0; i < children[k]; i++) {
                int ck = c >= 0 && c < ordinalById.length && lengthById[c] != 0 ? ordinalById[c] : -1;
                if (ck < 0 || (parent[ck] >>> OFFSET_BITS) != ids[k]) {
                    throw bad(SnapshotFormat.RUNS, "the child list of run " + ids[k]);
                }
                c = nextSibling[ck];
            }
            if (c != -1 || childrenSeen[k] != children[k]) {
                throw bad(SnapshotFormat.RUNS, "the child list of run " + ids[k]);
            }
        }
    }

    /** The ordinal of the run holding {@code block}, or -1 if there is no such block. */
    public int ordinalOfBlock(int block) {
        int run = block >>> OFFSET_BITS;
        int off = block & (MAX_RUN - 1);
        return block >= 0 && run < lengthById.length && off < lengthById[run] ? ordinalById[run] : -1;
    }

    /**
     * Sets (or clears) in {@code held}, by run id, the length of every run worker record {@code w} has
     * a holder entry in: a name, extra name or unreachable block of {@code w} must lie in one of them,
     * or a {@code cleared} of another holder could free the run first and {@code w}'s own later read
     * freed memory (docs/SNAPSHOT.md section 4).
     */
    private void markHeld(int w, byte[] held, boolean set) {
        int i = Arrays.binarySearch(holdings, 0, holdingCount, (long) w << 32);
        for (i = i < 0 ? -i - 1 : i; i < holdingCount && (int) (holdings[i] >>> 32) == w; i++) {
            int k = (int) holdings[i];
            held[ids[k]] = set ? (byte) length[k] : 0;
        }
    }

    /** True if {@code block} lies in a run whose length {@code held} has by id (see {@link #markHeld}). */
    private static boolean holds(byte[] held, int block) {
        int run = block >>> OFFSET_BITS;
        return block >= 0 && run < held.length && (block & (MAX_RUN - 1)) < held[run];
    }

    // ------------------------------------------------------------------ side sets

    private void checkSide(int w, byte[] held) {
        WorkerRecord wr = workers[w];
        long extraNames = 0;
        for (int i = 0; i < wr.extraCount(); i++) {
            int extra = extraNames(w, i);
            if (!holds(held, extraBlock(w, i)) || extra < 1) {
                throw bad(SnapshotFormat.SIDE, "worker " + w + ", extra-name record " + i);
            }
            extraNames += extra;
        }
        if (wr.distinct() + extraNames != wr.nameCount()) {
            throw bad(SnapshotFormat.SIDE, "worker " + w + "'s names and blocks do not add up");
        }
        for (int i = 0; i < wr.unreachableCount(); i++) {
            if (!holds(held, unreachableBlock(w, i))) {
                throw bad(SnapshotFormat.SIDE, "worker " + w + ", unreachable block " + i);
            }
        }
    }

    // ------------------------------------------------------------------ accessors

    public SnapshotReader reader() {
        return r;
    }

    public int workerCount() {
        return workers.length;
    }

    public WorkerRecord worker(int w) {
        return workers[w];
    }

    /** Worker view {@code w}'s name map: its checked segments. */
    public NameSegments names(int w) {
        return nameMaps[w];
    }

    public int runCount() {
        return runs;
    }

    /** The largest run id, or -1 if there are no runs. */
    public int maxRunId() {
        return runs == 0 ? -1 : ids[runs - 1];
    }

    public int runId(int k) {
        return ids[k];
    }

    /** The offset in the file of run {@code k}'s 56-byte header (its local hashes follow). */
    public long runHeader(int k) {
        return header[k];
    }

    public int length(int k) {
        return length[k];
    }

    public int capacity(int k) {
        return capacity[k];
    }

    public int entries(int k) {
        return entries[k];
    }

    public int start(int k) {
        return start[k];
    }

    /** The block run {@code k} continues, or -1. */
    public int parent(int k) {
        return parent[k];
    }

    public int children(int k) {
        return children[k];
    }

    /** The first run hanging from run {@code k} (a run id), or -1. */
    public int firstChild(int k) {
        return firstChild[k];
    }

    /** The next run (a run id) hanging from the same parent run as run {@code k}, or -1. */
    public int nextSibling(int k) {
        return nextSibling[k];
    }

    /** One more than the deepest offset a child of run {@code k} was ever linked at (0: never). */
    public int attachBound(int k) {
        return attachBound[k];
    }

    /** The ordinal of the run with id {@code id} (which must exist). */
    public int ordinalOf(int id) {
        return ordinalById[id];
    }

    /** The local hash of block {@code offset} of run {@code k}. */
    public long local(int k, int offset) {
        return offset == 0 ? local0[k] : r.getLong(header[k] + RUN_HEADER_BYTES + 8L * offset);
    }

    /** The offset in the file of the entries of positions 2, 3, ... of run {@code k}. */
    public long chunkEntries(int k) {
        return header[k] + RUN_HEADER_BYTES + 8L * length(k);
    }

    /** Holder position {@code p} of run {@code k} (0 for a vacant one). */
    public long entry(int k, int p) {
        return p == 0 ? entry0[k] : p == 1 ? entry1[k] : r.getLong(chunkEntries(k) + 8L * (p - INLINE_ENTRIES));
    }

    public int extraBlock(int w, int i) {
        return r.getInt(workers[w].side() + 8L * i);
    }

    public int extraNames(int w, int i) {
        return r.getInt(workers[w].side() + 8L * i + 4);
    }

    public int unreachableBlock(int w, int i) {
        WorkerRecord wr = workers[w];
        return r.getInt(wr.side() + 8L * wr.extraCount() + 4L * i);
    }
}
