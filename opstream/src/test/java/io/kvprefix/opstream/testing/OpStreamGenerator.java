package io.kvprefix.opstream.testing;

import io.kvprefix.BlockHasher;
import io.kvprefix.Implementation;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.Medium;
import io.kvprefix.Worker;
import io.kvprefix.opstream.Op;
import io.kvprefix.testing.OracleIndex;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * Seeded random op streams that make the hard cases of docs/SPEC.md sections 3-4 common: small alphabets
 * of local hashes, engine hashes and token blocks (so collisions, name reuse and duplicate names
 * happen all the time), local hashes equal to other blocks' chain hashes, pairs of local hashes that
 * a naive {@code (position, L)} key mixer could conflate, removes of middle blocks and re-stores that
 * fill the holes, stores under unknown parents and under parents held only by a sibling dp rank,
 * clears, remove_worker with slot reuse by new workers, ids of 2^63 and more and dp rank 2^32-1, long
 * and short chains (up to thousands of blocks), hash and token forms, mixed block sizes, LoRA and
 * namespace salts (empty strings too), and optionally malformed lines ({@link LineVariants}).
 *
 * <p>The generator keeps a rough model of what each worker holds (rules 1 and 2 and the worker slots,
 * nothing else) only to steer: most stores continue chains the worker holds, most matches query
 * prefixes that some worker stored, with divergence points and extensions. The model never decides
 * an expected answer; {@link Differential} asks the {@link OracleIndex} for that.
 *
 * <p>Same seed and options, same stream. Thread-safety: not thread-safe; one generator per thread.
 */
public final class OpStreamGenerator {

    /**
     * Knobs of a stream. Start from {@link #defaults()} and change what matters.
     *
     * <p>Thread-safety: not thread-safe (a mutable builder-style holder); do not share while changing it.
     */
    public static final class Options {
        int ops = 400;
        int workerIds = 6;
        int maxRanks = 2;
        int slots = 1024;
        int localAlphabet = 12;
        int nameAlphabet = 12;
        int tokenAlphabet = 6;
        int maxChain = 10;
        double longChainRate = 0.004;
        int maxLongChain = 2500;
        double tokenRate = 0.35;
        double matchRate = 0.35;
        double malformedRate = 0.0;
        /** Share of ops about lower tiers (docs/SPEC.md section 3.1): copies, lower-tier stores and removals. */
        double tierRate = 0.08;

        int[] blockSizes = {1, 2, 4, 16};
        long seed = BlockHasher.DEFAULT_SEED;
        long chainSeed = BlockHasher.DEFAULT_CHAIN_SEED;

        private Options() {}

        /** 400 ops, 6 worker ids of up to 2 dp ranks, small alphabets, short chains, some token forms. */
        public static Options defaults() {
            return new Options();
        }

        /**
         * Options drawn at random for one stream of a differential run against an index with
         * {@code config}: sizes, alphabets and rates vary from stream to stream. With 16 slots or fewer,
         * more workers than slots come and go (capacity_exceeded, slot reuse); otherwise between
         * {@code minWorkerIds} and {@code maxWorkerIds} worker ids.
         */
        public static Options random(SplittableRandom r, IndexConfig config, int minWorkerIds, int maxWorkerIds) {
            Options o = new Options().config(config);
            o.ops = 40 + r.nextInt(500);
            int slots = config.maxWorkers();
            if (slots <= 16) {
                o.workerIds = slots + 1 + r.nextInt(slots + 3);
                o.maxRanks = 1 + r.nextInt(2);
            } else {
                o.workerIds = minWorkerIds + r.nextInt(Math.max(1, maxWorkerIds - minWorkerIds + 1));
                o.maxRanks = o.workerIds <= 16 && r.nextInt(3) == 0 ? 3 : 1;
            }
            if (o.workerIds > 150) {
                o.ops = 3000 + r.nextInt(2500); // enough ops for hundreds of workers to hold shared prefixes
            } else if (o.workerIds > 40) {
                o.ops = 1200 + r.nextInt(1600);
            }
            o.localAlphabet = 3 + r.nextInt(30);
            o.nameAlphabet = 2 + r.nextInt(20);
            o.tokenAlphabet = 2 + r.nextInt(8);
            o.maxChain = 2 + r.nextInt(r.nextInt(4) == 0 ? 80 : 12);
            o.longChainRate = r.nextInt(5) == 0 ? 0.01 : 0.0;
            o.maxLongChain = 150 + r.nextInt(2000);
            o.tokenRate = r.nextDouble() * 0.7;
            o.matchRate = 0.2 + r.nextDouble() * 0.3;
            o.tierRate = r.nextInt(3) == 0 ? 0.0 : r.nextDouble() * 0.25;
            return o;
        }

        public Options ops(int v) {
            ops = v;
            return this;
        }
        /** Distinct worker ids in use at a time (more appear as others are removed). */
        public Options workerIds(int v) {
            workerIds = Math.max(1, v);
            return this;
        }
        /** dp ranks per worker id, 1..5, drawn from 0, 1, 2^32-1, 2, 3. */
        public Options maxRanks(int v) {
            maxRanks = Math.max(1, Math.min(5, v));
            return this;
        }
        /** The index's worker slots (for steering only). */
        public Options slots(int v) {
            slots = v;
            return this;
        }

        public Options localAlphabet(int v) {
            localAlphabet = Math.max(2, v);
            return this;
        }

        public Options nameAlphabet(int v) {
            nameAlphabet = Math.max(1, v);
            return this;
        }

        public Options tokenAlphabet(int v) {
            tokenAlphabet = Math.max(1, v);
            return this;
        }
        /** Typical longest store, in blocks. */
        public Options maxChain(int v) {
            maxChain = Math.max(1, v);
            return this;
        }
        /** Share of stores that are long chains (100 to {@link #maxLongChain} blocks). */
        public Options longChainRate(double v) {
            longChainRate = v;
            return this;
        }

        public Options maxLongChain(int v) {
            maxLongChain = Math.max(101, v);
            return this;
        }
        /** Share of stores written in token form when the content has tokens. */
        public Options tokenRate(double v) {
            tokenRate = v;
            return this;
        }

        public Options matchRate(double v) {
            matchRate = v;
            return this;
        }
        /** Share of malformed lines. */
        public Options tierRate(double v) {
            tierRate = v;
            return this;
        }

        public Options malformedRate(double v) {
            malformedRate = v;
            return this;
        }

        public Options blockSizes(int... v) {
            blockSizes = v.clone();
            return this;
        }
        /** Takes the seeds (for hashing token content) and the worker slots from {@code config}. */
        public Options config(IndexConfig config) {
            seed = config.seed();
            chainSeed = config.chainSeed();
            slots = config.maxWorkers();
            return this;
        }

        @Override
        public String toString() {
            return "Options[ops=" + ops + ", workerIds=" + workerIds + ", maxRanks=" + maxRanks + ", slots=" + slots
                    + ", localAlphabet=" + localAlphabet + ", nameAlphabet=" + nameAlphabet + ", tokenAlphabet="
                    + tokenAlphabet + ", maxChain=" + maxChain + ", longChainRate=" + longChainRate + ", tokenRate="
                    + String.format("%.2f", tokenRate) + ", matchRate=" + String.format("%.2f", matchRate)
                    + ", malformedRate=" + malformedRate + ", tierRate=" + String.format("%.2f", tierRate)
                    + ", blockSizes=" + Arrays.toString(blockSizes) + "]";
        }
    }

    /** The few multimodal content hashes the generator uses, one above 2^63 (sorted as unsigned). */
    private static final long[] MM_ALPHABET = {42, 7, -3L};

    /** Token content is hashed with this block size and salt. */
    private record Flavor(int blockSize, String lora, String namespace) {}

    /**
     * A piece of content: local hashes per block and, where known, the block's tokens (one flavor per doc).
     * A block {@code i} of a doc, stored consistently, sits at position {@code i}.
     */
    private static final class Doc {
        final long[] locals;
        final int[][] tokens; // null entries for blocks that exist only as hashes
        final Flavor flavor; // null when no block has tokens
        final long[][] mm; // multimodal hashes per token block (docs/SPEC.md section 2.1); null entries for none

        Doc(long[] locals, int[][] tokens, Flavor flavor, long[][] mm) {
            this.locals = locals;
            this.tokens = tokens;
            this.flavor = flavor;
            this.mm = mm;
        }

        int length() {
            return locals.length;
        }

        boolean hasTokens(int from, int to) {
            if (flavor == null) {
                return false;
            }
            for (int i = from; i < to; i++) {
                if (tokens[i] == null) {
                    return false;
                }
            }
            return true;
        }
    }

    /** Block {@code index} of {@code doc}. */
    private record Node(Doc doc, int index) {}

    /** What the generator believes a worker holds: its names. */
    private static final class Holdings {
        final List<Long> names = new ArrayList<>();
        final Map<Long, Integer> slotOf = new HashMap<>();
        final Map<Long, Node> nodes = new HashMap<>();

        void put(long e, Node n) {
            if (nodes.put(e, n) == null) {
                slotOf.put(e, names.size());
                names.add(e);
            }
        }

        boolean remove(long e) {
            if (nodes.remove(e) == null) {
                return false;
            }
            int i = slotOf.remove(e);
            long last = names.remove(names.size() - 1);
            if (i < names.size()) {
                names.set(i, last);
                slotOf.put(last, i);
            }
            return true;
        }

        void clear() {
            names.clear();
            slotOf.clear();
            nodes.clear();
        }

        long random(SplittableRandom r) {
            return names.get(r.nextInt(names.size()));
        }
    }

    /** A block a worker stopped holding: a candidate for a re-store that fills the hole. */
    private record Hole(Worker worker, long name, Node node) {}

    private static final long GOLDEN = 0x9E37_79B9_7F4A_7C15L;
    private static final int[] RANKS = {0, 1, -1, 2, 3};
    private static final String[] LORAS = {null, null, "adapter-a", "ünï-lora", "\uD83E\uDD99 llama", ""};
    private static final String[] NAMESPACES = {null, null, "tenant-1", ""};
    private static final int MAX_DOCS = 200;

    private final Options o;
    private final SplittableRandom rnd;
    private final Random jsonRnd;
    private final long[] alphabet;
    private final List<Flavor> flavors = new ArrayList<>();
    private final Map<Flavor, int[][]> tokenPool = new HashMap<>();
    private final Map<Flavor, BlockHasher> hashers = new HashMap<>();
    private final BlockHasher chainer;
    private final List<Doc> docs = new ArrayList<>();
    private final List<Long> activeIds = new ArrayList<>();
    private final Map<Worker, Holdings> known = new HashMap<>();
    private final List<Worker> knownList = new ArrayList<>();
    private final List<Hole> holes = new ArrayList<>();
    private long nextId;
    private long nextName;

    /** A generator of streams for {@code seed} and {@code options}. */
    public OpStreamGenerator(long seed, Options options) {
        this.o = options;
        this.rnd = new SplittableRandom(seed);
        this.jsonRnd = new Random(rnd.nextLong());
        this.chainer = BlockHasher.builder()
                .blockSize(1)
                .seed(o.seed)
                .chainSeed(o.chainSeed)
                .implementation(Implementation.PORTABLE)
                .build();
        this.nextId = 1 + rnd.nextInt(1 << 20);
        this.nextName = 1_000_000 + rnd.nextInt(1 << 20);
        this.alphabet = buildAlphabet();
        int nFlavors = 1 + rnd.nextInt(4);
        for (int i = 0; i < nFlavors; i++) {
            int bs = o.blockSizes[rnd.nextInt(o.blockSizes.length)];
            Flavor f = new Flavor(bs, LORAS[rnd.nextInt(LORAS.length)], NAMESPACES[rnd.nextInt(NAMESPACES.length)]);
            if (!flavors.contains(f)) {
                flavors.add(f);
                int[][] pool = new int[o.tokenAlphabet][];
                for (int b = 0; b < pool.length; b++) {
                    pool[b] = new int[bs];
                    for (int t = 0; t < bs; t++) {
                        pool[b][t] = switch (rnd.nextInt(8)) {
                            case 0 -> rnd.nextInt(); // any u32, often >= 2^31
                            case 1 -> -1; // 2^32-1
                            default -> rnd.nextInt(40); // small, shared between flavors
                        };
                    }
                }
                tokenPool.put(f, pool);
                long salted = BlockHasher.saltedSeed(o.seed, f.lora(), f.namespace());
                hashers.put(
                        f,
                        BlockHasher.builder()
                                .blockSize(bs)
                                .seed(salted)
                                .chainSeed(o.chainSeed)
                                .implementation(Implementation.PORTABLE)
                                .build());
            }
        }
    }

    /** Local hashes: specials, random values, and neighbours that differ by the golden-ratio constant. */
    private long[] buildAlphabet() {
        List<Long> a = new ArrayList<>(List.of(0L, -1L, Long.MIN_VALUE, 1L));
        while (a.size() < o.localAlphabet) {
            long v = rnd.nextLong();
            a.add(v);
            if (rnd.nextInt(3) == 0) {
                // (p, v) and (p + 1, v - GOLDEN) collide under key = L + GOLDEN * (p + 1)
                a.add(v - GOLDEN);
                a.add(v - 2 * GOLDEN);
            }
        }
        long[] out = new long[o.localAlphabet];
        for (int i = 0; i < out.length; i++) {
            out[i] = a.get(i);
        }
        return out;
    }

    /** The whole stream: {@code options.ops} ops. */
    public List<Op> generate() {
        List<Op> ops = new ArrayList<>(o.ops);
        for (int i = 0; i < o.ops; i++) {
            ops.add(next());
        }
        return ops;
    }

    /** The next op. */
    public Op next() {
        if (o.malformedRate > 0 && rnd.nextDouble() < o.malformedRate) {
            return LineVariants.randomMalformed(jsonRnd);
        }
        if (knownList.isEmpty()) {
            return rnd.nextInt(10) == 0 ? match() : store();
        }
        if (rnd.nextDouble() < o.matchRate) {
            return match();
        }
        if (o.tierRate > 0 && rnd.nextDouble() < o.tierRate) {
            return tiered();
        }
        int r = rnd.nextInt(100);
        if (r < 52) {
            return store();
        }
        if (r < 70) {
            return removed();
        }
        if (r < 80) {
            return restore();
        }
        if (r < 91) {
            return badStore();
        }
        if (r < 95) {
            return cleared();
        }
        return removeWorker();
    }

    // ------------------------------------------------------------------ workers

    private long newId() {
        int r = rnd.nextInt(20);
        long id;
        if (r == 0) {
            long[] special = {-1L, 0L, Long.MIN_VALUE, Long.MAX_VALUE};
            id = special[rnd.nextInt(special.length)];
        } else if (r < 4) {
            id = Long.MIN_VALUE | nextId++;
        } else {
            id = nextId++;
        }
        if (!activeIds.contains(id)) {
            activeIds.add(id);
        }
        return id;
    }

    private Worker poolWorker() {
        long id;
        if (activeIds.isEmpty() || activeIds.size() < o.workerIds && rnd.nextInt(4) > 0 || rnd.nextInt(40) == 0) {
            id = newId();
        } else {
            id = activeIds.get(rnd.nextInt(activeIds.size()));
        }
        return Worker.of(id, RANKS[rnd.nextInt(o.maxRanks)]);
    }

    /** A known worker, or (more often while fewer workers are known than the options ask for) a new one. */
    private Worker storeWorker() {
        double fill = (double) knownList.size() / Math.max(1, o.workerIds * (o.maxRanks + 1) / 2);
        double pNew = Math.max(0.08, 0.9 * (1 - Math.min(1.0, fill)));
        if (!knownList.isEmpty() && rnd.nextDouble() >= pNew) {
            return knownList.get(rnd.nextInt(knownList.size()));
        }
        return poolWorker();
    }

    private Worker knownWithNames() {
        for (int attempt = 0; attempt < 8 && !knownList.isEmpty(); attempt++) {
            Worker w = knownList.get(rnd.nextInt(knownList.size()));
            if (!known.get(w).names.isEmpty()) {
                return w;
            }
        }
        return null;
    }

    // ------------------------------------------------------------------ content

    private long randomLocal() {
        int r = rnd.nextInt(100);
        if (r < 75) {
            return alphabet[rnd.nextInt(alphabet.length)];
        }
        if (r < 95 || docs.isEmpty()) {
            return rnd.nextLong();
        }
        // the chain hash of a prefix of some doc, as a local hash
        Doc d = docs.get(rnd.nextInt(docs.size()));
        int m = 1 + rnd.nextInt(Math.min(8, d.length()));
        long c = d.locals[0];
        for (int i = 1; i < m; i++) {
            c = chainer.chainHash(c, d.locals[i]);
        }
        return c;
    }

    private int[] randomTokenBlock(Flavor f) {
        int[][] pool = tokenPool.get(f);
        int[] b = pool[rnd.nextInt(pool.length)];
        if (rnd.nextInt(10) == 0) {
            b = b.clone();
            b[rnd.nextInt(b.length)] = rnd.nextInt();
        }
        return b;
    }

    /**
     * A new doc: {@code base[0..keep)} (if any) followed by fresh blocks up to {@code length}. Fresh
     * blocks have tokens (of the base's flavor, or a random one) or are hashes only.
     */
    private Doc newDoc(Doc base, int keep, int length) {
        Flavor f = base == null ? null : base.flavor;
        boolean tokensTail = !flavors.isEmpty() && rnd.nextDouble() < 0.6;
        if (tokensTail && f == null) {
            f = flavors.get(rnd.nextInt(flavors.size()));
        }
        long[] locals = new long[length];
        int[][] tokens = new int[length][];
        long[][] mm = new long[length][];
        if (base != null) {
            System.arraycopy(base.locals, 0, locals, 0, keep);
            if (base.flavor != null && base.flavor.equals(f)) {
                System.arraycopy(base.tokens, 0, tokens, 0, keep);
                System.arraycopy(base.mm, 0, mm, 0, keep);
            }
        }
        for (int i = keep; i < length; i++) {
            if (tokensTail) {
                tokens[i] = randomTokenBlock(f);
                if (rnd.nextInt(8) == 0) { // a multimodal block: one or two items from a small alphabet
                    mm[i] = rnd.nextInt(4) == 0
                            ? new long[] {MM_ALPHABET[rnd.nextInt(3)], MM_ALPHABET[rnd.nextInt(3)]}
                            : new long[] {MM_ALPHABET[rnd.nextInt(3)]};
                }
                locals[i] = mm[i] == null
                        ? hashers.get(f).localHashes(tokens[i])[0]
                        : hashers.get(f).localHashes(tokens[i], 0, f.blockSize(), new long[][] {mm[i]})[0];
            } else {
                locals[i] = randomLocal();
            }
        }
        boolean anyTokens = false;
        for (int[] t : tokens) {
            anyTokens |= t != null;
        }
        Doc d = new Doc(locals, tokens, anyTokens ? f : null, mm);
        if (docs.size() < MAX_DOCS) {
            docs.add(d);
        } else {
            docs.set(rnd.nextInt(MAX_DOCS), d);
        }
        return d;
    }

    private int chainLength() {
        if (o.longChainRate > 0 && rnd.nextDouble() < o.longChainRate) {
            return 100 + rnd.nextInt(o.maxLongChain - 99);
        }
        return 1 + Math.min(rnd.nextInt(o.maxChain), rnd.nextInt(o.maxChain));
    }

    // ------------------------------------------------------------------ stores

    private Op store() {
        Worker w = storeWorker();
        Holdings h = known.get(w);
        int k = chainLength();
        if (h != null && !h.names.isEmpty() && rnd.nextInt(10) < 6) {
            long parent = h.random(rnd);
            Node pn = h.nodes.get(parent);
            Doc d = pn.doc();
            int start = pn.index() + 1;
            if (start + k > d.length() || rnd.nextInt(10) < 3) {
                d = newDoc(d, start, start + k + rnd.nextInt(8)); // fork: same prefix, new continuation
            }
            return emitStore(w, parent, d, start, k, null);
        }
        Doc d;
        if (docs.isEmpty() || rnd.nextInt(10) < 2) {
            d = newDoc(null, 0, k + rnd.nextInt(8));
        } else if (h == null && rnd.nextBoolean()) {
            d = docs.get(0); // a new worker's first store: often the same content as everyone's
        } else {
            // half the time one of the first few docs, so that many workers share the same prefixes
            d = rnd.nextBoolean()
                    ? docs.get(rnd.nextInt(Math.min(4, docs.size())))
                    : docs.get(Math.min(rnd.nextInt(docs.size()), rnd.nextInt(docs.size())));
            if (rnd.nextInt(20) == 0 && d.length() > 1) {
                // a root store of blocks from the middle of some content: same L, other positions
                int from = 1 + rnd.nextInt(d.length() - 1);
                Doc slice = new Doc(
                        Arrays.copyOfRange(d.locals, from, d.length()),
                        Arrays.copyOfRange(d.tokens, from, d.length()),
                        d.flavor,
                        Arrays.copyOfRange(d.mm, from, d.length()));
                if (docs.size() < MAX_DOCS) {
                    docs.add(slice);
                }
                d = slice;
            }
        }
        if (k > d.length()) {
            d = newDoc(d, d.length(), k);
        }
        return emitStore(w, null, d, 0, k, null);
    }

    /** A fresh engine hash, a small reused one, or one the worker already uses (its name moves). */
    private long pickName(Holdings h, Long parent, Set<Long> taken) {
        for (int attempt = 0; attempt < 4; attempt++) {
            int r = rnd.nextInt(100);
            long e;
            if (r < 62) {
                e = rnd.nextInt(6) == 0 ? Long.MIN_VALUE | nextName++ : nextName++;
            } else if (r < 90) {
                e = 1 + rnd.nextInt(o.nameAlphabet);
            } else if (h != null && !h.names.isEmpty()) {
                e = h.random(rnd);
            } else {
                e = nextName++;
            }
            if ((parent == null || e != parent) && !taken.contains(e)) {
                return e;
            }
        }
        return nextName++;
    }

    /**
     * Stores {@code doc[start .. start+k)} for {@code w} under {@code parent} (null: a new sequence),
     * in hash or token form, with {@code names} (null: chosen here), and updates the model if the
     * store will succeed.
     */
    private Op emitStore(Worker w, Long parent, Doc doc, int start, int k, long[] names) {
        Holdings h = known.get(w);
        if (names == null) {
            names = new long[k];
            Set<Long> taken = new HashSet<>();
            for (int i = 0; i < k; i++) {
                names[i] = pickName(h, parent, taken);
                taken.add(names[i]);
            }
        }
        OptionalLong p = parent == null ? OptionalLong.empty() : OptionalLong.of(parent);
        KvEvent event;
        if (doc.hasTokens(start, start + k) && rnd.nextDouble() < o.tokenRate) {
            Flavor f = doc.flavor;
            int tail = rnd.nextInt(4) == 0 ? rnd.nextInt(f.blockSize()) : 0;
            int[] tokens = new int[k * f.blockSize() + tail];
            for (int i = 0; i < k; i++) {
                System.arraycopy(doc.tokens[start + i], 0, tokens, i * f.blockSize(), f.blockSize());
            }
            for (int i = k * f.blockSize(); i < tokens.length; i++) {
                tokens[i] = rnd.nextInt(40);
            }
            String lora = f.lora() == null && rnd.nextInt(4) == 0 ? "" : f.lora();
            long[][] mm = Arrays.copyOfRange(doc.mm, start, start + k);
            boolean anyMm = false;
            for (long[] m : mm) {
                anyMm |= m != null;
            }
            event = new KvEvent.StoredTokens(
                    w, p, tokens, f.blockSize(), names, lora, f.namespace(), anyMm || rnd.nextBoolean() ? mm : null);
        } else {
            event = new KvEvent.Stored(w, p, names, Arrays.copyOfRange(doc.locals, start, start + k));
        }
        if (willApply(w, h, parent, names)) {
            if (h == null) {
                h = new Holdings();
                known.put(w, h);
                knownList.add(w);
            }
            for (int i = 0; i < k; i++) {
                h.put(names[i], new Node(doc, start + i));
            }
        }
        return new Op.Event(event);
    }

    /** Rules 1 and 2 and the worker slots, as far as the model knows. */
    private boolean willApply(Worker w, Holdings h, Long parent, long[] names) {
        Set<Long> seen = new HashSet<>();
        for (long e : names) {
            if (!seen.add(e)) {
                return false;
            }
        }
        if (parent != null && (seen.contains(parent) || h == null || !h.nodes.containsKey(parent))) {
            return false;
        }
        return h != null || known.size() < o.slots;
    }

    /** Fills a hole some worker has: re-stores the removed block under its parent, often under its old name. */
    private Op restore() {
        while (!holes.isEmpty()) {
            Hole hole = holes.remove(rnd.nextInt(holes.size()));
            Holdings h = known.get(hole.worker());
            if (h == null) {
                continue;
            }
            Node n = hole.node();
            Long parent = null;
            if (n.index() > 0) {
                parent = findName(h, n.doc(), n.index() - 1);
                if (parent == null) {
                    continue;
                }
            }
            int k = 1;
            while (k < 4 && n.index() + k < n.doc().length() && rnd.nextInt(3) == 0) {
                k++;
            }
            long[] names = new long[k];
            Set<Long> taken = new HashSet<>();
            for (int i = 0; i < k; i++) {
                names[i] = i == 0 && rnd.nextInt(10) < 6 && (parent == null || hole.name() != parent)
                        ? hole.name()
                        : pickName(h, parent, taken);
                taken.add(names[i]);
            }
            return emitStore(hole.worker(), parent, n.doc(), n.index(), k, names);
        }
        return store();
    }

    /** A name {@code h} holds for block {@code index} of content equal to {@code doc}'s up to there. */
    private static Long findName(Holdings h, Doc doc, int index) {
        for (long e : h.names) {
            Node n = h.nodes.get(e);
            if (n.index() == index
                    && (n.doc() == doc || Arrays.equals(n.doc().locals, 0, index + 1, doc.locals, 0, index + 1))) {
                return e;
            }
        }
        return null;
    }

    /** Stores that break rule 1 or rule 2 in the ways docs/SPEC.md section 3 lists. */
    private Op badStore() {
        Worker w = knownWithNames();
        if (w == null) {
            return store();
        }
        Holdings h = known.get(w);
        long held = h.random(rnd);
        Node n = h.nodes.get(held);
        Doc d = n.doc();
        int start = n.index() + 1;
        int k = 1 + rnd.nextInt(4);
        if (start + k > d.length()) {
            d = newDoc(d, start, start + k);
        }
        switch (rnd.nextInt(6)) {
            case 0 -> { // the same engine hash twice
                long[] names = new long[Math.max(2, k)];
                if (start + names.length > d.length()) {
                    d = newDoc(d, start, start + names.length);
                }
                for (int i = 0; i < names.length; i++) {
                    names[i] = nextName++;
                }
                names[names.length - 1] = names[rnd.nextInt(names.length - 1)];
                return emitStore(
                        w, rnd.nextBoolean() ? held : null, d, rnd.nextBoolean() ? start : 0, names.length, names);
            }
            case 1 -> { // the parent among the blocks
                long[] names = new long[k];
                for (int i = 0; i < k; i++) {
                    names[i] = nextName++;
                }
                names[rnd.nextInt(k)] = held;
                return emitStore(w, held, d, start, k, names);
            }
            case 2 -> { // a parent nobody ever named, sometimes with a duplicate too (rule 1 first)
                long[] names = new long[k];
                for (int i = 0; i < k; i++) {
                    names[i] = nextName++;
                }
                if (k > 1 && rnd.nextBoolean()) {
                    names[1] = names[0];
                }
                return emitStore(w, nextName++, d, start, k, names);
            }
            case 3 -> { // a parent held only by a sibling dp rank (or another worker id)
                Worker other = Worker.of(w.workerId(), RANKS[rnd.nextInt(RANKS.length)]);
                if (other.equals(w) || rnd.nextInt(4) == 0) {
                    other = Worker.of(w.workerId() ^ 1, w.dpRank());
                }
                Holdings oh = known.get(other);
                if (oh != null && oh.nodes.containsKey(held)) {
                    return store();
                }
                return emitStore(other, held, d, start, k, null);
            }
            case 4 -> { // a parent the worker removed
                ArrayList<Hole> mine = new ArrayList<>();
                for (Hole hole : holes) {
                    if (hole.worker().equals(w) && !h.nodes.containsKey(hole.name())) {
                        mine.add(hole);
                    }
                }
                if (mine.isEmpty()) {
                    return emitStore(w, nextName++, d, start, k, null);
                }
                Hole hole = mine.get(rnd.nextInt(mine.size()));
                Node hn = hole.node();
                Doc hd = hn.doc();
                if (hn.index() + 1 + k > hd.length()) {
                    hd = newDoc(hd, hn.index() + 1, hn.index() + 1 + k);
                }
                return emitStore(w, hole.name(), hd, hn.index() + 1, k, null);
            }
            default -> { // an empty store: ok under a held parent, parent_block_not_found otherwise
                boolean good = rnd.nextBoolean();
                return emitStore(w, good ? held : nextName++, d, start, 0, new long[0]);
            }
        }
    }

    // ------------------------------------------------------------------ removes, clears

    private Op removed() {
        Worker w = knownWithNames();
        if (w == null || rnd.nextInt(30) == 0) {
            Worker any = rnd.nextBoolean() || knownList.isEmpty()
                    ? poolWorker()
                    : knownList.get(rnd.nextInt(knownList.size()));
            long[] names = rnd.nextInt(4) == 0 ? new long[0] : new long[] {nextName++, 1 + rnd.nextInt(o.nameAlphabet)};
            return remove(any, names);
        }
        Holdings h = known.get(w);
        if (rnd.nextInt(30) == 0) {
            return remove(w, new long[0]);
        }
        if (rnd.nextInt(6) == 0) {
            return remove(w, chainFrom(h));
        }
        int count = rnd.nextInt(10) < 7 ? 1 : 1 + rnd.nextInt(4);
        long[] names = new long[count];
        for (int i = 0; i < count; i++) {
            int r = rnd.nextInt(100);
            if (r < 85 || i == 0) {
                names[i] = h.random(rnd);
            } else if (r < 95) {
                names[i] = nextName++; // unknown: block_not_found, the others are still removed
            } else {
                names[i] = names[rnd.nextInt(i)]; // named twice: the second is unknown
            }
        }
        return remove(w, names);
    }

    /**
     * An engine's eviction of a whole branch: a held block and every block the worker holds after it
     * in the same document, parent first, deepest first, or shuffled.
     */
    private long[] chainFrom(Holdings h) {
        Node start = h.nodes.get(h.random(rnd));
        List<Map.Entry<Long, Node>> chain = new ArrayList<>();
        for (Map.Entry<Long, Node> e : h.nodes.entrySet()) {
            if (e.getValue().doc() == start.doc() && e.getValue().index() >= start.index()) {
                chain.add(e);
            }
        }
        chain.sort(Map.Entry.comparingByValue(java.util.Comparator.comparingInt(Node::index)));
        switch (rnd.nextInt(3)) {
            case 0 -> {}
            case 1 -> java.util.Collections.reverse(chain);
            default -> java.util.Collections.shuffle(chain, new java.util.Random(rnd.nextLong()));
        }
        long[] names = new long[chain.size()];
        for (int i = 0; i < names.length; i++) {
            names[i] = chain.get(i).getKey();
        }
        return names;
    }

    /**
     * An op about a lower tier: a copy of names the worker holds (and now and then an unknown one), a
     * store's content on a lower tier, or a removal from one. The model keeps no tiers: the oracle
     * decides what they do.
     */
    private Op tiered() {
        Medium m = rnd.nextInt(4) == 0 ? Medium.DISK : Medium.CPU;
        Worker w = knownWithNames();
        int r = rnd.nextInt(100);
        if (w == null || r < 30) {
            Op op = store();
            return op instanceof Op.Event(KvEvent.Stored s)
                    ? new Op.Event(new KvEvent.Stored(s.worker(), s.parentHash(), s.blockHashes(), s.localHashes(), m))
                    : op instanceof Op.Event(KvEvent.StoredTokens t)
                            ? new Op.Event(new KvEvent.StoredTokens(
                                    t.worker(),
                                    t.parentHash(),
                                    t.tokenIds(),
                                    t.blockSize(),
                                    t.blockHashes(),
                                    t.loraName(),
                                    t.cacheNamespace(),
                                    t.mmHashes(),
                                    m))
                            : op;
        }
        Holdings h = known.get(w);
        long[] names;
        if (rnd.nextInt(5) == 0) {
            names = chainFrom(h); // a whole branch offloaded, or dropped from the tier
        } else {
            names = new long[1 + rnd.nextInt(3)];
            for (int i = 0; i < names.length; i++) {
                names[i] = rnd.nextInt(12) == 0 ? nextName++ : h.random(rnd);
            }
        }
        return new Op.Event(r < 70 ? new KvEvent.Copied(w, names, m) : new KvEvent.Removed(w, names, m));
    }

    private Op remove(Worker w, long[] names) {
        Holdings h = known.get(w);
        if (h != null) {
            for (long e : names) {
                Node n = h.nodes.get(e);
                if (n != null && h.remove(e)) {
                    if (holes.size() >= 64) {
                        holes.remove(0);
                    }
                    holes.add(new Hole(w, e, n));
                }
            }
        }
        return new Op.Event(new KvEvent.Removed(w, names));
    }

    private Op cleared() {
        Worker w = knownList.isEmpty() || rnd.nextInt(10) == 0
                ? poolWorker()
                : knownList.get(rnd.nextInt(knownList.size()));
        Holdings h = known.get(w);
        if (h != null) {
            h.clear();
        }
        return new Op.Event(new KvEvent.Cleared(w));
    }

    private Op removeWorker() {
        long id;
        if (knownList.isEmpty() || rnd.nextInt(10) == 0) {
            id = rnd.nextBoolean() || activeIds.isEmpty()
                    ? nextId + 1_000_000
                    : activeIds.get(rnd.nextInt(activeIds.size()));
        } else {
            id = knownList.get(rnd.nextInt(knownList.size())).workerId();
        }
        known.keySet().removeIf(w -> w.workerId() == id);
        knownList.removeIf(w -> w.workerId() == id);
        if (rnd.nextInt(10) < 7) {
            activeIds.remove(id); // mostly, new ids take the freed slots; sometimes the same id comes back
        }
        return new Op.Event(new KvEvent.RemoveWorker(id));
    }

    // ------------------------------------------------------------------ matches

    private Op match() {
        Doc d;
        int len;
        int r = rnd.nextInt(100);
        Worker w = r < 62 ? knownWithNames() : null;
        if (w != null) {
            Holdings h = known.get(w);
            Node n = h.nodes.get(h.random(rnd));
            d = n.doc();
            len = n.index() + 1;
        } else if (r < 85 && !docs.isEmpty()) {
            d = docs.get(rnd.nextInt(docs.size()));
            len = 1 + rnd.nextInt(Math.min(d.length(), 2 * o.maxChain));
        } else if (r < 96) {
            long[] q = new long[1 + rnd.nextInt(6)];
            for (int i = 0; i < q.length; i++) {
                q[i] = alphabet[rnd.nextInt(alphabet.length)];
            }
            return new Op.HashMatch(q);
        } else {
            return rnd.nextBoolean() || flavors.isEmpty()
                    ? new Op.HashMatch(new long[0])
                    : new Op.TokenMatch(
                            new int[rnd.nextInt(flavors.get(0).blockSize())],
                            flavors.get(0).blockSize(),
                            null,
                            null);
        }
        // Variants: as stored, shorter, longer, or diverging at some block.
        int variant = rnd.nextInt(10);
        if (variant < 2 && len > 1) {
            len = 1 + rnd.nextInt(len - 1);
        }
        int extend = variant >= 2 && variant < 4 ? 1 + rnd.nextInt(4) : 0;
        int diverge = variant >= 4 && variant < 6 ? rnd.nextInt(len) : -1;
        if (d.hasTokens(0, len) && rnd.nextDouble() < 0.5) {
            return tokenMatch(d, len, extend, diverge);
        }
        long[] q = new long[len + extend];
        System.arraycopy(d.locals, 0, q, 0, len);
        for (int i = len; i < q.length; i++) {
            q[i] = i < d.length() && rnd.nextBoolean() ? d.locals[i] : randomLocal();
        }
        if (diverge >= 0) {
            Doc other = docs.get(rnd.nextInt(docs.size()));
            q[diverge] = diverge < other.length() && rnd.nextBoolean() ? other.locals[diverge] : randomLocal();
        }
        return new Op.HashMatch(q);
    }

    private Op tokenMatch(Doc d, int len, int extend, int diverge) {
        Flavor f = d.flavor;
        int bs = f.blockSize();
        int tail = rnd.nextInt(3) == 0 ? rnd.nextInt(bs) : 0;
        int[] tokens = new int[(len + extend) * bs + tail];
        List<BlockHasher.MmSpan> spans = new ArrayList<>();
        for (int i = 0; i < len + extend; i++) {
            int[] block = i < len
                    ? d.tokens[i]
                    : i < d.length() && d.tokens[i] != null && rnd.nextBoolean() ? d.tokens[i] : randomTokenBlock(f);
            if (i < d.length() && block == d.tokens[i] && d.mm[i] != null && (i != diverge || rnd.nextBoolean())) {
                for (long m : d.mm[i]) { // each item spans its block, or also the block after (one item, two blocks)
                    int end = (i + 1) * bs + (rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(bs) : 0);
                    spans.add(new BlockHasher.MmSpan(i * bs + rnd.nextInt(bs), end, m));
                }
            }
            if (i == diverge) {
                block = (rnd.nextBoolean() ? randomTokenBlock(f) : block).clone(); // never touch the shared pool
                if (rnd.nextBoolean()) {
                    block[rnd.nextInt(bs)] ^= 1 + rnd.nextInt(1000);
                }
            }
            System.arraycopy(block, 0, tokens, i * bs, bs);
        }
        for (int i = (len + extend) * bs; i < tokens.length; i++) {
            tokens[i] = rnd.nextInt();
        }
        String lora = f.lora();
        String ns = f.namespace();
        int salt = rnd.nextInt(20);
        if (salt == 0) {
            Flavor other = flavors.get(rnd.nextInt(flavors.size()));
            lora = other.lora(); // maybe the wrong salt: nothing should match then
            ns = other.namespace();
        } else if (salt == 1 && lora == null) {
            lora = ""; // the same as absent
        }
        return new Op.TokenMatch(tokens, bs, lora, ns, spans);
    }
}
