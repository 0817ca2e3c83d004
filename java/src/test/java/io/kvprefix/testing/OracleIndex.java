package io.kvprefix.testing;

import io.kvprefix.BlockHasher;
import io.kvprefix.EventStatus;
import io.kvprefix.Implementation;
import io.kvprefix.IndexConfig;
import io.kvprefix.IndexStats;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchExplanation;
import io.kvprefix.MatchResult;
import io.kvprefix.Medium;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.internal.MatchResults;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * The reference model of docs/SPEC.md sections 3 and 4: plain maps and sets, no cleverness, written to be
 * read next to the specification and checked line by line. Every other {@link PrefixIndex} is compared with
 * it by the differential suite of the op-stream module ({@code io.kvprefix.opstream.testing.Differential}).
 *
 * <ul>
 *   <li>Per known worker, a map from engine hash {@code E} to the block it names, a block being its
 *       {@code (position, chain hash)}. The chain hash is computed here from the parent's chain hash
 *       and the block's local hash with a portable {@link BlockHasher}; the engine's hashes are never
 *       used for it. A worker holds exactly the blocks that are values of its map, so one block under
 *       two names stays held until its last name goes (rule 4 is {@link Map#put}).
 *   <li>Statuses are decided in the specification's order: rule 1 ({@code invalid_block_sequence}), rule 2
 *       ({@code parent_block_not_found}), then the worker slots ({@code capacity_exceeded}).
 *   <li>Depth is computed literally from the definition: for {@code i = 0, 1, ...}, does the worker
 *       hold a block at position {@code i} whose chain hash is the request's {@code cq[i]}?
 *   <li>Worker slots: a worker becomes known on its first successful store (an empty store counts),
 *       stays known after {@code cleared}, and is forgotten by {@code remove_worker}. A store for a
 *       worker that is not known while {@code config.maxWorkers()} workers are known answers
 *       {@code capacity_exceeded}.
 *   <li>Tiers (docs/SPEC.md section 3.1): each name carries the set of tiers that hold it under that
 *       name; the GPU depth looks at the names whose set has the GPU, the any-tier depth at all of
 *       them. A worker with a lower-tier view counts as two worker slots.
 *   <li>The memory budget is ignored: the oracle never answers {@code capacity_exceeded} for memory,
 *       so it must not be compared with an index that runs under a budget small enough to matter.
 *       {@link IndexStats#bytesUsed()} is reported as 0 and {@link IndexStats#entries()} as the number
 *       of distinct {@code (position, chain hash)} blocks held by anyone.
 * </ul>
 *
 * <p>Thread-safety: every method is {@code synchronized}, so concurrent calls are safe but fully
 * serialised; it is meant to be driven by one thread as a reference, not to be measured.
 */
public final class OracleIndex implements PrefixIndex {
    /** How an index fills a result; the only shared code, and it only stores what it is given. */
    private static final MatchResults RESULTS = MatchResults.access();

    /** One block as docs/SPEC.md section 4 identifies it: where it sits and the chain hash of the prefix ending in it. */
    private record Block(int position, long chain) {}

    /** What a name means: its block, and the tiers that hold it under that name (bits of {@link Medium#bit}). */
    private record Held(Block block, int tiers) {}

    private static final int GPU = Medium.GPU.bit();

    private final IndexConfig config;
    private final BlockHasher hasher;
    private final BlockHasher chainHasher;
    /** Known workers and their names: E -> (block, tiers). A name on no tier is not in the map. */
    private final Map<Worker, Map<Long, Held>> workers = new HashMap<>();
    /** Workers with a lower-tier view (docs/SPEC.md section 3.1): they take a second worker slot. */
    private final Set<Worker> tiered = new HashSet<>();
    /** Per worker, the distinct blocks it holds on the GPU [0] and on any tier [1]; dropped when it changes. */
    private final Map<Worker, List<Set<Block>>> heldCache = new HashMap<>();

    /** The salts of the token-form stores that passed rules 0 and 1, the first 256 (what explain tries). */
    private final Set<MatchExplanation.Salt> salts = new LinkedHashSet<>();

    private final Map<EventStatus, Long> counts = new EnumMap<>(EventStatus.class);
    private boolean closed;

    /** An oracle for {@code config} (block size and seeds for token forms, and worker slots). */
    public OracleIndex(IndexConfig config) {
        this.config = Objects.requireNonNull(config, "config");
        this.hasher = config.hasher();
        // Chain hashes always on the portable path, so the oracle does not share the native kernel.
        this.chainHasher = BlockHasher.builder()
                .blockSize(1)
                .seed(config.seed())
                .chainSeed(config.chainSeed())
                .implementation(Implementation.PORTABLE)
                .build();
        for (EventStatus s : EventStatus.values()) {
            counts.put(s, 0L);
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("index closed");
        }
    }

    // ------------------------------------------------------------------ events (docs/SPEC.md section 3)

    @Override
    public synchronized EventStatus apply(KvEvent event) {
        Objects.requireNonNull(event, "event");
        checkOpen();
        heldCache.keySet().removeIf(w -> switch (event) {
            case KvEvent.RemoveWorker rw -> w.workerId() == rw.workerId();
            case KvEvent.Stored x -> w.equals(x.worker());
            case KvEvent.StoredTokens x -> w.equals(x.worker());
            case KvEvent.Copied x -> w.equals(x.worker());
            case KvEvent.Removed x -> w.equals(x.worker());
            case KvEvent.Cleared x -> w.equals(x.worker());
        });
        EventStatus status = switch (event) {
            case KvEvent.Stored s ->
                stored(
                        s.worker(),
                        s.medium(),
                        s.parentHash().isPresent(),
                        s.parentHash().orElse(0L),
                        s.blockHashes(),
                        s.localHashes());
            case KvEvent.StoredTokens t -> storedTokens(t);
            case KvEvent.Copied c -> copied(c);
            case KvEvent.Removed r -> removed(r.worker(), r.medium(), r.blockHashes());
            case KvEvent.Cleared c -> {
                Map<Long, Held> names = workers.get(c.worker());
                if (names != null) {
                    names.clear(); // holds nothing on any tier, stays known
                }
                tiered.remove(c.worker());
                yield EventStatus.OK;
            }
            case KvEvent.RemoveWorker rw -> {
                workers.keySet().removeIf(w -> w.workerId() == rw.workerId());
                tiered.removeIf(w -> w.workerId() == rw.workerId());
                yield EventStatus.OK;
            }
        };
        counts.merge(status, 1L, Long::sum);
        return status;
    }

    private EventStatus storedTokens(KvEvent.StoredTokens t) {
        if (t.blockSize() < 1 || t.blockHashes().length != t.tokenIds().length / t.blockSize()) {
            return EventStatus.INVALID_INPUT;
        }
        long seed = BlockHasher.saltedSeed(config.seed(), t.loraName(), t.cacheNamespace());
        BlockHasher h = BlockHasher.builder()
                .blockSize(t.blockSize())
                .seed(seed)
                .chainSeed(config.chainSeed())
                .implementation(Implementation.PORTABLE)
                .build();
        long[] locals = h.localHashes(t.tokenIds());
        if (t.mmHashes() != null) {
            if (t.mmHashes().length != locals.length) {
                return EventStatus.INVALID_INPUT;
            }
            for (int b = 0; b < locals.length; b++) {
                if (t.mmHashes()[b] != null && t.mmHashes()[b].length > 0) {
                    locals[b] = multimodalLocal(t.tokenIds(), b, t.blockSize(), t.mmHashes()[b], seed);
                }
            }
        }
        Set<Long> names = new HashSet<>();
        boolean rule1 = false;
        for (long e : t.blockHashes()) {
            rule1 |= !names.add(e);
        }
        rule1 |= t.parentHash().isPresent() && names.contains(t.parentHash().getAsLong());
        if (!rule1 && salts.size() < 256) {
            salts.add(new MatchExplanation.Salt(t.loraName(), t.cacheNamespace()));
        }
        return stored(
                t.worker(),
                t.medium(),
                t.parentHash().isPresent(),
                t.parentHash().orElse(0L),
                t.blockHashes(),
                locals);
    }

    /**
     * Section 2.1 for a multimodal block, written out byte by byte here (not through the hash
     * kernels): le32 of each token, then le64 of each content hash, sorted ascending as unsigned.
     */
    static long multimodalLocal(int[] tokens, int block, int blockSize, long[] mm, long seed) {
        Long[] sorted = new Long[mm.length];
        for (int i = 0; i < mm.length; i++) {
            sorted[i] = mm[i];
        }
        java.util.Arrays.sort(sorted, Long::compareUnsigned);
        java.nio.ByteBuffer buf =
                java.nio.ByteBuffer.allocate(4 * blockSize + 8 * mm.length).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < blockSize; i++) {
            buf.putInt(tokens[block * blockSize + i]);
        }
        for (Long m : sorted) {
            buf.putLong(m);
        }
        return BlockHasher.xxh3(buf.array(), seed);
    }

    /** Slots in use: one per known worker, a second per worker with a lower-tier view. */
    private int slotsUsed() {
        return workers.size() + tiered.size();
    }

    private EventStatus stored(
            Worker worker, Medium medium, boolean hasParent, long parentHash, long[] blockHashes, long[] locals) {
        if (blockHashes.length != locals.length) {
            return EventStatus.INVALID_INPUT;
        }
        // Rule 1: the same E twice, or the parent among the blocks.
        Set<Long> seen = new HashSet<>();
        for (long e : blockHashes) {
            if (!seen.add(e)) {
                return EventStatus.INVALID_BLOCK_SEQUENCE;
            }
        }
        if (hasParent && seen.contains(parentHash)) {
            return EventStatus.INVALID_BLOCK_SEQUENCE;
        }
        // Rule 2: the parent must be held by this worker: on the GPU for a GPU store, on any tier otherwise.
        Map<Long, Held> names = workers.get(worker);
        Block parent = null;
        if (hasParent) {
            Held p = names == null ? null : names.get(parentHash);
            if (p == null || (medium == Medium.GPU && (p.tiers() & GPU) == 0)) {
                return EventStatus.PARENT_BLOCK_NOT_FOUND;
            }
            parent = p.block();
        }
        // Rule 5 (worker slots): a new worker needs a slot, and a first lower-tier store a second one.
        boolean needsView = medium != Medium.GPU && blockHashes.length > 0 && !tiered.contains(worker);
        int need = (names == null ? 1 : 0) + (needsView ? 1 : 0);
        if (need > 0 && slotsUsed() + need > config.maxWorkers()) {
            return EventStatus.CAPACITY_EXCEEDED;
        }
        if (names == null) {
            names = new HashMap<>();
            workers.put(worker, names);
        }
        if (needsView) {
            tiered.add(worker);
        }
        // Rules 3 and 4: positions follow the parent, chains are computed here. On the GPU a name means
        // its latest block (and the lower tiers lose it if it meant another); on a lower tier a name the
        // worker holds keeps its block and gains the tier.
        Block prev = parent;
        for (int i = 0; i < blockHashes.length; i++) {
            Held old = names.get(blockHashes[i]);
            if (medium != Medium.GPU && old != null) {
                names.put(blockHashes[i], new Held(old.block(), old.tiers() | medium.bit()));
                prev = old.block();
                continue;
            }
            long chain = prev == null ? locals[i] : chainHasher.chainHash(prev.chain(), locals[i]);
            Block b = new Block(prev == null ? 0 : prev.position() + 1, chain);
            int tiers = old != null && old.block().equals(b) ? old.tiers() | medium.bit() : medium.bit();
            names.put(blockHashes[i], new Held(b, tiers));
            prev = b;
        }
        return EventStatus.OK;
    }

    /** Section 3.1: each name the worker holds (on any tier) gains the lower tier; unknown ones are skipped. */
    private EventStatus copied(KvEvent.Copied c) {
        Map<Long, Held> names = workers.get(c.worker());
        boolean unknown = false;
        boolean anyKnown = false;
        for (long e : c.blockHashes()) {
            if (names != null && names.containsKey(e)) {
                anyKnown = true;
            } else {
                unknown = true;
            }
        }
        if (anyKnown && !tiered.contains(c.worker())) {
            if (slotsUsed() + 1 > config.maxWorkers()) {
                return EventStatus.CAPACITY_EXCEEDED;
            }
            tiered.add(c.worker());
        }
        for (long e : c.blockHashes()) {
            Held h = names == null ? null : names.get(e);
            if (h != null) {
                names.put(e, new Held(h.block(), h.tiers() | c.medium().bit()));
            }
        }
        return unknown ? EventStatus.BLOCK_NOT_FOUND : EventStatus.OK;
    }

    /** The names the worker holds on {@code medium} lose it, in order; a name on no tier is gone. */
    private EventStatus removed(Worker worker, Medium medium, long[] hashes) {
        Map<Long, Held> names = workers.get(worker);
        boolean unknown = false;
        for (long e : hashes) {
            Held h = names == null ? null : names.get(e);
            if (h == null || (h.tiers() & medium.bit()) == 0) {
                unknown = true;
                continue;
            }
            int left = h.tiers() & ~medium.bit();
            if (left == 0) {
                names.remove(e);
            } else {
                names.put(e, new Held(h.block(), left));
            }
        }
        return unknown ? EventStatus.BLOCK_NOT_FOUND : EventStatus.OK;
    }

    // ------------------------------------------------------------------ matches (docs/SPEC.md section 4)

    @Override
    public synchronized void match(long[] localHashes, int offset, int length, MatchResult into) {
        Objects.checkFromIndexSize(offset, length, localHashes.length);
        Objects.requireNonNull(into, "into");
        checkOpen();
        RESULTS.reset(into, length);
        long[] cq = new long[length];
        for (int i = 0; i < length; i++) {
            long q = localHashes[offset + i];
            cq[i] = i == 0 ? q : chainHasher.chainHash(cq[i - 1], q);
        }
        for (Worker w : workers.keySet()) {
            int gpu = depth(held(w, true), cq);
            int any = depth(held(w, false), cq);
            if (any > 0) {
                RESULTS.add(into, w, gpu, any);
            }
        }
    }

    /** Section 4 literally: for i = 0, 1, ..., is a block at position i with chain cq[i] held? */
    private static int depth(Set<Block> held, long[] cq) {
        int k = 0;
        while (k < cq.length && held.contains(new Block(k, cq[k]))) {
            k++;
        }
        return k;
    }

    /** The distinct blocks {@code w} holds on the GPU (what explain looks at: section 4.1 is about the GPU). */
    private Set<Block> held(Worker w) {
        return held(w, true);
    }

    /** The distinct blocks {@code w} holds under any name: on the GPU, or on any tier. */
    private Set<Block> held(Worker w, boolean gpuOnly) {
        return heldCache
                .computeIfAbsent(w, k -> {
                    Set<Block> gpu = new HashSet<>();
                    Set<Block> any = new HashSet<>();
                    for (Held h : workers.get(k).values()) {
                        any.add(h.block());
                        if ((h.tiers() & GPU) != 0) {
                            gpu.add(h.block());
                        }
                    }
                    return List.of(gpu, any);
                })
                .get(gpuOnly ? 0 : 1);
    }

    @Override
    public synchronized void match(int[] tokens, int offset, int length, BlockHasher hasher, MatchResult into) {
        Objects.checkFromIndexSize(offset, length, tokens.length);
        Objects.requireNonNull(into, "into");
        if (hasher.chainSeed() != config.chainSeed()) {
            throw new IllegalArgumentException("the hasher's chain seed " + Long.toUnsignedString(hasher.chainSeed())
                    + " differs from the index's " + Long.toUnsignedString(config.chainSeed()));
        }
        checkOpen();
        long[] locals = hasher.localHashes(tokens, offset, length);
        match(locals, 0, locals.length, into);
    }

    // ------------------------------------------------------------------ explain (docs/SPEC.md section 4.1)

    @Override
    public synchronized MatchExplanation explain(long[] localHashes, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, localHashes.length);
        checkOpen();
        return explainHashes(java.util.Arrays.copyOfRange(localHashes, offset, offset + length), Map.of(), Map.of());
    }

    /**
     * Literally: per known worker, its depth; the first later position where it holds the request's
     * block; and, over every salt seen but the request's own (and no salt), the deepest match of the
     * tokens under it if deeper than the depth (the first such salt in (lora, namespace) order, nulls first).
     */
    @Override
    public synchronized MatchExplanation explain(int[] tokens, int offset, int length, BlockHasher hasher) {
        Objects.checkFromIndexSize(offset, length, tokens.length);
        if (hasher.chainSeed() != config.chainSeed()) {
            throw new IllegalArgumentException("the hasher's chain seed differs from the index's");
        }
        checkOpen();
        MatchExplanation.Salt own = new MatchExplanation.Salt(hasher.loraName(), hasher.cacheNamespace());
        List<MatchExplanation.Salt> others = new ArrayList<>(salts);
        others.add(new MatchExplanation.Salt(null, null));
        others.removeIf(s -> s.equals(own));
        others = new ArrayList<>(new LinkedHashSet<>(others));
        others.sort(java.util.Comparator.comparing(
                        MatchExplanation.Salt::loraName, java.util.Comparator.nullsFirst(String::compareTo))
                .thenComparing(
                        MatchExplanation.Salt::cacheNamespace, java.util.Comparator.nullsFirst(String::compareTo)));
        Map<Worker, MatchExplanation.Salt> bestSalt = new HashMap<>();
        Map<Worker, Integer> bestDepth = new HashMap<>();
        for (MatchExplanation.Salt s : others) {
            long[] q = BlockHasher.builder()
                    .blockSize(hasher.blockSize())
                    .seed(BlockHasher.saltedSeed(hasher.baseSeed(), s.loraName(), s.cacheNamespace()))
                    .chainSeed(config.chainSeed())
                    .implementation(Implementation.PORTABLE)
                    .build()
                    .localHashes(tokens, offset, length);
            for (Worker w : workers.keySet()) {
                int d = depth(w, chains(q));
                if (d > bestDepth.getOrDefault(w, 0)) {
                    bestDepth.put(w, d);
                    bestSalt.put(w, s);
                }
            }
        }
        return explainHashes(hasher.localHashes(tokens, offset, length), bestSalt, bestDepth);
    }

    private MatchExplanation explainHashes(
            long[] q, Map<Worker, MatchExplanation.Salt> bestSalt, Map<Worker, Integer> bestDepth) {
        long[] cq = chains(q);
        List<MatchExplanation.WorkerStop> out = new ArrayList<>();
        for (Worker w : workers.keySet()) {
            int k = depth(w, cq);
            int resumes = -1;
            for (int j = k + 1; j < q.length && resumes < 0; j++) {
                if (held(w).contains(new Block(j, cq[j]))) {
                    resumes = j;
                }
            }
            MatchExplanation.Salt s = bestDepth.getOrDefault(w, 0) > k ? bestSalt.get(w) : null;
            out.add(MatchExplanation.WorkerStop.of(w, q.length, k, resumes, s, s == null ? 0 : bestDepth.get(w)));
        }
        return new MatchExplanation(q.length, out);
    }

    private long[] chains(long[] q) {
        long[] cq = new long[q.length];
        for (int i = 0; i < q.length; i++) {
            cq[i] = i == 0 ? q[0] : chainHasher.chainHash(cq[i - 1], q[i]);
        }
        return cq;
    }

    private int depth(Worker w, long[] cq) {
        Set<Block> held = held(w);
        int k = 0;
        while (k < cq.length && held.contains(new Block(k, cq[k]))) {
            k++;
        }
        return k;
    }

    // ------------------------------------------------------------------ introspection

    @Override
    public synchronized long blockCount(Worker worker) {
        checkOpen();
        return workers.containsKey(worker) ? held(worker, true).size() : 0;
    }

    @Override
    public synchronized List<Worker> workers() {
        checkOpen();
        List<Worker> out = new ArrayList<>(workers.keySet());
        out.sort(null);
        return List.copyOf(out);
    }

    @Override
    public synchronized long eventCount(EventStatus status) {
        checkOpen();
        return counts.get(status);
    }

    @Override
    public synchronized IndexStats stats() {
        checkOpen();
        Map<Worker, Long> perWorker = new TreeMap<>();
        Set<Block> everyBlock = new HashSet<>();
        long blocks = 0;
        for (Worker w : workers.keySet()) {
            Set<Block> held = held(w, true);
            perWorker.put(w, (long) held.size());
            blocks += held.size();
            everyBlock.addAll(held);
        }
        return new IndexStats(
                workers.size(), blocks, everyBlock.size(), 0, 0, everyBlock.size(), 0, 0, false, perWorker, counts);
    }

    @Override
    public BlockHasher hasher() {
        return hasher;
    }

    @Override
    public IndexConfig config() {
        return config;
    }

    @Override
    public synchronized void close() {
        closed = true;
        workers.clear();
        tiered.clear();
        heldCache.clear();
    }

    @Override
    public String toString() {
        return "OracleIndex[" + config + "]";
    }

    /** The oracle keeps no snapshots: it is the reference that restored indexes are compared with. */
    @Override
    public void snapshot(java.nio.file.Path file, Map<String, String> metadata) {
        throw new UnsupportedOperationException("the oracle keeps no snapshots");
    }

    @Override
    public Map<String, String> snapshotMetadata() {
        return Map.of();
    }
}
