package io.kvprefix.internal.snapshot;

import static io.kvprefix.internal.snapshot.SnapshotFormat.HEADER_BYTES;
import static io.kvprefix.internal.snapshot.SnapshotFormat.SECTIONS;
import static io.kvprefix.internal.snapshot.SnapshotFormat.TABLE_ENTRY_BYTES;

import io.kvprefix.IndexConfig;
import io.kvprefix.MatchExplanation;
import io.kvprefix.SnapshotException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * Writes one snapshot file, section by section, the way that keeps the previous one safe: into
 * {@code FILE.tmp} next to it (locked, so two writers cannot interleave), each section streamed
 * through a staging buffer with its CRC32C computed on the way, the header and section table written
 * last, the file forced to disk, renamed over {@code FILE} atomically, and the directory forced. A
 * crash at any moment leaves {@code FILE} as it was (or, after the rename, the new one whole); a
 * leftover {@code FILE.tmp} is overwritten by the next snapshot.
 *
 * <p>Thread-safety: not thread-safe; one writer per file, used by one thread.
 */
public final class SnapshotWriter implements AutoCloseable {
    private static final int STAGING = 1 << 20;
    /** Segments at least this large are written from where they lie, not through the staging buffer. */
    private static final long DIRECT = 256 << 10;

    private final Path target;
    private final Path temp;
    private final FileChannel channel;
    private final FileLock lock;
    private final ByteBuffer staging = ByteBuffer.allocateDirect(STAGING).order(ByteOrder.LITTLE_ENDIAN);
    private final MemorySegment stagingSegment = MemorySegment.ofBuffer(staging);
    private final ByteBuffer header =
            ByteBuffer.allocate(HEADER_BYTES + SECTIONS * TABLE_ENTRY_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    private final CRC32C crc = new CRC32C();
    private long position = SnapshotFormat.FIRST_BODY;
    private long sectionStart = -1;
    private int section;
    private boolean committed;

    private SnapshotWriter(Path target, Path temp, FileChannel channel, FileLock lock) {
        this.target = target;
        this.temp = temp;
        this.channel = channel;
        this.lock = lock;
    }

    /** Opens {@code target}'s temporary file for a snapshot of an index configured as {@code config}. */
    public static SnapshotWriter create(Path target, IndexConfig config, int producer) {
        checkLittleEndian(target);
        if (Files.isDirectory(target)) {
            throw new SnapshotException(target, "is a directory");
        }
        Path temp = target.resolveSibling(target.getFileName() + ".tmp");
        FileChannel ch = null;
        try {
            ch = FileChannel.open(temp, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.READ);
            FileLock lock;
            try {
                lock = ch.tryLock();
            } catch (OverlappingFileLockException e) {
                lock = null;
            }
            if (lock == null) {
                throw new SnapshotException(
                        target, "another snapshot to this file is in progress (" + temp + " is locked)");
            }
            ch.truncate(0);
            SnapshotWriter w = new SnapshotWriter(target, temp, ch, lock);
            w.header(config, producer);
            return w;
        } catch (IOException e) {
            closeQuietly(ch);
            throw new SnapshotException(target, "cannot write " + temp + ": " + reason(e), e);
        } catch (RuntimeException e) {
            closeQuietly(ch);
            throw e;
        }
    }

    static void checkLittleEndian(Path file) {
        if (ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
            throw new SnapshotException(file, "snapshots are little-endian and this platform is big-endian");
        }
    }

    private void header(IndexConfig config, int producer) {
        header.put(SnapshotFormat.MAGIC);
        header.putInt(SnapshotFormat.H_VERSION, SnapshotFormat.VERSION);
        header.putInt(SnapshotFormat.H_HEADER_BYTES, HEADER_BYTES);
        header.putInt(SnapshotFormat.H_BLOCK_SIZE, config.blockSize());
        header.putInt(SnapshotFormat.H_MAX_WORKERS, config.maxWorkers());
        header.putLong(SnapshotFormat.H_SEED, config.seed());
        header.putLong(SnapshotFormat.H_CHAIN_SEED, config.chainSeed());
        header.putInt(SnapshotFormat.H_JUMP_SIZE, config.jumpSize());
        header.putInt(SnapshotFormat.H_PRODUCER, producer);
        header.putInt(SnapshotFormat.H_SECTIONS, SECTIONS);
    }

    // ------------------------------------------------------------------ sections

    /** Starts the section of {@code type}; sections come in type order, each once. */
    public void begin(int type) {
        if (sectionStart >= 0 || type != section + 1) {
            throw new IllegalStateException("section " + type + " out of order");
        }
        section = type;
        sectionStart = position + staging.position();
        crc.reset();
    }

    /** Ends the current section, padding it to a multiple of 8, and records it with {@code items}. */
    public void end(int items) {
        long length = position + staging.position() - sectionStart;
        for (long p = SnapshotFormat.pad8(length); p > 0; p--) {
            room(1).put((byte) 0);
        }
        flush();
        length = position - sectionStart;
        int at = HEADER_BYTES + (section - 1) * TABLE_ENTRY_BYTES;
        header.putInt(at + SnapshotFormat.T_TYPE, section);
        header.putInt(at + SnapshotFormat.T_ITEMS, items);
        header.putLong(at + SnapshotFormat.T_OFFSET, sectionStart);
        header.putLong(at + SnapshotFormat.T_LENGTH, length);
        header.putInt(at + SnapshotFormat.T_CRC, (int) crc.getValue());
        sectionStart = -1;
    }

    public void putInt(int v) {
        room(4).putInt(v);
    }

    public void putLong(long v) {
        room(8).putLong(v);
    }

    public void putBytes(byte[] b) {
        if (b.length > STAGING) {
            putSegment(MemorySegment.ofArray(b));
        } else {
            room(b.length).put(b);
        }
    }

    /**
     * {@code bytes} bytes of the staging buffer, to be filled by the caller before the next call
     * (native byte order: little-endian, checked at {@link #create}).
     */
    public MemorySegment reserve(int bytes) {
        if (bytes > STAGING) {
            throw new IllegalArgumentException("cannot reserve " + bytes + " bytes");
        }
        ByteBuffer b = room(bytes);
        int at = b.position();
        b.position(at + bytes);
        return stagingSegment.asSlice(at, bytes);
    }

    /** Writes {@code src} whole: large segments straight from where they lie, small ones through the buffer. */
    public void putSegment(MemorySegment src) {
        long n = src.byteSize();
        if (n < DIRECT) {
            MemorySegment.copy(src, 0, reserve((int) n), 0, n);
            return;
        }
        flush();
        for (long off = 0; off < n; off += 1 << 30) {
            writeOut(src.asSlice(off, Math.min(1 << 30, n - off)).asByteBuffer());
        }
    }

    /** Writes a map of strings: u32 length and UTF-8 bytes for each key, then for its value. */
    public void putStrings(Map<String, String> map) {
        for (Map.Entry<String, String> e : map.entrySet()) {
            byte[] k = e.getKey().getBytes(StandardCharsets.UTF_8);
            byte[] v = e.getValue().getBytes(StandardCharsets.UTF_8);
            putInt(k.length);
            putBytes(k);
            putInt(v.length);
            putBytes(v);
        }
    }

    /**
     * Writes salts (LoRA name, cache namespace), sorted: for each, u32 length + 1 and UTF-8 bytes of
     * its LoRA name, then of its namespace (length + 1 = 0: none).
     */
    public void putSalts(List<MatchExplanation.Salt> salts) {
        List<MatchExplanation.Salt> sorted = new ArrayList<>(salts);
        sorted.sort(SnapshotWriter::compareSalts);
        for (MatchExplanation.Salt salt : sorted) {
            for (String x : new String[] {salt.loraName(), salt.cacheNamespace()}) {
                byte[] b = x == null ? new byte[0] : x.getBytes(StandardCharsets.UTF_8);
                putInt(x == null ? 0 : b.length + 1);
                putBytes(b);
            }
        }
    }

    private static int compareSalts(MatchExplanation.Salt a, MatchExplanation.Salt b) {
        int c = compareNullsFirst(a.loraName(), b.loraName());
        return c != 0 ? c : compareNullsFirst(a.cacheNamespace(), b.cacheNamespace());
    }

    private static int compareNullsFirst(String a, String b) {
        return a == null ? (b == null ? 0 : -1) : b == null ? 1 : a.compareTo(b);
    }

    private ByteBuffer room(int bytes) {
        if (staging.remaining() < bytes) {
            flush();
        }
        return staging;
    }

    private void flush() {
        staging.flip();
        writeOut(staging);
        staging.clear();
    }

    private void writeOut(ByteBuffer b) {
        crc.update(b.duplicate());
        try {
            while (b.hasRemaining()) {
                position += channel.write(b, position);
            }
        } catch (IOException e) {
            throw new SnapshotException(target, "cannot write " + temp + ": " + reason(e), e);
        }
    }

    // ------------------------------------------------------------------ commit

    /** Writes the header, forces the file to disk, renames it over the target and forces the directory. */
    public void commit() {
        if (section != SECTIONS || sectionStart >= 0) {
            throw new IllegalStateException("snapshot incomplete: " + section + " sections");
        }
        header.putLong(SnapshotFormat.H_FILE_BYTES, position);
        CRC32C h = new CRC32C();
        h.update(header.array(), 0, SnapshotFormat.H_CRC);
        h.update(header.array(), HEADER_BYTES, SECTIONS * TABLE_ENTRY_BYTES);
        header.putInt(SnapshotFormat.H_CRC, (int) h.getValue());
        try {
            ByteBuffer b = ByteBuffer.wrap(header.array());
            for (long at = 0; b.hasRemaining(); ) {
                at += channel.write(b, at);
            }
            channel.force(true);
            Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            committed = true;
            forceDirectory(target.toAbsolutePath().getParent());
        } catch (IOException e) {
            throw new SnapshotException(target, "cannot write: " + reason(e), e);
        }
    }

    /** The bytes written so far (the file's size once committed). */
    public long bytes() {
        return position + staging.position();
    }

    private static void forceDirectory(Path dir) throws IOException {
        if (dir == null) {
            return;
        }
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        }
    }

    /** Abandons an uncommitted snapshot (the temporary file is deleted); closes the file. */
    @Override
    public void close() {
        if (!committed) { // deleted while still locked, so it cannot be another writer's file by then
            try {
                Files.deleteIfExists(temp);
            } catch (IOException ignored) {
                // a leftover temporary file is overwritten by the next snapshot
            }
        }
        try {
            if (lock.isValid()) {
                lock.release();
            }
        } catch (IOException ignored) {
            // the channel's close releases it too
        }
        closeQuietly(channel);
    }

    private static void closeQuietly(FileChannel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // nothing left to do
            }
        }
    }

    static String reason(IOException e) {
        if (e instanceof NoSuchFileException) {
            return "no such file or directory";
        }
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}
