package io.kvprefix.internal.offheap;

import io.kvprefix.internal.snapshot.NameSegments;
import io.kvprefix.internal.snapshot.SnapshotFormat;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;

/**
 * One worker's names: engine hash {@code E} to the id of the block it names, off-heap, 12 bytes a
 * name. The map is cut into segments (extendible hashing: the top bits of a key's mixed hash pick a
 * {@link NameSegment} through a directory on the heap), each an open-addressing table sized exactly
 * (it grows by half when 80% full below {@link #MAX_SEGMENT} records, then splits by the next hash
 * bit), so a name costs 15 to 23 bytes and the map grows one segment (at most 96 KiB) at a time: a
 * worker's names can fill a budget to its last few hundred KiB, and a segment the budget does not
 * let grow may fill to 90%. A tagged map (an any-tier view, docs/SPEC.md section 3.1) keeps a tier
 * byte per record. Room for a store's names is made before the store changes anything
 * ({@link #ensureRoomFor}); if the budget does not allow it, the map holds the same names.
 *
 * <p>Locks: none; only the writer that owns the worker touches it.
 *
 * <p>Thread-safety: not thread-safe. Only the writer that owns the worker touches it.
 */
final class NameMap {
    /** Records of the smallest segment. */
    static final int MIN_CAPACITY = 16;
    /** Records of a segment past which it splits instead of growing (8,192: 96 KiB). */
    static final int MAX_SEGMENT = 1 << 13;

    static final int MAX_LOAD_PERCENT = 80;
    /**
     * How full a segment may get when the budget does not let it grow: a store is refused only when
     * a segment it falls in is this full, not when the first of many reaches 80%.
     */
    static final int TIGHT_LOAD_PERCENT = 90;
    /** How full each half of a split segment starts. */
    private static final int SPLIT_LOAD_PERCENT = 60;
    /** The deepest directory (2^24 entries); past it a segment grows whatever its size. */
    private static final int MAX_DEPTH = 24;
    /** A placeholder value {@link #claim} leaves until {@link #setAt} fills it. */
    private static final int CLAIMED = -1;

    private final MemoryPool pool;
    private final boolean tagged;
    /** The largest segment under this pool's budget (a small budget cannot hold a 96 KiB segment's copy). */
    private final int maxSegment;

    private final ArrayList<NameSegment> segments = new ArrayList<>();
    private final ArrayList<NameSegment> touched = new ArrayList<>();
    private NameSegment[] dir;
    private int depth;
    private int size;
    /** The record of the last {@link #claim}. */
    private long claimed;

    private NameMap(MemoryPool pool, int maxSegment, boolean tagged) {
        this.pool = pool;
        this.maxSegment = maxSegment;
        this.tagged = tagged;
    }

    /**
     * A map with room for {@code expected} names (as many segments as they need), or null if the
     * budget does not allow it.
     */
    static NameMap create(MemoryPool pool, int expected) {
        return create(pool, expected, false);
    }

    /** A map, tagged or not, with room for {@code expected} names, or null if the budget does not allow it. */
    static NameMap create(MemoryPool pool, int expected, boolean tagged) {
        NameMap m = new NameMap(pool, maxSegmentFor(pool), tagged);
        int d = 0;
        long perSegment = expected;
        while (capacityFor(perSegment) > m.maxSegment && d < MAX_DEPTH) {
            d++;
            perSegment = (expected >> d) + 1;
        }
        m.depth = d;
        m.dir = new NameSegment[1 << d];
        // a segment's share varies with the hash: room for six standard deviations more than the mean
        long room = d == 0 ? perSegment : perSegment + 6 * (long) Math.sqrt(perSegment) + 16;
        for (int j = 0; j < m.dir.length; j++) {
            NameSegment s = m.allocate(capacityFor(room), d, j);
            if (s == null) {
                m.free();
                return null;
            }
            m.dir[j] = s;
            m.segments.add(s);
        }
        return m;
    }

    private static int maxSegmentFor(MemoryPool pool) {
        long bySize = Long.highestOneBit(Math.max(MIN_CAPACITY, pool.budget() / (12L * 32)));
        return (int) Math.min(MAX_SEGMENT, Math.max(MIN_CAPACITY, bySize));
    }

    /**
     * A restore's map, tagged or not: the checked segments {@code segs}, each table used where it lies
     * in the copy-on-write mapping {@code src} ({@code inPlace}, docs/SNAPSHOT.md section 7) or copied
     * in one go from it (the file lays a table out as this class does), the directory rebuilt; null if
     * the budget does not allow it.
     */
    static NameMap restore(MemoryPool pool, boolean tagged, NameSegments segs, MemorySegment src, boolean inPlace) {
        NameMap m = new NameMap(pool, maxSegmentFor(pool), tagged);
        m.depth = segs.depth();
        m.dir = new NameSegment[1 << m.depth];
        for (int k = 0; k < segs.count(); k++) {
            long bytes = SnapshotFormat.segmentTableBytes(segs.capacity(k), tagged);
            MemoryPool.Block b = inPlace
                    ? pool.mapped(src.address() + segs.table(k), bytes)
                    : pool.allocate(bytes, false); // the copy touches every page
            if (b == null) {
                m.free();
                return null;
            }
            if (!inPlace) {
                Mem.copyFrom(src, segs.table(k), b.address, bytes);
            }
            NameSegment s = new NameSegment(b, segs.capacity(k), segs.depth(k), segs.prefix(k), tagged);
            s.size = segs.names(k);
            m.size += s.size;
            m.segments.add(s);
            int start = segs.prefix(k) << (m.depth - s.depth);
            Arrays.fill(m.dir, start, start + (1 << (m.depth - s.depth)), s);
        }
        return m;
    }

    /** A segment as a snapshot stores it (docs/SNAPSHOT.md section 3.3): its header's fields and its table. */
    interface SegmentSink {
        void accept(int capacity, int names, int depth, int prefix, MemorySegment table);
    }

    /** Every segment in directory order (ascending prefix), with its table's memory, for a snapshot. */
    void forEachSegment(SegmentSink to) {
        for (int j = 0; j < dir.length; j += 1 << (depth - dir[j].depth)) {
            NameSegment s = dir[j];
            long bytes = SnapshotFormat.segmentTableBytes(s.capacity, tagged);
            to.accept(s.capacity, s.size, s.depth, (int) s.prefix, Mem.segment(s.block.address, bytes));
        }
    }

    /** The directory's depth: how many top hash bits pick a segment. */
    int depth() {
        return depth;
    }

    int segmentCount() {
        return segments.size();
    }

    private NameSegment allocate(int capacity, int depth, long prefix) {
        MemoryPool.Block b = pool.allocate((tagged ? 13L : 12L) * capacity);
        return b == null ? null : new NameSegment(b, capacity, depth, prefix, tagged);
    }

    /** The capacity for {@code names} names: exactly 80% full with them (at least {@link #MIN_CAPACITY}). */
    static int capacityFor(long names) {
        long need = Math.max(MIN_CAPACITY, names * 100 / MAX_LOAD_PERCENT + 1);
        if (need > (1 << 30)) {
            throw new IllegalStateException("a worker with more than 850 million names is not supported");
        }
        return (int) need;
    }

    private static long mix(long key) {
        return SnapshotFormat.nameMix(key);
    }

    /** The segment of mixed hash {@code h}: its top {@code depth} bits (none at depth 0) index the directory. */
    private NameSegment segment(long h) {
        return dir[SnapshotFormat.nameSegment(h, depth)];
    }

    int size() {
        return size;
    }

    /** Records in all segments. */
    long capacity() {
        long c = 0;
        for (NameSegment s : segments) {
            c += s.capacity;
        }
        return c;
    }

    long bytes() {
        long b = 0;
        for (NameSegment s : segments) {
            b += s.block.bytes();
        }
        return b;
    }

    /** Loads the home key of {@code key} (to start its cache miss early); the value means nothing. */
    long touch(long key) {
        long h = mix(key);
        NameSegment s = segment(h);
        return s.key(s.home(h));
    }

    /** The block named {@code key}, or -1. */
    int get(long key) {
        long h = mix(key);
        NameSegment s = segment(h);
        return s.value(s.find(key, h)) - 1;
    }

    /**
     * Maps {@code key} to {@code block}; returns the previous block or -1. The caller made room
     * ({@link #ensureRoomFor}). A new name's tag is 0; an existing name keeps its tag.
     */
    int put(long key, int blockId) {
        long h = mix(key);
        NameSegment s = segment(h);
        int i = s.find(key, h);
        int v = s.value(i);
        if (v == 0) {
            addOne(s);
            s.setTagAt(i, 0);
        }
        s.set(i, key, blockId + 1);
        return v - 1;
    }

    private void addOne(NameSegment s) {
        if (s.size + 1 > s.tightLimit()) {
            throw new IllegalStateException("name map full: room was not made");
        }
        s.size++;
        size++;
    }

    /**
     * Claims {@code key}'s record for a value to come (the caller made room): returns the block the
     * name meant before + 1 (0 if none), and {@link #claimed()} is then the record for {@link #setAt}.
     * Until {@link #setAt} fills it, the name means nothing; records stay valid as long as no name is
     * removed and no room is made.
     */
    int claim(long key) {
        long h = mix(key);
        NameSegment s = segment(h);
        int i = s.find(key, h);
        int v = s.value(i);
        if (v == 0) {
            addOne(s);
            s.setTagAt(i, 0);
        }
        s.set(i, key, CLAIMED);
        claimed = s.values + 4L * i;
        return v == CLAIMED ? 0 : v;
    }

    /** The record of the last {@link #claim}. */
    long claimed() {
        return claimed;
    }

    /** Fills {@code record} (from {@link #claimed()}) with {@code blockId}. */
    void setAt(long record, int blockId) {
        Mem.setInt(record, blockId + 1);
    }

    /** Gives back a claimed record: its name means {@code oldBlock} again (-1: the name is gone). */
    void unclaim(long key, int oldBlock) {
        if (oldBlock >= 0) {
            put(key, oldBlock);
        } else {
            remove(key);
        }
    }

    /** The tag of {@code key} (0 if absent, or if the map is not tagged). */
    int tag(long key) {
        long h = mix(key);
        NameSegment s = segment(h);
        int i = s.find(key, h);
        return s.value(i) == 0 ? 0 : s.tagAt(i);
    }

    /** Sets the tag of {@code key}, which must be present, in a tagged map. */
    void setTag(long key, int tag) {
        long h = mix(key);
        NameSegment s = segment(h);
        int i = s.find(key, h);
        if (s.value(i) == 0 || !tagged) {
            throw new IllegalStateException("no tag for an absent name, or in an untagged map");
        }
        s.setTagAt(i, tag);
    }

    /** Calls {@code to} with every (name, block id) pair. */
    void forEach(java.util.function.BiConsumer<Long, Integer> to) {
        for (NameSegment s : segments) {
            for (int i = 0; i < s.capacity; i++) {
                int v = s.value(i);
                if (v != 0) {
                    to.accept(s.key(i), v - 1);
                }
            }
        }
    }

    /** Removes {@code key}; returns its block or -1 if absent. */
    int remove(long key) {
        long h = mix(key);
        NameSegment s = segment(h);
        int i = s.find(key, h);
        int v = s.value(i);
        if (v != 0) {
            shiftBack(s, i);
            s.size--;
            size--;
        }
        return v - 1;
    }

    /** Backward-shift deletion: moves later records of the probe run into the hole at {@code hole}. */
    private static void shiftBack(NameSegment s, int hole) {
        int i = hole;
        while (true) {
            i = s.next(i);
            int v = s.value(i);
            if (v == 0) {
                break;
            }
            long key = s.key(i);
            int h = s.home(mix(key));
            // The record at i may move to the hole if its home is not within (hole, i] cyclically.
            boolean movable = hole <= i ? (h <= hole || h > i) : (h <= hole && h > i);
            if (movable) {
                s.set(hole, key, v);
                s.setTagAt(hole, s.tagAt(i));
                hole = i;
            }
        }
        s.set(hole, 0L, 0);
        s.setTagAt(hole, 0);
    }

    /**
     * Makes room for the names {@code keys[0..n)} a store may add, growing only the segments they
     * fall in; false if the budget does not allow it (the map's names are unchanged either way).
     */
    boolean ensureRoomFor(long[] keys, int n) {
        if (roomWithoutCounting(keys, n)) {
            return true;
        }
        while (true) {
            touched.clear();
            boolean tight = false;
            for (int i = 0; i < n; i++) { // an upper bound first: every key new
                NameSegment s = segment(mix(keys[i]));
                if (s.adds++ == 0) {
                    touched.add(s);
                }
                tight |= s.size + s.adds > s.limit();
            }
            if (tight) { // some segment may be short: count the keys that are really new (twice if given twice)
                for (NameSegment s : touched) {
                    s.adds = 0;
                }
                for (int i = 0; i < n; i++) {
                    long h = mix(keys[i]);
                    NameSegment s = segment(h);
                    if (s.value(s.find(keys[i], h)) == 0) {
                        s.adds++;
                    }
                }
            }
            NameSegment full = null;
            int need = 0;
            for (NameSegment s : touched) {
                if (full == null && s.size + s.adds > s.limit() && !s.tight) {
                    full = s;
                    need = s.adds;
                }
                if (s.tight && s.size + s.adds > s.tightLimit()) {
                    clearTight();
                    return false; // a segment the budget did not let grow is as full as it may get
                }
                s.adds = 0;
            }
            if (full == null) {
                clearTight();
                return true;
            }
            if (!grow(full, need)) {
                full.tight = true; // fill it past 80% instead: the budget is what it is
            }
        }
    }

    /**
     * True if every segment the keys fall in has room for all {@code n} of them: the bound the loop of
     * {@link #ensureRoomFor} starts from, tested without its list of touched segments (a store's usual
     * answer, and the whole cost of a single-block store's check).
     */
    private boolean roomWithoutCounting(long[] keys, int n) {
        for (int i = 0; i < n; i++) {
            NameSegment s = segment(mix(keys[i]));
            if (s.size + n > s.limit()) {
                return false;
            }
        }
        return true;
    }

    private void clearTight() {
        for (NameSegment s : touched) {
            s.adds = 0;
            s.tight = false;
        }
    }

    /** Gives {@code s} room for {@code more} names: grows it by half (or more) while small, else splits it. */
    private boolean grow(NameSegment s, int more) {
        int need = capacityFor((long) s.size + more);
        int want = Math.max(need, s.capacity + s.capacity / 2);
        if (want <= maxSegment || s.depth >= MAX_DEPTH) {
            return resize(s, want);
        }
        if (need <= maxSegment && s.capacity < maxSegment) {
            return resize(s, maxSegment);
        }
        return split(s);
    }

    private boolean resize(NameSegment s, int capacity) {
        NameSegment r = allocate(capacity, s.depth, s.prefix);
        if (r == null) {
            return false;
        }
        moveAll(s, r, null, 0);
        replace(s, r, r);
        return true;
    }

    private boolean split(NameSegment s) {
        int bit = 63 - s.depth;
        int high = 0;
        for (int i = 0; i < s.capacity; i++) {
            if (s.value(i) != 0 && ((mix(s.key(i)) >>> bit) & 1) != 0) {
                high++;
            }
        }
        NameSegment a = allocate(splitCapacity(s.size - high), s.depth + 1, s.prefix << 1);
        if (a == null) {
            return false;
        }
        NameSegment b = allocate(splitCapacity(high), s.depth + 1, (s.prefix << 1) | 1);
        if (b == null) {
            a.block.free();
            return false;
        }
        if (s.depth == depth) {
            NameSegment[] d = new NameSegment[dir.length * 2];
            for (int j = 0; j < dir.length; j++) {
                d[2 * j] = dir[j];
                d[2 * j + 1] = dir[j];
            }
            dir = d;
            depth++;
        }
        moveAll(s, a, b, bit);
        replace(s, a, b);
        return true;
    }

    private static int splitCapacity(int names) {
        return Math.max(MIN_CAPACITY, (int) ((long) names * 100 / SPLIT_LOAD_PERCENT) + 1);
    }

    /** Copies every name of {@code from} into {@code to}, or, with {@code other}, by hash bit {@code bit}. */
    private static void moveAll(NameSegment from, NameSegment to, NameSegment other, int bit) {
        for (int i = 0; i < from.capacity; i++) {
            int v = from.value(i);
            if (v != 0) {
                long key = from.key(i);
                long h = mix(key);
                NameSegment into = other != null && ((h >>> bit) & 1) != 0 ? other : to;
                into.insertNew(key, h, v, from.tagAt(i));
            }
        }
    }

    /** Points the directory's entries of {@code old} at {@code low} (first half) and {@code high}, and frees it. */
    private void replace(NameSegment old, NameSegment low, NameSegment high) {
        int span = 1 << (depth - old.depth);
        int start = (int) (old.prefix << (depth - old.depth));
        for (int j = 0; j < span; j++) {
            dir[start + j] = low == high || j < span / 2 ? low : high;
        }
        segments.remove(old);
        segments.add(low);
        if (high != low) {
            segments.add(high);
        }
        old.block.free();
    }

    /**
     * Copies every block id (one per name, so a block held under several names appears several times)
     * into {@code into}, which must have room for {@link #size()} values; returns the count.
     */
    int blocks(int[] into) {
        int k = 0;
        for (NameSegment s : segments) {
            for (int i = 0; i < s.capacity; i++) {
                int v = s.value(i);
                if (v != 0) {
                    into[k++] = v - 1;
                }
            }
        }
        return k;
    }

    /** Removes every name, keeping the memory. */
    void clear() {
        for (NameSegment s : segments) {
            Mem.zero(s.block.address, s.block.bytes());
            s.size = 0;
        }
        size = 0;
    }

    /** Frees the memory; the map must not be used afterwards. */
    void free() {
        for (NameSegment s : segments) {
            s.block.free();
        }
        segments.clear();
    }
}
