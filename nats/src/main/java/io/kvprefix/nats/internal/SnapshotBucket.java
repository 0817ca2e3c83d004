package io.kvprefix.nats.internal;

import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.ObjectStore;
import io.nats.client.api.ObjectInfo;
import io.nats.client.api.ObjectMeta;
import io.nats.client.api.ObjectStoreConfiguration;
import io.nats.client.api.StorageType;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.NoSuchAlgorithmException;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The fleet's snapshots in a JetStream object store bucket ({@code STREAM_SNAPSHOTS}): each object is
 * one replica's index snapshot file, named {@code index-SEQ} with {@code SEQ} the stream sequence the
 * snapshot covers (every message up to it applied, none after), zero-padded to 20 digits so names
 * sort as numbers. The object store writes an object's chunks first and its metadata last, and
 * checks the SHA-256 digest on reading, so a reader never sees half an upload. {@link #put} keeps the
 * newest {@code keep} snapshots and deletes older ones; {@link #newest} is what a starting replica
 * loads.
 *
 * <p>Thread-safety: the object store client may be used from several threads; {@link #put} is not
 * meant to run concurrently with itself.
 */
public final class SnapshotBucket {
    private static final Pattern NAME = Pattern.compile("index-(\\d{20})");

    /** A snapshot in the bucket. */
    public record Entry(String name, long streamSeq, long bytes) {}

    private final ObjectStore store;
    private final int keep;

    private SnapshotBucket(ObjectStore store, int keep) {
        this.store = store;
        this.keep = keep;
    }

    /** The bucket name of a stream's snapshots. */
    public static String bucketOf(String stream) {
        return stream + "_SNAPSHOTS";
    }

    /** Opens the bucket of {@code stream}, creating it (file storage) if it does not exist. */
    public static SnapshotBucket open(Connection c, String stream, int keep) throws IOException {
        String bucket = bucketOf(stream);
        try {
            if (!c.objectStoreManagement().getBucketNames().contains(bucket)) {
                c.objectStoreManagement()
                        .create(ObjectStoreConfiguration.builder(bucket)
                                .storageType(StorageType.File)
                                .description("kvprefix index snapshots of stream " + stream)
                                .build());
            }
            return new SnapshotBucket(c.objectStore(bucket), keep);
        } catch (JetStreamApiException e) {
            if (e.getApiErrorCode() == 10058) { // created meanwhile by another replica
                return new SnapshotBucket(c.objectStore(bucket), keep);
            }
            throw new IOException("snapshot bucket " + bucket + ": " + e.getMessage(), e);
        }
    }

    /** The object name of the snapshot covering {@code streamSeq}. */
    public static String nameOf(long streamSeq) {
        return String.format("index-%020d", streamSeq);
    }

    /** Uploads {@code file} as the snapshot covering {@code streamSeq}, then deletes all but the newest {@code keep}. */
    public Entry put(Path file, long streamSeq) throws IOException {
        String name = nameOf(streamSeq);
        try (InputStream in = Files.newInputStream(file)) {
            ObjectInfo info = store.put(
                    ObjectMeta.builder(name)
                            .description("stream sequence " + streamSeq)
                            .build(),
                    in);
            prune();
            return new Entry(name, streamSeq, info.getSize());
        } catch (JetStreamApiException | NoSuchAlgorithmException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IOException("uploading snapshot " + name + ": " + e.getMessage(), e);
        }
    }

    /** The snapshot covering the highest stream sequence, if there is one. */
    public Optional<Entry> newest() throws IOException {
        try {
            Entry best = null;
            for (ObjectInfo o : store.getList()) {
                Matcher m = NAME.matcher(o.getObjectName());
                if (o.isDeleted() || !m.matches()) {
                    continue;
                }
                long seq = Long.parseLong(m.group(1));
                if (best == null || seq > best.streamSeq()) {
                    best = new Entry(o.getObjectName(), seq, o.getSize());
                }
            }
            return Optional.ofNullable(best);
        } catch (JetStreamApiException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IOException("listing snapshots: " + e.getMessage(), e);
        }
    }

    /** Downloads {@code e} to {@code target} (the digest is checked). */
    public void download(Entry e, Path target) throws IOException {
        try (OutputStream out = Files.newOutputStream(target)) {
            store.get(e.name(), out);
        } catch (IllegalArgumentException | IllegalStateException ex) { // jnats: no such object, a bad digest
            throw new IOException("downloading snapshot " + e.name() + ": " + ex.getMessage(), ex);
        } catch (JetStreamApiException | NoSuchAlgorithmException | InterruptedException ex) {
            if (ex instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IOException("downloading snapshot " + e.name() + ": " + ex.getMessage(), ex);
        }
    }

    private void prune() throws IOException, JetStreamApiException, InterruptedException {
        var names = store.getList().stream()
                .filter(o -> !o.isDeleted() && NAME.matcher(o.getObjectName()).matches())
                .map(ObjectInfo::getObjectName)
                .sorted()
                .toList();
        for (int i = 0; i < names.size() - keep; i++) {
            store.delete(names.get(i));
        }
    }
}
