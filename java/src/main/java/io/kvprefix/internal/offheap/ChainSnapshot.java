package io.kvprefix.internal.offheap;

import static io.kvprefix.internal.offheap.ChainLayout.CHUNK_ENTRIES;
import static io.kvprefix.internal.offheap.ChainLayout.CHUNK_NEXT;
import static io.kvprefix.internal.offheap.ChainLayout.INLINE_ENTRIES;
import static io.kvprefix.internal.offheap.ChainLayout.RUN_CHUNKS;
import static io.kvprefix.internal.offheap.ChainLayout.RUN_LOCALS;

import io.kvprefix.IndexConfig;
import io.kvprefix.MatchExplanation;
import io.kvprefix.SnapshotException;
import io.kvprefix.internal.snapshot.ChainImage;
import io.kvprefix.internal.snapshot.SnapshotFormat;
import io.kvprefix.internal.snapshot.SnapshotReader;
import io.kvprefix.internal.snapshot.SnapshotWriter;
import it.unimi.dsi.fastutil.ints.Int2IntOpenHashMap;
import it.unimi.dsi.fastutil.ints.IntOpenHashSet;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.IntStream;

/**
 * The chain index's side of a snapshot (docs/SNAPSHOT.md): the state written section by section
 * while every writer is held out, and restored into a fresh index with one bulk copy per run
 * record and per name-map segment. Run ids are kept, so block ids (in the name maps and side sets) stay
 * valid as they are; the child table, which holds exactly one record per run, is rebuilt from the
 * runs (one insert per run, not per block).
 *
 * Any-tier views (docs/SPEC.md section 3.1) are written as worker records of their own, with
 * their tagged name maps, and linked to their GPU views again on restore.
 *
 * <p>Locks: {@link #save} holds every writer out and enters the reader gate while it copies (nothing
 * changes or is freed meanwhile; matches go on), and forces the file after the writers resume;
 * {@link #restore} takes none: it fills a state nobody else has seen yet.
 *
 * <p>Thread-safety: {@link #save} from any thread outside the gates; {@link #restore} is confined.
 */
final class ChainSnapshot {
    private ChainSnapshot() {}

    /** Saves {@code state} to {@code file}: copied with every writer held out, then forced and renamed. */
    static void save(ChainState state, Path file, Map<String, String> metadata) {
        Objects.requireNonNull(file, "file");
        Map<String, String> meta = SnapshotFormat.checkMetadata(metadata);
        try (SnapshotWriter out = SnapshotWriter.create(file, state.config, SnapshotFormat.PRODUCER_CHAIN)) {
            state.generations.withWritersHeldOut(() -> {
                long[] counters = new long[state.statusCounts.length];
                for (int i = 0; i < counters.length; i++) {
                    counters[i] = state.statusCounts[i].sum();
                }
                List<WorkerHoldings> holdings = new ArrayList<>();
                for (WorkerHoldings h : state.workers.values()) {
                    holdings.add(h);
                    if (h.anyTier != null) {
                        holdings.add(h.anyTier); // its any-tier view (docs/SPEC.md section 3.1)
                    }
                }
                holdings.sort((a, b) -> Integer.compare(a.slot, b.slot));
                write(out, meta, counters, holdings, state.slots, state.arena, state.hashers.salts());
                return true;
            });
            out.commit();
        }
    }

    /** Writes every section of the state; {@code holdings} are the known workers' views, in slot order. */
    static void write(
            SnapshotWriter out,
            Map<String, String> metadata,
            long[] counters,
            List<WorkerHoldings> holdings,
            WorkerSlots slots,
            RunArena arena,
            List<MatchExplanation.Salt> salts) {
        out.begin(SnapshotFormat.META);
        out.putStrings(metadata);
        out.end(metadata.size());
        out.begin(SnapshotFormat.COUNTERS);
        for (long c : counters) {
            out.putLong(c);
        }
        out.end(counters.length);
        out.begin(SnapshotFormat.WORKERS);
        for (WorkerHoldings h : holdings) {
            out.putLong(h.worker.workerId());
            out.putInt(h.worker.dpRank());
            out.putInt(h.slot);
            out.putLong(h.distinct);
            long[] bytes = {0};
            h.names.forEachSegment((cap, n, d, p, table) -> bytes[0] +=
                    SnapshotFormat.SEGMENT_HEADER_BYTES + table.byteSize() + SnapshotFormat.pad8(table.byteSize()));
            out.putInt(h.names.segmentCount());
            out.putInt(h.names.size());
            out.putInt(size(h.extraNamesMap()));
            out.putInt(h.unreachableSet() == null ? 0 : h.unreachableSet().size());
            out.putInt(slots.gpuSlotOf(h.slot) + 1); // 0 for a GPU view
            out.putInt(h.names.depth());
            out.putLong(bytes[0]);
        }
        out.end(holdings.size());
        writeRuns(out, arena);
        out.begin(SnapshotFormat.NAMES);
        for (WorkerHoldings h : holdings) {
            h.names.forEachSegment((cap, n, d, p, table) -> { // each segment as it lies, in directory order
                out.putInt(cap);
                out.putInt(n);
                out.putInt(d);
                out.putInt(p);
                out.putSegment(table);
                out.putBytes(new byte[(int) SnapshotFormat.pad8(table.byteSize())]); // to a multiple of 8
            });
        }
        out.end(holdings.size());
        out.begin(SnapshotFormat.SIDE);
        for (WorkerHoldings h : holdings) {
            writeSideSets(out, h);
        }
        out.end(holdings.size());
        out.begin(SnapshotFormat.SALTS);
        out.putSalts(salts);
        out.end(salts.size());
    }

    /** Runs hanging from run {@code id} (the file's header field; in memory the list is the truth). */
    private static int childCount(RunLinks links, int id) {
        int n = 0;
        for (int c = links.first(id); c >= 0; c = links.next(c)) {
            n++;
        }
        return n;
    }

    private static int size(Int2IntOpenHashMap m) {
        return m == null ? 0 : m.size();
    }

    /** Every live run in id order: id and child list, header (lock and chunk address zeroed), hashes, chunk entries. */
    private static void writeRuns(SnapshotWriter out, RunArena arena) {
        out.begin(SnapshotFormat.RUNS);
        RunArena.RunTable t = arena.runTable();
        RunLinks links = arena.links();
        int runs = 0;
        for (int id = 0; id < t.capacity(); id++) {
            long a = t.address(id);
            if (a == 0 || RunLock.deadHeldOut(a)) {
                continue; // no run, or a dead one waiting for the readers to leave
            }
            int len = Runs.length(a);
            int bytes = (int) (RUN_LOCALS + 8L * len);
            int p = SnapshotFormat.RUN_PREFIX_BYTES;
            MemorySegment rec = out.reserve(p + bytes);
            rec.set(ValueLayout.JAVA_INT_UNALIGNED, SnapshotFormat.P_ID, id);
            rec.set(ValueLayout.JAVA_INT_UNALIGNED, SnapshotFormat.P_FIRST_CHILD, links.first(id) + 1);
            rec.set(ValueLayout.JAVA_INT_UNALIGNED, SnapshotFormat.P_NEXT_SIBLING, links.next(id) + 1);
            rec.set(ValueLayout.JAVA_INT_UNALIGNED, SnapshotFormat.P_ATTACH_BOUND, links.attachBound(id));
            MemorySegment.copy(Mem.segment(a, bytes), 0, rec, p, bytes);
            rec.set(ValueLayout.JAVA_LONG_UNALIGNED, p + RUN_CHUNKS, 0L);
            rec.set(ValueLayout.JAVA_INT_UNALIGNED, p + ChainLayout.RUN_LOCK, 0);
            rec.set(ValueLayout.JAVA_INT_UNALIGNED, p + ChainLayout.RUN_CHILDREN, childCount(links, id));
            int entries = Runs.entryCount(a);
            long chunk = Mem.getLong(a + RUN_CHUNKS);
            for (int k = 0, first = INLINE_ENTRIES; first < entries; k++) {
                int n = Math.min(ChainLayout.chunkCapacity(k), entries - first);
                out.putSegment(Mem.segment(chunk + CHUNK_ENTRIES, 8L * n));
                first += n;
                chunk = Mem.getLong(chunk + CHUNK_NEXT);
            }
            runs++;
        }
        out.end(runs);
    }

    /** The side sets, each sorted by block id (so a state always gives the same bytes). */
    private static void writeSideSets(SnapshotWriter out, WorkerHoldings h) {
        Int2IntOpenHashMap extra = h.extraNamesMap();
        if (extra != null) {
            int[] blocks = extra.keySet().toIntArray();
            Arrays.sort(blocks);
            for (int b : blocks) {
                out.putInt(b);
                out.putInt(extra.get(b));
            }
        }
        IntOpenHashSet un = h.unreachableSet();
        if (un != null) {
            int[] blocks = un.toIntArray();
            Arrays.sort(blocks);
            for (int b : blocks) {
                out.putInt(b);
            }
        }
    }

    // ------------------------------------------------------------------ restore

    /**
     * Places every run of {@code im} under its own id and rebuilds the child table; the run table and
     * the child table are laid out on the heap and copied in at once. In place ({@code inPlace}), a
     * full run without entry chunks is used where it lies in the mapping (its record there is exactly
     * the one in memory: header, then as many hashes as it has room for); every other run gets a
     * record of its own and one bulk copy of its header and hashes.
     */
    static void restoreRuns(ChainImage im, ChainState state, boolean inPlace) {
        RunArena arena = state.arena;
        MemorySegment map = im.reader().map();
        int n = im.runCount();
        long copied = 0;
        long mapped = 0;
        int mappedRuns = 0;
        for (int k = 0; k < n; k++) {
            if (inPlace && usableInPlace(im, k)) {
                mapped += ChainLayout.runBytes(im.capacity(k));
                mappedRuns++;
            } else {
                copied += ChainLayout.runBytes(im.capacity(k)) + chunkBytes(im.entries(k));
            }
        }
        if (!arena.reserveForRestore(copied)) {
            throw tooBig(im, copied + mapped);
        }
        if (mappedRuns > 0) {
            MemoryPool.Block b = state.pool.mapped(map.address() + im.runHeader(0), mapped);
            if (b == null) {
                throw tooBig(im, copied + mapped);
            }
            arena.adoptMapped(b, mappedRuns);
        }
        long[] addresses = new long[im.maxRunId() + 1];
        int[] parents = new int[n];
        long[] locals = new long[n];
        int[] ids = new int[n];
        for (int k = 0; k < n; k++) {
            long a = inPlace && usableInPlace(im, k) ? map.address() + im.runHeader(k) : copyRun(im, k, arena, map);
            ids[k] = im.runId(k);
            addresses[ids[k]] = a;
            parents[k] = im.parent(k);
            locals[k] = im.local(k, 0);
        }
        if (!arena.finishRestore(addresses)) {
            throw tooBig(im, copied + mapped);
        }
        restoreLinks(im, arena.links());
        if (!state.generations.children().restore(parents, locals, ids, n)) {
            throw im.reader().bad("damaged runs section (two runs continue one block with the same hash)");
        }
    }

    /** A run whose record in the file is its record in memory: as long as its room, its holders inline. */
    private static boolean usableInPlace(ChainImage im, int k) {
        return im.length(k) == im.capacity(k) && im.entries(k) <= INLINE_ENTRIES;
    }

    /** Run {@code k} in a record of its own: header and hashes in one copy, holder positions past two in chunks. */
    private static long copyRun(ChainImage im, int k, RunArena arena, MemorySegment map) {
        long a = arena.restoreRecord(im.capacity(k));
        if (a == 0) {
            throw tooBig(im, -1);
        }
        Mem.copyFrom(map, im.runHeader(k), a, RUN_LOCALS + 8L * im.length(k)); // header and hashes, at once
        if (im.entries(k) > INLINE_ENTRIES) {
            restoreChunks(im, k, a, arena, map);
        }
        return a;
    }

    /** Every run's child list as saved; the previous-sibling links follow from the next ones. */
    private static void restoreLinks(ChainImage im, RunLinks links) {
        for (int k = 0; k < im.runCount(); k++) {
            int id = im.runId(k);
            links.restore(id, im.firstChild(k), im.nextSibling(k), -1, im.attachBound(k));
        }
        for (int k = 0; k < im.runCount(); k++) {
            int prev = im.firstChild(k);
            for (int c = prev < 0 ? -1 : im.nextSibling(im.ordinalOf(prev)); c >= 0; ) {
                int ck = im.ordinalOf(c);
                links.restore(c, im.firstChild(ck), im.nextSibling(ck), prev, im.attachBound(ck));
                prev = c;
                c = im.nextSibling(ck);
            }
        }
    }

    private static long chunkBytes(int entries) {
        long b = 0;
        for (int k = 0, first = INLINE_ENTRIES; first < entries; k++) {
            b += ChainLayout.chunkBytes(ChainLayout.chunkCapacity(k));
            first += ChainLayout.chunkCapacity(k);
        }
        return b;
    }

    /** Copies run {@code k}'s holder positions beyond the inline two into new chunks, linked in order. */
    private static void restoreChunks(ChainImage im, int k, long a, RunArena arena, MemorySegment map) {
        int entries = im.entries(k);
        long link = a + RUN_CHUNKS;
        long from = im.chunkEntries(k);
        for (int c = 0, first = INLINE_ENTRIES; first < entries; c++) {
            int cap = ChainLayout.chunkCapacity(c);
            long chunk = arena.allocateChunk(cap);
            if (chunk == 0) {
                throw tooBig(im, -1);
            }
            int n = Math.min(cap, entries - first);
            Mem.copyFrom(map, from, chunk + CHUNK_ENTRIES, 8L * n);
            Mem.setLong(link, chunk);
            link = chunk + CHUNK_NEXT;
            from += 8L * n;
            first += n;
        }
    }

    /**
     * A new index's state holding what the snapshot {@code file} holds; see {@code PrefixIndex.restore}.
     * In place unless {@code -Dkvprefix.snapshot.map=false} (docs/SNAPSHOT.md section 7).
     */
    static ChainState restore(Path file, IndexConfig config) {
        return restore(file, config, !"false".equals(System.getProperty("kvprefix.snapshot.map")));
    }

    /**
     * As {@link #restore(Path, IndexConfig)}: {@code inPlace}, the file is mapped copy-on-write and its
     * pages serve as the memory of every name map and full run, the mapping living as long as the
     * index; otherwise every table is copied into memory of the index's own and the file is unmapped.
     */
    static ChainState restore(Path file, IndexConfig config, boolean inPlace) {
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(file, "file");
        try (SnapshotReader r =
                inPlace ? SnapshotReader.openPrivate(file, config) : SnapshotReader.open(file, config)) {
            inPlace &= r.isPrivate(); // where a private mapping cannot be had, copy
            ChainImage im = ChainImage.read(r, config.maxWorkers());
            Map<String, String> meta = r.metadata();
            long[] counters = r.counters();
            List<MatchExplanation.Salt> salts = r.salts();
            ChainState state;
            try {
                state = new ChainState(config, im.runCount(), im.maxRunId() + 1);
            } catch (IllegalArgumentException e) {
                throw r.bad("does not fit: " + e.getMessage());
            }
            try {
                if (inPlace) {
                    state.adoptMapping(r.keepMapping()); // closing the state unmaps it, whatever happens next
                }
                restoreRuns(im, state, inPlace);
                restoreWorkers(im, state, inPlace);
                for (int i = 0; i < counters.length; i++) {
                    state.statusCounts[i].add(counters[i]);
                }
                state.hashers.restoreSalts(salts);
                state.restoredMetadata = meta;
                VarHandle.fullFence(); // the caller publishes the index to other threads as it likes
                return state;
            } catch (RuntimeException | Error e) {
                state.close();
                throw e;
            }
        } catch (InternalError e) { // a fault on the mapping: the file shrank while it was read
            throw new SnapshotException(file, "the file changed while it was read", e);
        }
    }

    /** Every worker's GPU view and any-tier view, each name map copied whole, on every core (they are independent). */
    private static void restoreWorkers(ChainImage im, ChainState state, boolean inPlace) {
        WorkerHoldings[] views = new WorkerHoldings[im.workerCount()];
        IntStream.range(0, im.workerCount()).parallel().forEach(w -> {
            ChainImage.WorkerRecord r = im.worker(w);
            views[w] = restoreWorker(im, w, state.pool, inPlace);
            if (!r.isView()) {
                state.workers.put(r.worker(), views[w]);
            }
        });
        int anyTier = 0;
        for (int w = 0; w < views.length; w++) {
            ChainImage.WorkerRecord r = im.worker(w);
            state.slots.restore(r.slot(), r.worker(), r.viewOf());
            if (r.isView()) {
                state.workers.get(r.worker()).anyTier = views[w];
                anyTier++;
            }
        }
        state.tierViews.set(anyTier);
        long held = 0;
        for (WorkerHoldings h : state.workers.values()) {
            held += h.distinct; // pairs count the GPU views only
        }
        state.heldPairs.add(held); // a fresh index: from 0
    }

    /** A worker view's holdings: its name map (in place, or copied whole), its side sets, its count of blocks. */
    static WorkerHoldings restoreWorker(ChainImage im, int w, MemoryPool pool, boolean inPlace) {
        ChainImage.WorkerRecord r = im.worker(w);
        NameMap names =
                NameMap.restore(pool, r.isView(), im.names(w), im.reader().map(), inPlace);
        if (names == null) {
            throw tooBig(im, -1);
        }
        WorkerHoldings h = new WorkerHoldings(r.worker(), r.slot(), names);
        h.distinct = r.distinct();
        for (int i = 0; i < r.extraCount(); i++) {
            h.setExtraNames(im.extraBlock(w, i), im.extraNames(w, i));
        }
        for (int i = 0; i < r.unreachableCount(); i++) {
            h.addUnreachable(im.unreachableBlock(w, i));
        }
        return h;
    }

    static SnapshotException tooBig(ChainImage im, long bytes) {
        return im.reader()
                .bad("does not fit the memory budget"
                        + (bytes > 0 ? " (its runs alone need " + bytes + " bytes)" : ""));
    }
}
