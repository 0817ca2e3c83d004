package io.kvprefix.internal.heap;

import static io.kvprefix.internal.snapshot.SnapshotFormat.INLINE_ENTRIES;
import static io.kvprefix.internal.snapshot.SnapshotFormat.MAX_RUN;
import static io.kvprefix.internal.snapshot.SnapshotFormat.OFFSET_BITS;

import io.kvprefix.IndexConfig;
import io.kvprefix.MatchExplanation;
import io.kvprefix.SnapshotException;
import io.kvprefix.internal.hash.PortableHashKernel;
import io.kvprefix.internal.snapshot.ChainImage;
import io.kvprefix.internal.snapshot.NameSegments;
import io.kvprefix.internal.snapshot.SnapshotFormat;
import io.kvprefix.internal.snapshot.SnapshotReader;
import io.kvprefix.internal.snapshot.SnapshotWriter;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;
import it.unimi.dsi.fastutil.objects.Object2IntMap;
import it.unimi.dsi.fastutil.objects.Object2IntOpenHashMap;
import it.unimi.dsi.fastutil.objects.ObjectArrayList;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The heap index's side of a snapshot, in the chain index's format (docs/SNAPSHOT.md), so that
 * either index restores what either wrote. Writing cuts the heap's tree of entries into runs
 * (paths of up to 64 blocks: a run goes on with an entry's first child, its other children start
 * runs hanging from it) and derives each run's holder entries from the reach bits and the workers'
 * held sets. Restoring builds the entries run by run, parents first, computing each chain hash from
 * its parent's, then the workers' names, reach bits and side sets, and drops entries nobody holds
 * that have no children, as the heap index always does.
 *
 * <p>Thread-safety: {@link #write} runs under the index's read lock, the restore on an index nobody
 * else has seen yet.
 */
public final class HeapSnapshot {
    private final HeapPrefixIndex index;
    /** Runs: their entries, block 0 first. */
    private final ObjectArrayList<HeapEntry[]> runs = new ObjectArrayList<>();

    private final IntArrayList parents = new IntArrayList();
    private final Object2IntOpenHashMap<HeapEntry> blockIds = new Object2IntOpenHashMap<>();

    HeapSnapshot(HeapPrefixIndex index) {
        this.index = index;
        blockIds.defaultReturnValue(-1);
    }

    // ------------------------------------------------------------------ write

    /** Saves {@code ix} to {@code file} (docs/SNAPSHOT.md), holding its read lock while the state is written. */
    static void save(HeapPrefixIndex ix, Path file, Map<String, String> metadata) {
        Objects.requireNonNull(file, "file");
        Map<String, String> meta = SnapshotFormat.checkMetadata(metadata);
        try (SnapshotWriter out = SnapshotWriter.create(file, ix.config, SnapshotFormat.PRODUCER_HEAP)) {
            long stamp = ix.lock.readLock();
            try {
                ix.checkOpen();
                List<WorkerState> views = new ArrayList<>();
                for (WorkerState g : ix.workers.values()) {
                    views.add(g);
                    if (g.anyTier != null) {
                        views.add(g.anyTier); // its any-tier view (docs/SPEC.md section 3.1)
                    }
                }
                views.sort(Comparator.comparingInt(w -> w.slot));
                new HeapSnapshot(ix).write(out, meta, views);
            } finally {
                ix.lock.unlockRead(stamp);
            }
            out.commit();
        }
    }

    void write(SnapshotWriter out, Map<String, String> metadata, List<WorkerState> workers) {
        cutIntoRuns();
        out.begin(SnapshotFormat.META);
        out.putStrings(metadata);
        out.end(metadata.size());
        out.begin(SnapshotFormat.COUNTERS);
        for (var c : index.statusCounts) {
            out.putLong(c.sum());
        }
        out.end(index.statusCounts.length);
        out.begin(SnapshotFormat.WORKERS);
        int[][] counts = new int[workers.size()][];
        for (int w = 0; w < workers.size(); w++) {
            WorkerState ws = workers.get(w);
            counts[w] = segmentCounts(ws);
            long bytes = 0;
            for (int c : counts[w]) {
                bytes += SnapshotFormat.segmentBytes(nameCapacity(c), ws.view);
            }
            out.putLong(ws.worker.workerId());
            out.putInt(ws.worker.dpRank());
            out.putInt(ws.slot);
            out.putLong(ws.held.size());
            out.putInt(counts[w].length);
            out.putInt(ws.names.size());
            out.putInt(extraCount(ws));
            out.putInt(ws.unreachable.size());
            out.putInt(index.gpuSlotOf[ws.slot] + 1); // 0 for a GPU view
            out.putInt(Integer.numberOfTrailingZeros(counts[w].length)); // the directory's depth
            out.putLong(bytes);
        }
        out.end(workers.size());
        writeRuns(out, holderEntries(workers));
        out.begin(SnapshotFormat.NAMES);
        for (int w = 0; w < workers.size(); w++) {
            writeNames(out, workers.get(w), counts[w]);
        }
        out.end(workers.size());
        out.begin(SnapshotFormat.SIDE);
        for (WorkerState ws : workers) {
            writeSideSets(out, ws);
        }
        out.end(workers.size());
        List<MatchExplanation.Salt> salts = index.hashers.salts();
        out.begin(SnapshotFormat.SALTS);
        out.putSalts(salts);
        out.end(salts.size());
    }

    /** The side sets, each sorted by block id. */
    private void writeSideSets(SnapshotWriter out, WorkerState ws) {
        long[] extra = new long[extraCount(ws)];
        int n = 0;
        for (Object2IntMap.Entry<HeapEntry> e : ws.held.object2IntEntrySet()) {
            if (e.getIntValue() > 1) {
                extra[n++] = (long) blockIds.getInt(e.getKey()) << 32 | (e.getIntValue() - 1);
            }
        }
        Arrays.sort(extra);
        for (long x : extra) {
            out.putLong(x >>> 32 | x << 32); // (block, extra names) as two little-endian u32
        }
        int[] un = new int[ws.unreachable.size()];
        n = 0;
        for (HeapEntry e : ws.unreachable) {
            un[n++] = blockIds.getInt(e);
        }
        Arrays.sort(un);
        for (int b : un) {
            out.putInt(b);
        }
    }

    /** The chain index's largest name-map segment, in records (NameMap.MAX_SEGMENT). */
    static final int MAX_SEGMENT = 1 << 13;

    /** The capacity the chain index gives a name-map segment of {@code names} names (NameMap.capacityFor): 80% full. */
    static int nameCapacity(long names) {
        return (int) Math.max(SnapshotFormat.MIN_NAME_CAPACITY, names * 100 / 80 + 1);
    }

    private static int extraCount(WorkerState ws) {
        int n = 0;
        for (int v : ws.held.values()) {
            n += v > 1 ? 1 : 0;
        }
        return n;
    }

    /** Cuts every chain of entries into runs of at most 64, parents before children. */
    private void cutIntoRuns() {
        ArrayDeque<Object[]> todo = new ArrayDeque<>(); // (entry, parent block id)
        for (HeapEntry head : index.table.values()) {
            for (HeapEntry e = head; e != null; e = e.nextSameKey) {
                if (e.parent == null) {
                    todo.push(new Object[] {e, -1});
                }
            }
        }
        HeapEntry[] path = new HeapEntry[MAX_RUN];
        while (!todo.isEmpty()) {
            Object[] t = todo.pop();
            int run = runs.size();
            int n = 0;
            for (HeapEntry cur = (HeapEntry) t[0]; cur != null; ) {
                blockIds.put(cur, run << OFFSET_BITS | n);
                path[n++] = cur;
                HeapEntry next = n < MAX_RUN ? cur.firstChild : null;
                for (HeapEntry c = cur.firstChild; c != null; c = c.nextSibling) {
                    if (c != next) {
                        todo.push(new Object[] {c, run << OFFSET_BITS | (n - 1)});
                    }
                }
                cur = next;
            }
            runs.add(Arrays.copyOf(path, n));
            parents.add((int) t[1]);
        }
    }

    /** Per run, its holder entries (sorted by slot): from each worker's held entries and reach bits. */
    private long[][] holderEntries(List<WorkerState> workers) {
        Long2IntOpenHashMap perRunAndSlot = new Long2IntOpenHashMap(); // run << 16 | slot -> cutoff | unreachable << 8
        for (WorkerState ws : workers) {
            for (HeapEntry e : ws.held.keySet()) {
                int b = blockIds.getInt(e);
                long key = (long) (b >>> OFFSET_BITS) << 16 | ws.slot;
                int v = perRunAndSlot.get(key);
                if (e.reaches(ws.slot)) {
                    v = Math.max(v & 0xFF, (b & (MAX_RUN - 1)) + 1) | (v & ~0xFF);
                } else {
                    v += 1 << 8;
                }
                perRunAndSlot.put(key, v);
            }
        }
        long[] keys = perRunAndSlot.keySet().toLongArray();
        Arrays.sort(keys);
        long[][] out = new long[runs.size()][];
        for (int i = 0; i < keys.length; ) {
            int run = (int) (keys[i] >>> 16);
            int j = i;
            while (j < keys.length && (int) (keys[j] >>> 16) == run) {
                j++;
            }
            out[run] = new long[j - i];
            for (int k = i; k < j; k++) {
                int v = perRunAndSlot.get(keys[k]);
                out[run][k - i] = SnapshotFormat.entry((int) (keys[k] & 0xFFFF), v & 0xFF, v >>> 8);
            }
            i = j;
        }
        return out;
    }

    private void writeRuns(SnapshotWriter out, long[][] entries) {
        int[] firstChild = new int[runs.size()];
        int[] nextSibling = new int[runs.size()];
        int[] children = new int[runs.size()];
        int[] attachBound = new int[runs.size()];
        for (int r = 0; r < runs.size(); r++) {
            int p = parents.getInt(r);
            if (p >= 0) {
                int q = p >>> OFFSET_BITS;
                nextSibling[r] = firstChild[q];
                firstChild[q] = r + 1;
                children[q]++;
                attachBound[q] = Math.max(attachBound[q], (p & (MAX_RUN - 1)) + 1);
            }
        }
        out.begin(SnapshotFormat.RUNS);
        for (int r = 0; r < runs.size(); r++) {
            HeapEntry[] blocks = runs.get(r);
            long[] e = entries[r] == null ? new long[0] : entries[r];
            out.putInt(r);
            out.putInt(firstChild[r]);
            out.putInt(nextSibling[r]);
            out.putInt(attachBound[r]);
            out.putInt(blocks.length); // length
            out.putInt(e.length); // entries
            out.putLong(0); // chunks
            out.putLong(e.length > 0 ? e[0] : 0);
            out.putLong(e.length > 1 ? e[1] : 0);
            out.putInt(blocks[0].pos); // start
            out.putInt(parents.getInt(r) + 1);
            out.putInt(0); // lock
            out.putInt(runCapacity(blocks.length));
            out.putInt(children[r]);
            out.putInt(e.length); // holders
            for (HeapEntry b : blocks) {
                out.putLong(b.local);
            }
            for (int p = INLINE_ENTRIES; p < e.length; p++) {
                out.putLong(e[p]);
            }
        }
        out.end(runs.size());
    }

    private static int runCapacity(int blocks) {
        for (int c : SnapshotFormat.RUN_CAPACITIES) {
            if (c >= blocks) {
                return c;
            }
        }
        return MAX_RUN;
    }

    /**
     * How many of the worker's names fall in each segment of a directory deep enough that a segment
     * sized for its share is at most the chain index's largest (NameMap.create's choice; a segment
     * whose share came out larger is still valid, and splits when it grows).
     */
    private static int[] segmentCounts(WorkerState ws) {
        long n = ws.names.size();
        int depth = 0;
        for (long per = n; nameCapacity(per) > MAX_SEGMENT && depth < SnapshotFormat.MAX_NAME_DEPTH; ) {
            depth++;
            per = (n >> depth) + 1;
        }
        int[] counts = new int[1 << depth];
        for (long key : ws.names.keySet()) {
            counts[SnapshotFormat.nameSegment(SnapshotFormat.nameMix(key), depth)]++;
        }
        return counts;
    }

    /** The worker's names as the chain index's segments lay them out (keys, then block id + 1, then a view's tiers). */
    private void writeNames(SnapshotWriter out, WorkerState ws, int[] counts) {
        int depth = Integer.numberOfTrailingZeros(counts.length);
        int[] first = new int[counts.length + 1];
        for (int j = 0; j < counts.length; j++) {
            first[j + 1] = first[j] + counts[j];
        }
        long[] keys = new long[ws.names.size()]; // by segment
        int[] fill = Arrays.copyOf(first, counts.length);
        for (long key : ws.names.keySet()) {
            keys[fill[SnapshotFormat.nameSegment(SnapshotFormat.nameMix(key), depth)]++] = key;
        }
        for (int j = 0; j < counts.length; j++) {
            int cap = nameCapacity(counts[j]);
            out.putInt(cap);
            out.putInt(counts[j]);
            out.putInt(depth);
            out.putInt(j);
            writeSegment(out, ws, keys, first[j], first[j + 1], cap);
        }
    }

    /** One segment's table: the names {@code keys[from..to)} placed by the format's home function. */
    private void writeSegment(SnapshotWriter out, WorkerState ws, long[] keys, int from, int to, int cap) {
        long[] table = new long[cap];
        int[] values = new int[cap];
        for (int k = from; k < to; k++) {
            int i = SnapshotFormat.nameHome(SnapshotFormat.nameMix(keys[k]), cap);
            while (values[i] != 0) {
                i = i + 1 == cap ? 0 : i + 1;
            }
            table[i] = keys[k];
            values[i] = blockIds.getInt(ws.names.get(keys[k])) + 1;
        }
        for (long k : table) {
            out.putLong(k);
        }
        for (int v : values) {
            out.putInt(v);
        }
        if (ws.view) {
            byte[] tiers = new byte[cap];
            for (int i = 0; i < cap; i++) {
                tiers[i] = (byte) (values[i] == 0 ? 0 : ws.tags.get(table[i]));
            }
            out.putBytes(tiers);
        }
        out.putBytes(new byte[(int) SnapshotFormat.pad8(SnapshotFormat.segmentTableBytes(cap, ws.view))]);
    }

    // ------------------------------------------------------------------ restore

    /** A new heap index holding the state of the snapshot {@code file}; see {@code PrefixIndex.restoreHeap}. */
    public static HeapPrefixIndex restore(Path file, IndexConfig config) {
        HeapPrefixIndex index = new HeapPrefixIndex(config);
        try (SnapshotReader r = SnapshotReader.open(Objects.requireNonNull(file, "file"), config)) {
            ChainImage im = ChainImage.read(r, config.maxWorkers());
            Map<String, String> meta = r.metadata();
            long[] counters = r.counters();
            List<MatchExplanation.Salt> salts = r.salts();
            new HeapSnapshot(index).restore(im);
            if (config.memoryBudgetBytes() != IndexConfig.UNLIMITED
                    && index.estimatedBytes() > config.memoryBudgetBytes()) {
                throw r.bad("does not fit the memory budget (the heap index estimates " + index.estimatedBytes()
                        + " bytes)");
            }
            for (int i = 0; i < counters.length; i++) {
                index.statusCounts[i].add(counters[i]);
            }
            index.hashers.restoreSalts(salts);
            index.restoredMetadata = meta;
            return index;
        } catch (InternalError e) { // a fault on the mapping: the file shrank while it was read
            throw new SnapshotException(file, "the file changed while it was read", e);
        }
    }

    /** Fills the empty {@link #index} with the state of {@code im}. */
    void restore(ChainImage im) {
        HeapEntry[][] entries = buildEntries(im);
        for (int k = 0; k < im.runCount(); k++) {
            for (int p = 0; p < im.entries(k); p++) {
                long e = im.entry(k, p);
                for (int off = 0; off < SnapshotFormat.entryCutoff(e); off++) {
                    entries[k][off].setReach(SnapshotFormat.entrySlot(e));
                }
            }
        }
        WorkerState[] views = new WorkerState[im.workerCount()];
        for (int w = 0; w < im.workerCount(); w++) {
            views[w] = restoreWorker(im, w, entries);
        }
        for (WorkerState a : views) {
            if (a.view) {
                index.workers.get(a.worker).anyTier = a;
                index.tiers.views++;
            }
        }
        for (int k = im.runCount() - 1; k >= 0; k--) { // drop what nobody holds and nothing hangs from
            for (int off = entries[k].length - 1; off >= 0; off--) {
                index.collect(entries[k][off]);
            }
        }
    }

    /** Every block of every run as an entry, parents first (a run starts deeper than the block it hangs from). */
    private HeapEntry[][] buildEntries(ChainImage im) {
        long[] order = new long[im.runCount()];
        for (int k = 0; k < order.length; k++) {
            order[k] = (long) im.start(k) << 32 | k;
        }
        Arrays.sort(order);
        HeapEntry[][] entries = new HeapEntry[im.runCount()][];
        long[] pair = new long[2];
        for (long o : order) {
            int k = (int) o;
            int p = im.parent(k);
            HeapEntry prev = p < 0 ? null : entries[im.ordinalOfBlock(p)][p & (MAX_RUN - 1)];
            entries[k] = new HeapEntry[im.length(k)];
            for (int i = 0; i < entries[k].length; i++) {
                long local = im.local(k, i);
                long chain =
                        prev == null ? local : PortableHashKernel.chainStep(index.chainFn, prev.chain, local, pair);
                long before = index.entryCount;
                HeapEntry e = index.findOrCreate(im.start(k) + i, local, chain, prev);
                if (index.entryCount == before) {
                    throw im.reader().bad("damaged runs section (a block stored twice, in run " + im.runId(k) + ")");
                }
                entries[k][i] = e;
                prev = e;
            }
        }
        return entries;
    }

    /** Worker view {@code w}: its names (and a view's tiers), held entries and unreachable ones, and its slot. */
    private WorkerState restoreWorker(ChainImage im, int w, HeapEntry[][] entries) {
        ChainImage.WorkerRecord r = im.worker(w);
        WorkerState ws = new WorkerState(r.worker(), r.slot(), r.nameCount(), r.isView());
        NameSegments segs = im.names(w);
        for (int k = 0; k < segs.count(); k++) {
            long keys = segs.table(k);
            int cap = segs.capacity(k);
            long values = keys + 8L * cap;
            for (int i = 0; i < cap; i++) {
                int v = im.reader().getInt(values + 4L * i);
                if (v != 0) {
                    HeapEntry e = entries[im.ordinalOfBlock(v - 1)][(v - 1) & (MAX_RUN - 1)];
                    long key = im.reader().getLong(keys + 8L * i);
                    if (ws.names.put(key, e) != null) {
                        throw im.reader().bad("damaged names section (worker " + w + " has a name twice)");
                    }
                    if (ws.view) {
                        ws.tags.put(key, im.reader().getByte(values + 4L * cap + i) & 0xFF);
                    }
                    if (ws.held.addTo(e, 1) == 0) {
                        e.holders++;
                    }
                }
            }
        }
        for (int i = 0; i < r.unreachableCount(); i++) {
            int b = im.unreachableBlock(w, i);
            ws.unreachable.add(entries[im.ordinalOfBlock(b)][b & (MAX_RUN - 1)]);
        }
        if (ws.held.size() != r.distinct()) {
            throw im.reader().bad("damaged names section (worker " + w + "'s names do not name its blocks)");
        }
        index.slotWorkers[ws.slot] = ws.worker;
        index.gpuSlotOf[ws.slot] = r.viewOf();
        index.usedSlots.set(ws.slot);
        index.bitWords = Math.max(index.bitWords, (ws.slot >>> 6) + 1);
        if (!ws.view) {
            index.workers.put(ws.worker, ws);
            index.pairCount += ws.held.size(); // a view's holdings are not pairs
        }
        return ws;
    }
}
