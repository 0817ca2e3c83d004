package io.kvprefix.internal.snapshot;

import io.kvprefix.EventStatus;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Every number of the snapshot file format, version 2: the header, the section table, the section
 * types and the fixed record sizes. Little-endian throughout; every section starts at a multiple of
 * 8. The prose and the tables are docs/SNAPSHOT.md's (section 3.1 the header, 3.2 the section table,
 * 3.3 the sections), and {@code SnapshotFormatTest} checks that the two agree.
 *
 * <p>Thread-safety: constants only.
 */
public final class SnapshotFormat {
    private SnapshotFormat() {}

    /** PNG's trick: a high byte, the name, and the line endings a text-mode copy would mangle. */
    public static final byte[] MAGIC = {(byte) 0x89, 'K', 'V', 'P', '\r', '\n', 0x1A, '\n'};

    public static final int VERSION = 2;
    public static final int HEADER_BYTES = 64;
    public static final int TABLE_ENTRY_BYTES = 32;

    // header fields
    static final int H_VERSION = 8;
    static final int H_HEADER_BYTES = 12;
    static final int H_FILE_BYTES = 16;
    static final int H_BLOCK_SIZE = 24;
    static final int H_MAX_WORKERS = 28;
    static final int H_SEED = 32;
    static final int H_CHAIN_SEED = 40;
    static final int H_JUMP_SIZE = 48;
    static final int H_PRODUCER = 52;
    static final int H_SECTIONS = 56;
    static final int H_CRC = 60;

    // section table entry fields
    static final int T_TYPE = 0;
    static final int T_ITEMS = 4;
    static final int T_OFFSET = 8;
    static final int T_LENGTH = 16;
    static final int T_CRC = 24;
    static final int T_ZERO = 28;

    /** Producer: the off-heap chain index. */
    public static final int PRODUCER_CHAIN = 1;
    /** Producer: the heap index. */
    public static final int PRODUCER_HEAP = 2;

    /** Section types, in the order they appear. */
    public static final int META = 1;

    public static final int COUNTERS = 2;
    public static final int WORKERS = 3;
    public static final int RUNS = 4;
    public static final int NAMES = 5;
    public static final int SIDE = 6;
    public static final int SALTS = 7;
    public static final int SECTIONS = 7;

    /** Where the section bodies start. */
    public static final long FIRST_BODY = HEADER_BYTES + (long) SECTIONS * TABLE_ENTRY_BYTES;

    /** Section names for messages, by type. */
    static String sectionName(int type) {
        return switch (type) {
            case META -> "metadata";
            case COUNTERS -> "counters";
            case WORKERS -> "workers";
            case RUNS -> "runs";
            case NAMES -> "names";
            case SIDE -> "side sets";
            case SALTS -> "salts";
            default -> "section " + type;
        };
    }

    /** Metadata limits: entries, and bytes of one key or value. */
    public static final int MAX_META_ENTRIES = 4096;

    public static final int MAX_META_STRING = 1 << 16;

    /**
     * The caller's metadata, checked (non-null, non-empty keys, at most {@value #MAX_META_ENTRIES}
     * entries of at most {@value #MAX_META_STRING} UTF-8 bytes each) and copied in key order.
     */
    public static Map<String, String> checkMetadata(Map<String, String> metadata) {
        Objects.requireNonNull(metadata, "metadata");
        if (metadata.size() > MAX_META_ENTRIES) {
            throw new IllegalArgumentException(
                    "snapshot metadata: " + metadata.size() + " entries, at most " + MAX_META_ENTRIES);
        }
        Map<String, String> out = new TreeMap<>();
        for (Map.Entry<String, String> e : metadata.entrySet()) {
            String k = Objects.requireNonNull(e.getKey(), "snapshot metadata key");
            String v = Objects.requireNonNull(e.getValue(), "snapshot metadata value of '" + k + "'");
            if (k.isEmpty()
                    || k.getBytes(StandardCharsets.UTF_8).length > MAX_META_STRING
                    || v.getBytes(StandardCharsets.UTF_8).length > MAX_META_STRING) {
                throw new IllegalArgumentException("snapshot metadata: key '" + k
                        + "': keys must be non-empty, keys and values at most " + MAX_META_STRING + " UTF-8 bytes");
            }
            out.put(k, v);
        }
        return Collections.unmodifiableMap(out);
    }

    /** Salts: at most this many (the index remembers the first 256 it sees, for explain). */
    public static final int MAX_SALTS = 256;

    /** Counters: one u64 per status, in {@link EventStatus} order (docs/SNAPSHOT.md lists it). */
    public static final int COUNTER_COUNT = EventStatus.values().length;

    /** A worker record: a worker's GPU view, or its any-tier view (docs/SPEC.md section 3.1). */
    public static final int WORKER_BYTES = 56;

    static final int W_ID = 0;
    static final int W_RANK = 8;
    static final int W_SLOT = 12;
    static final int W_DISTINCT = 16;
    /** Segments of its name map. */
    static final int W_SEGMENTS = 24;

    static final int W_NAMES = 28;
    static final int W_EXTRA = 32;
    static final int W_UNREACHABLE = 36;
    /** 0 for a GPU view; for an any-tier view, its worker's GPU view's slot + 1. */
    static final int W_VIEW_OF = 40;
    /** Its name map's directory depth: the top hash bits that pick a segment. */
    static final int W_DEPTH = 44;
    /** Bytes of its name map in the names section: every segment's header and table. */
    static final int W_NAME_BYTES = 48;

    /** The tiers a name of an any-tier view may carry: bit {@code Medium.ordinal()} for each (GPU 1, CPU 2, DISK 4). */
    public static final int TIERS = (1 << io.kvprefix.Medium.values().length) - 1;

    /**
     * A run record: a 16-byte prefix (u32 run id, the run's child list: u32 first child + 1, u32 next
     * sibling + 1, and u32 attach bound), the 56-byte run header, the local hashes, the chunk entries.
     */
    public static final int RUN_PREFIX_BYTES = 16;

    public static final int P_ID = 0;
    public static final int P_FIRST_CHILD = 4;
    public static final int P_NEXT_SIBLING = 8;
    public static final int P_ATTACH_BOUND = 12;

    public static final int RUN_HEADER_BYTES = 56;

    // run header fields (the same offsets as the off-heap index's records; a test compares them)
    public static final int R_LENGTH = 0;
    public static final int R_ENTRIES = 4;
    public static final int R_CHUNKS = 8;
    public static final int R_ENTRY0 = 16;
    public static final int R_START = 32;
    public static final int R_PARENT = 36;
    public static final int R_LOCK = 40;
    public static final int R_CAPACITY = 44;
    public static final int R_CHILDREN = 48;
    public static final int R_HOLDERS = 52;
    public static final int INLINE_ENTRIES = 2;

    /** Run capacities a record may have, and the most blocks in a run. */
    public static final int[] RUN_CAPACITIES = {4, 8, 16, 32, 64};

    public static final int MAX_RUN = 64;
    /** Bits of a block id that hold the offset in its run: block id = run id << 6 | offset. */
    public static final int OFFSET_BITS = 6;

    public static final int MAX_RUN_ID = Integer.MAX_VALUE >>> OFFSET_BITS;

    /** Name-map segments: smallest and largest capacity (records), and the deepest directory. */
    public static final int MIN_NAME_CAPACITY = 16;

    public static final int MAX_NAME_CAPACITY = 1 << 30;
    public static final int MAX_NAME_DEPTH = 24;

    /**
     * A segment in the names section: a 16-byte header (u32 capacity, u32 names, u32 depth, u32
     * prefix: the top {@code depth} bits of its keys' mixed hashes), then its table as it lies in
     * memory (keys, values, an any-tier view's tiers) and zero padding to a multiple of 8.
     */
    public static final int SEGMENT_HEADER_BYTES = 16;

    public static final int S_CAPACITY = 0;
    public static final int S_NAMES = 4;
    public static final int S_DEPTH = 8;
    public static final int S_PREFIX = 12;

    /** Bytes of a segment's table of {@code capacity} records: keys, values, and for an any-tier view ({@code tagged}) one byte of tiers each. */
    public static long segmentTableBytes(int capacity, boolean tagged) {
        return (tagged ? 13L : 12L) * capacity;
    }

    /** Bytes of a segment in the file: its header, its table and the padding to a multiple of 8. */
    public static long segmentBytes(int capacity, boolean tagged) {
        long b = segmentTableBytes(capacity, tagged);
        return SEGMENT_HEADER_BYTES + b + pad8(b);
    }

    /** The most names a segment of {@code capacity} records may hold: 90% (a segment the budget did not let grow fills that far). */
    public static long maxNames(long capacity) {
        return capacity * 90 / 100;
    }

    /** The mixed hash of engine hash {@code key}, from which its segment and home record follow. */
    public static long nameMix(long key) {
        return key * 0x9E3779B97F4A7C15L;
    }

    /** The directory entry of mixed hash {@code h} in a directory of {@code depth} bits: its top {@code depth} bits. */
    public static int nameSegment(long h, int depth) {
        return (int) ((h >>> 1) >>> (63 - depth));
    }

    /**
     * The home record of mixed hash {@code h} in a segment of {@code capacity} records (linear
     * probing from there, wrapping at the end): its low 32 bits, after {@code h ^ (h >>> 29)},
     * scaled to the capacity. Part of the format: segments are stored as they lie in memory.
     */
    public static int nameHome(long h, int capacity) {
        return (int) ((((h ^ (h >>> 29)) & 0xFFFFFFFFL) * capacity) >>> 32);
    }

    // holder entries (u64): bits 0..31 slot + 1, 32..39 cutoff, 40..47 unreachable, 48..55 pins
    public static int entrySlot(long e) {
        return (int) e - 1;
    }

    public static int entryCutoff(long e) {
        return (int) (e >>> 32) & 0xFF;
    }

    public static int entryUnreachable(long e) {
        return (int) (e >>> 40) & 0xFF;
    }

    /** Bits 48..63: pins (must be 0 in a file) and the unused top byte. */
    public static int entryHigh(long e) {
        return (int) (e >>> 48);
    }

    public static long entry(int slot, int cutoff, int unreachable) {
        return (slot + 1L) | (long) cutoff << 32 | (long) unreachable << 40;
    }

    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Bytes padding {@code n} up to a multiple of 8. */
    public static long pad8(long n) {
        return -n & 7;
    }
}
