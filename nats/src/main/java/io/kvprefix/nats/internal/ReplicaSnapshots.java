package io.kvprefix.nats.internal;

import io.kvprefix.PrefixIndex;
import io.kvprefix.nats.IndexImages;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * A replica's snapshots (docs/FLEET.md section 5): {@link #publish} cuts the replica between two
 * messages, saves the index with the stream sequence it covers and its engines' state, and uploads
 * the file to the stream's {@link SnapshotBucket}; {@link #bootstrap} finds the newest snapshot,
 * restores the index from it and tells the replica where to go on. The index operations themselves
 * are {@link IndexImages}.
 *
 * <p>Thread-safety: {@link #publish} may run on a timer thread while the replica applies messages
 * (it takes the replica's lock for the save only); not concurrently with itself.
 */
public final class ReplicaSnapshots {
    private static final System.Logger LOG = System.getLogger("io.kvprefix.nats");

    /** What a bootstrap restored: the index, and where in the stream it ends. */
    public record Restored(PrefixIndex index, ReplicaImage.State state, long bytes, long millis) {}

    private final SnapshotBucket bucket;
    private final IndexImages images;
    private final String stream;
    private final Path dir;
    private long lastPublished = -1;

    public ReplicaSnapshots(SnapshotBucket bucket, IndexImages images, String stream, Path dir) {
        this.bucket = bucket;
        this.images = images;
        this.stream = stream;
        this.dir = dir;
    }

    /**
     * Saves and uploads a snapshot of {@code index} as {@code core} stands now, unless nothing was
     * applied since the last one; returns the stream sequence it covers, or -1 if none was taken.
     */
    public long publish(ReplicaCore core, PrefixIndex index) throws IOException {
        Path file = Files.createTempFile(dir, "replica-", ".snap");
        try {
            long seq = core.cut((applied, feeds) -> {
                if (applied == lastPublished || applied == 0) {
                    return -1L;
                }
                images.save(index, file, ReplicaImage.metadata(stream, applied, feeds));
                return applied;
            });
            if (seq >= 0) {
                bucket.put(file, seq);
                lastPublished = seq;
            }
            return seq;
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /**
     * Restores the index from the newest snapshot in the bucket, or empty if there is none or it
     * cannot be used (the reason is logged and the replica starts from the stream).
     */
    public Optional<Restored> bootstrap() throws IOException {
        Optional<SnapshotBucket.Entry> newest = bucket.newest();
        if (newest.isEmpty()) {
            return Optional.empty();
        }
        long t0 = System.nanoTime();
        Path file = Files.createTempFile(dir, "bootstrap-", ".snap");
        try {
            bucket.download(newest.get(), file);
            PrefixIndex index = images.restore(file);
            try {
                Map<String, String> m = images.metadata(index);
                ReplicaImage.State s = ReplicaImage.read(m, stream);
                if (s.streamSeq() != newest.get().streamSeq()) {
                    throw new IllegalArgumentException(
                            "the snapshot named " + newest.get().name() + " covers stream sequence " + s.streamSeq());
                }
                lastPublished = s.streamSeq();
                return Optional.of(new Restored(index, s, newest.get().bytes(), (System.nanoTime() - t0) / 1_000_000));
            } catch (RuntimeException e) {
                index.close();
                throw e;
            }
        } catch (RuntimeException e) {
            LOG.log(
                    Level.WARNING,
                    "kvprefix replica: snapshot " + newest.get().name() + " cannot be used (" + e.getMessage()
                            + "); starting from the stream");
            return Optional.empty();
        } finally {
            Files.deleteIfExists(file);
        }
    }
}
