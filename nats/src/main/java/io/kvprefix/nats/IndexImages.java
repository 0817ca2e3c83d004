package io.kvprefix.nats;

import io.kvprefix.PrefixIndex;
import java.nio.file.Path;
import java.util.Map;

/**
 * The index snapshot operations a replica needs ({@link StreamReplica.Builder#snapshots}), behind an
 * interface of the fleet's own: issue 14's
 * {@code PrefixIndex.snapshot(Path, Map)}, {@code PrefixIndex.restore(Path, IndexConfig)} and
 * {@code snapshotMetadata()} implement it once they are in the build (docs/SPEC.md section 9.5).
 *
 * <p>Thread-safety: implementations must allow {@link #save} while another thread matches.
 */
public interface IndexImages {
    /** Saves {@code index} with {@code metadata} to {@code file} (atomically: a crash leaves the previous file). */
    void save(PrefixIndex index, Path file, Map<String, String> metadata);

    /** A new index holding the state saved in {@code file}; throws a one-line reason if the file is bad. */
    PrefixIndex restore(Path file);

    /** The metadata saved with the snapshot {@code restored} was restored from. */
    Map<String, String> metadata(PrefixIndex restored);
}
