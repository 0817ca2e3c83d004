package io.kvprefix.internal.snapshot;

import static io.kvprefix.internal.snapshot.SnapshotFormat.FIRST_BODY;
import static io.kvprefix.internal.snapshot.SnapshotFormat.HEADER_BYTES;
import static io.kvprefix.internal.snapshot.SnapshotFormat.INT;
import static io.kvprefix.internal.snapshot.SnapshotFormat.LONG;
import static io.kvprefix.internal.snapshot.SnapshotFormat.SECTIONS;
import static io.kvprefix.internal.snapshot.SnapshotFormat.TABLE_ENTRY_BYTES;

import io.kvprefix.IndexConfig;
import io.kvprefix.MatchExplanation;
import io.kvprefix.SnapshotException;
import io.kvprefix.internal.ffi.Libc;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.CRC32C;

/**
 * Opens a snapshot file for a restore: maps it ({@link FileChannel#map} into an {@link Arena}) and
 * checks everything that does not need the index's structure: the magic, the version, the length,
 * the header's CRC32C, the configuration, the section table, and every section's CRC32C. Every
 * failure is a {@link SnapshotException} naming the file and the reason; nothing is kept open then.
 * Opened {@linkplain #openPrivate private}, the mapping is copy-on-write (a restore in place uses its
 * pages as the index's memory) and {@link #keepMapping} hands it to the index, which unmaps it on close.
 *
 * <p>Thread-safety: not thread-safe; one restore uses it, then closes it (which unmaps the file).
 */
public final class SnapshotReader implements AutoCloseable {
    private final Path file;
    private final Arena arena;
    private final MemorySegment map;
    private boolean kept;
    private boolean privateMapping;
    private final long[] offset = new long[SECTIONS + 1];
    private final long[] length = new long[SECTIONS + 1];
    private final int[] items = new int[SECTIONS + 1];

    private SnapshotReader(Path file, Arena arena, MemorySegment map) {
        this.file = file;
        this.arena = arena;
        this.map = map;
    }

    /** Opens and checks {@code file} for an index configured as {@code config}, mapped read-only. */
    public static SnapshotReader open(Path file, IndexConfig config) {
        return open(file, config, FileChannel.MapMode.READ_ONLY);
    }

    /**
     * Like {@link #open}, mapped {@code MAP_PRIVATE} (copy-on-write: a write to a page gives this
     * process its own copy, and nothing reaches the file), for a restore in place (docs/SNAPSHOT.md
     * section 7).
     */
    public static SnapshotReader openPrivate(Path file, IndexConfig config) {
        return open(file, config, FileChannel.MapMode.PRIVATE);
    }

    private static SnapshotReader open(Path file, IndexConfig config, FileChannel.MapMode mode) {
        SnapshotWriter.checkLittleEndian(file);
        if (Files.isDirectory(file)) {
            throw new SnapshotException(file, "is a directory");
        }
        if (Files.exists(file) && !Files.isRegularFile(file)) {
            throw new SnapshotException(file, "not a regular file");
        }
        Arena arena = Arena.ofShared();
        try {
            MemorySegment map;
            boolean writable = false;
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
                long size = ch.size();
                if (size == 0) {
                    map = MemorySegment.NULL;
                } else if (mode == FileChannel.MapMode.PRIVATE && Libc.canMapPrivate()) {
                    map = Libc.mapPrivate(file, size, arena);
                    writable = true;
                } else {
                    map = ch.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
                }
            } catch (IOException e) {
                throw new SnapshotException(file, "cannot read: " + SnapshotWriter.reason(e), e);
            }
            SnapshotReader r = new SnapshotReader(file, arena, map);
            r.privateMapping = writable;
            r.check(config);
            return r;
        } catch (InternalError e) { // a fault on the mapping: the file shrank under us
            arena.close();
            throw new SnapshotException(file, "the file changed while it was read", e);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /** An error about this file. */
    public SnapshotException bad(String reason) {
        return new SnapshotException(file, reason);
    }

    public Path file() {
        return file;
    }

    /** True if {@link #map} is a copy-on-write mapping the index may use in place (not where it cannot be had). */
    public boolean isPrivate() {
        return privateMapping;
    }

    /** The whole file, mapped. */
    public MemorySegment map() {
        return map;
    }

    public long offset(int type) {
        return offset[type];
    }

    public long length(int type) {
        return length[type];
    }

    public int items(int type) {
        return items[type];
    }

    public int producer() {
        return map.get(INT, SnapshotFormat.H_PRODUCER);
    }

    public int getInt(long at) {
        return map.get(INT, at);
    }

    public long getLong(long at) {
        return map.get(LONG, at);
    }

    /** Reads {@code into.length} longs from {@code at} in one bulk copy. */
    public void getLongs(long at, long[] into) {
        MemorySegment.copy(map, LONG, at, into, 0, into.length);
    }

    public byte getByte(long at) {
        return map.get(ValueLayout.JAVA_BYTE, at);
    }

    /** Reads {@code n} bytes from {@code at} into {@code into} in one bulk copy. */
    public void getBytes(long at, byte[] into, int n) {
        MemorySegment.copy(map, ValueLayout.JAVA_BYTE, at, into, 0, n);
    }

    /** Reads {@code n} ints from {@code at} into {@code into} in one bulk copy. */
    public void getInts(long at, int[] into, int n) {
        MemorySegment.copy(map, INT, at, into, 0, n);
    }

    private void check(IndexConfig config) {
        long size = map.byteSize();
        byte[] magic = SnapshotFormat.MAGIC;
        for (int i = 0; i < magic.length && i < size; i++) {
            if (map.get(ValueLayout.JAVA_BYTE, i) != magic[i]) {
                throw bad("not a kvprefix snapshot (bad magic)");
            }
        }
        if (size < FIRST_BODY) {
            throw bad("truncated (" + size + " bytes; the header and section table alone take " + FIRST_BODY + ")");
        }
        int version = getInt(SnapshotFormat.H_VERSION);
        if (version != SnapshotFormat.VERSION) {
            throw bad("format version " + Integer.toUnsignedString(version) + "; this kvprefix reads version "
                    + SnapshotFormat.VERSION);
        }
        if (getInt(SnapshotFormat.H_HEADER_BYTES) != HEADER_BYTES || getInt(SnapshotFormat.H_SECTIONS) != SECTIONS) {
            throw bad("damaged header (header size or section count)");
        }
        CRC32C crc = new CRC32C();
        crc.update(map.asSlice(0, SnapshotFormat.H_CRC).asByteBuffer());
        crc.update(
                map.asSlice(HEADER_BYTES, (long) SECTIONS * TABLE_ENTRY_BYTES).asByteBuffer());
        if ((int) crc.getValue() != getInt(SnapshotFormat.H_CRC)) {
            throw bad("damaged header (CRC32C mismatch)");
        }
        long declared = getLong(SnapshotFormat.H_FILE_BYTES);
        if (size < declared) {
            throw bad("truncated (" + size + " of " + declared + " bytes)");
        }
        if (size > declared) {
            throw bad(size + " bytes, but the header says " + declared + " (bytes appended)");
        }
        checkConfig(config);
        checkTable();
        checkCrcs();
    }

    private void checkConfig(IndexConfig c) {
        mismatch("block size", Integer.toUnsignedString(getInt(SnapshotFormat.H_BLOCK_SIZE)), "" + c.blockSize());
        mismatch("max workers", Integer.toUnsignedString(getInt(SnapshotFormat.H_MAX_WORKERS)), "" + c.maxWorkers());
        mismatch("seed", Long.toUnsignedString(getLong(SnapshotFormat.H_SEED)), Long.toUnsignedString(c.seed()));
        mismatch(
                "chain seed",
                Long.toUnsignedString(getLong(SnapshotFormat.H_CHAIN_SEED)),
                Long.toUnsignedString(c.chainSeed()));
    }

    private void mismatch(String what, String inFile, String configured) {
        if (!inFile.equals(configured)) {
            throw bad("written with " + what + " " + inFile + ", but the index is configured with " + configured);
        }
    }

    private void checkTable() {
        long expected = FIRST_BODY;
        for (int t = 1; t <= SECTIONS; t++) {
            long at = HEADER_BYTES + (long) (t - 1) * TABLE_ENTRY_BYTES;
            if (getInt(at + SnapshotFormat.T_TYPE) != t || getInt(at + SnapshotFormat.T_ZERO) != 0) {
                throw bad("damaged section table (entry " + t + ")");
            }
            long off = getLong(at + SnapshotFormat.T_OFFSET);
            long len = getLong(at + SnapshotFormat.T_LENGTH);
            int n = getInt(at + SnapshotFormat.T_ITEMS);
            if (off != expected || len < 0 || (len & 7) != 0 || len > map.byteSize() - off || n < 0) {
                throw bad("damaged section table (" + SnapshotFormat.sectionName(t) + ": offset " + off + ", length "
                        + len + ")");
            }
            offset[t] = off;
            length[t] = len;
            items[t] = n;
            expected = off + len;
        }
        if (expected != map.byteSize()) {
            throw bad("damaged section table (the sections end at " + expected + " of " + map.byteSize() + " bytes)");
        }
    }

    /**
     * Every section's CRC32C, cut into pieces of {@link #CRC_PIECE} bytes computed on every core and
     * joined per section by {@link #crcJoin}: the one pass over every byte a restore must make, shared.
     */
    private void checkCrcs() {
        int n = 0;
        for (int t = 1; t <= SECTIONS; t++) {
            n += (int) ((length[t] + CRC_PIECE - 1) / CRC_PIECE);
        }
        long[] at = new long[n];
        long[] len = new long[n];
        for (int t = 1, i = 0; t <= SECTIONS; t++) {
            for (long off = 0; off < length[t]; off += CRC_PIECE, i++) {
                at[i] = offset[t] + off;
                len[i] = Math.min(CRC_PIECE, length[t] - off);
            }
        }
        int[] crcs = new int[n];
        java.util.stream.IntStream.range(0, n).parallel().forEach(i -> {
            CRC32C crc = new CRC32C();
            crc.update(map.asSlice(at[i], len[i]).asByteBuffer());
            crcs[i] = (int) crc.getValue();
        });
        for (int t = 1, i = 0; t <= SECTIONS; t++) {
            int crc = 0; // of no bytes
            for (long off = 0; off < length[t]; off += CRC_PIECE, i++) {
                crc = crcJoin(crc, crcs[i], Math.min(CRC_PIECE, length[t] - off));
            }
            int want = getInt(HEADER_BYTES + (long) (t - 1) * TABLE_ENTRY_BYTES + SnapshotFormat.T_CRC);
            if (crc != want) {
                throw bad("damaged " + SnapshotFormat.sectionName(t) + " section (CRC32C mismatch)");
            }
        }
    }

    /** Bytes of one piece of {@link #checkCrcs} (a section's last piece is shorter). */
    static final long CRC_PIECE = 4L << 20;

    /**
     * The CRC32C of bytes A then B, from that of A, that of B and B's length: A's CRC carried over as
     * many zero bytes (a linear map over GF(2), raised to the length by squaring), xor B's. The method
     * is zlib's {@code crc32_combine} (Mark Adler); the polynomial is Castagnoli's, reflected.
     */
    static int crcJoin(int crcA, int crcB, long lengthB) {
        int[] op = new int[32]; // one zero bit: bit 0 drops out as the polynomial, bit i moves to i - 1
        op[0] = 0x82F63B78;
        for (int i = 1; i < 32; i++) {
            op[i] = 1 << (i - 1);
        }
        int[] sq = new int[32];
        for (int i = 0; i < 3; i++) { // to one zero byte
            square(op, sq);
            int[] t = op;
            op = sq;
            sq = t;
        }
        int v = crcA;
        for (long n = lengthB; n != 0; n >>>= 1) {
            if ((n & 1) != 0) {
                v = times(op, v);
            }
            if (n > 1) {
                square(op, sq);
                int[] t = op;
                op = sq;
                sq = t;
            }
        }
        return v ^ crcB;
    }

    private static int times(int[] m, int v) {
        int s = 0;
        for (int i = 0; v != 0; i++, v >>>= 1) {
            s ^= m[i] & -(v & 1);
        }
        return s;
    }

    private static void square(int[] m, int[] into) {
        for (int i = 0; i < 32; i++) {
            into[i] = times(m, m[i]);
        }
    }

    // ------------------------------------------------------------------ the small sections

    /** The metadata section: the caller's strings. */
    public Map<String, String> metadata() {
        int n = items[SnapshotFormat.META];
        if (n > SnapshotFormat.MAX_META_ENTRIES) {
            throw bad("damaged metadata section (" + n + " entries)");
        }
        long at = offset[SnapshotFormat.META];
        long end = at + length[SnapshotFormat.META];
        Map<String, String> out = new LinkedHashMap<>();
        long[] pos = {at};
        for (int i = 0; i < n; i++) {
            String k = string(pos, end);
            String v = string(pos, end);
            if (out.put(k, v) != null) {
                throw bad("damaged metadata section (key '" + k + "' twice)");
            }
        }
        requireZeroPadding(pos[0], end, SnapshotFormat.META);
        return out;
    }

    private String string(long[] pos, long end) {
        if (end - pos[0] < 4) {
            throw bad("damaged metadata section (truncated)");
        }
        int len = getInt(pos[0]);
        if (len < 0 || len > SnapshotFormat.MAX_META_STRING || len > end - pos[0] - 4) {
            throw bad("damaged metadata section (a string of " + Integer.toUnsignedString(len) + " bytes)");
        }
        String out = utf8(pos[0] + 4, len, SnapshotFormat.META);
        pos[0] += 4 + len;
        return out;
    }

    /** Bytes from {@code from} to the section's end must be fewer than 8, and zero. */
    public void requireZeroPadding(long from, long end, int type) {
        if (end - from >= 8 || from > end) {
            throw bad(
                    "damaged " + SnapshotFormat.sectionName(type) + " section (" + (end - from) + " bytes left over)");
        }
        for (long p = from; p < end; p++) {
            if (map.get(ValueLayout.JAVA_BYTE, p) != 0) {
                throw bad("damaged " + SnapshotFormat.sectionName(type) + " section (padding)");
            }
        }
    }

    /** The salts section: the salts of the token-form events the index had seen. */
    public List<MatchExplanation.Salt> salts() {
        int n = items[SnapshotFormat.SALTS];
        if (n > SnapshotFormat.MAX_SALTS) {
            throw bad("damaged salts section (" + n + " salts)");
        }
        long end = offset[SnapshotFormat.SALTS] + length[SnapshotFormat.SALTS];
        long[] pos = {offset[SnapshotFormat.SALTS]};
        Set<MatchExplanation.Salt> out = new LinkedHashSet<>();
        for (int i = 0; i < n; i++) {
            String lora = optionalString(pos, end);
            String namespace = optionalString(pos, end);
            if (!out.add(new MatchExplanation.Salt(lora, namespace))) {
                throw bad("damaged salts section (a salt twice)");
            }
        }
        requireZeroPadding(pos[0], end, SnapshotFormat.SALTS);
        return List.copyOf(out);
    }

    /** A string of the salts section: u32 length + 1 (0: none), then the UTF-8 bytes. */
    private String optionalString(long[] pos, long end) {
        if (end - pos[0] < 4) {
            throw bad("damaged salts section (truncated)");
        }
        long len = Integer.toUnsignedLong(getInt(pos[0])) - 1;
        if (len < 0) {
            pos[0] += 4;
            return null;
        }
        if (len == 0 || len > SnapshotFormat.MAX_META_STRING || len > end - pos[0] - 4) {
            throw bad("damaged salts section (a name of " + len + " bytes)");
        }
        String out = utf8(pos[0] + 4, (int) len, SnapshotFormat.SALTS);
        pos[0] += 4 + len;
        return out;
    }

    private String utf8(long at, int len, int section) {
        byte[] b = map.asSlice(at, len).toArray(ValueLayout.JAVA_BYTE);
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(b))
                    .toString();
        } catch (CharacterCodingException e) {
            throw bad("damaged " + SnapshotFormat.sectionName(section) + " section (not UTF-8)");
        }
    }

    /** The counters section: events applied per status, in {@code EventStatus} order. */
    public long[] counters() {
        int n = items[SnapshotFormat.COUNTERS];
        if (n != SnapshotFormat.COUNTER_COUNT || length[SnapshotFormat.COUNTERS] != 8L * n) {
            throw bad("damaged counters section (" + n + " counters, expected " + SnapshotFormat.COUNTER_COUNT + ")");
        }
        long[] out = new long[n];
        for (int i = 0; i < n; i++) {
            out[i] = getLong(offset[SnapshotFormat.COUNTERS] + 8L * i);
            if (out[i] < 0) {
                throw bad("damaged counters section (a negative count)");
            }
        }
        return out;
    }

    /**
     * The mapping's arena, which {@link #close} then leaves open: the caller (a restore in place)
     * owns the mapping from here and closes the arena when nothing reads its pages any more.
     */
    public Arena keepMapping() {
        kept = true;
        return arena;
    }

    /** Unmaps the file, unless {@link #keepMapping} handed the mapping on. */
    @Override
    public void close() {
        if (!kept) {
            arena.close();
        }
    }

    @Override
    public String toString() {
        return "SnapshotReader[" + file + ", sections " + Arrays.toString(length) + "]";
    }
}
