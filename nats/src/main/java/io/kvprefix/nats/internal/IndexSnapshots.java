package io.kvprefix.nats.internal;

import io.kvprefix.IndexConfig;
import io.kvprefix.PrefixIndex;
import io.kvprefix.nats.IndexImages;
import java.nio.file.Path;
import java.util.Map;

/**
 * {@link IndexImages} on the index's own snapshots (docs/SNAPSHOT.md): {@code PrefixIndex.snapshot},
 * {@code PrefixIndex.restore} or {@code restoreHeap} with {@code config}, and
 * {@code snapshotMetadata()}.
 *
 * <p>Thread-safety: immutable; {@link #save} runs while other threads match, as
 * {@code PrefixIndex.snapshot} allows.
 *
 * @param config the restored index's configuration
 * @param onHeap whether to restore into a heap index rather than an off-heap one
 */
public record IndexSnapshots(IndexConfig config, boolean onHeap) implements IndexImages {
    @Override
    public void save(PrefixIndex index, Path file, Map<String, String> metadata) {
        index.snapshot(file, metadata);
    }

    @Override
    public PrefixIndex restore(Path file) {
        return onHeap ? PrefixIndex.restoreHeap(file, config) : PrefixIndex.restore(file, config);
    }

    @Override
    public Map<String, String> metadata(PrefixIndex restored) {
        return restored.snapshotMetadata();
    }
}
