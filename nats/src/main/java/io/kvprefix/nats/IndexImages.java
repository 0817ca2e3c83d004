package io.kvprefix.nats;

import io.kvprefix.IndexConfig;
import io.kvprefix.PrefixIndex;
import io.kvprefix.nats.internal.IndexSnapshots;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;

/**
 * The index snapshot operations a replica needs ({@link StreamReplica.Builder#snapshots}), behind an
 * interface of the fleet's own so that a caller may choose where a restored index lives. {@link #of}
 * and {@link #heap} are the index's own snapshots (docs/SNAPSHOT.md, docs/FLEET.md section 5, docs/LISTENER.md section 4):
 * {@code PrefixIndex.snapshot(Path, Map)}, {@code PrefixIndex.restore} (or {@code restoreHeap}) and
 * {@code snapshotMetadata()}.
 *
 * <p>Thread-safety: implementations must allow {@link #save} while another thread matches; the two
 * given here do.
 */
public interface IndexImages {
    /** Saves {@code index} with {@code metadata} to {@code file} (atomically: a crash leaves the previous file). */
    void save(PrefixIndex index, Path file, Map<String, String> metadata);

    /** A new index holding the state saved in {@code file}; throws a one-line reason if the file is bad. */
    PrefixIndex restore(Path file);

    /** The metadata saved with the snapshot {@code restored} was restored from. */
    Map<String, String> metadata(PrefixIndex restored);

    /**
     * The index's snapshots, restored into an off-heap index configured by {@code config} (which must
     * have the block size, seeds and worker slots of the saving index, or the restore is refused).
     */
    static IndexImages of(IndexConfig config) {
        Objects.requireNonNull(config, "config");
        return new IndexSnapshots(config, false);
    }

    /** Like {@link #of}, restored into a heap index ({@code PrefixIndex.restoreHeap}). */
    static IndexImages heap(IndexConfig config) {
        Objects.requireNonNull(config, "config");
        return new IndexSnapshots(config, true);
    }
}
