package io.kvprefix.internal;

import io.kvprefix.IndexConfig;
import io.kvprefix.PrefixIndex;
import io.kvprefix.internal.heap.HeapPrefixIndex;
import io.kvprefix.internal.heap.HeapSnapshot;
import io.kvprefix.internal.offheap.OffHeapPrefixIndex;
import java.nio.file.Path;

/**
 * Builds the index implementations behind {@link PrefixIndex}'s factories, so the public interface
 * does not name them.
 *
 * <p>Thread-safety: stateless.
 */
public final class IndexFactory {
    private IndexFactory() {}

    public static PrefixIndex offHeap(IndexConfig config) {
        return new OffHeapPrefixIndex(config);
    }

    public static PrefixIndex heap(IndexConfig config) {
        return new HeapPrefixIndex(config);
    }

    public static PrefixIndex restoreOffHeap(Path file, IndexConfig config) {
        return OffHeapPrefixIndex.restore(file, config);
    }

    public static PrefixIndex restoreHeap(Path file, IndexConfig config) {
        return HeapSnapshot.restore(file, config);
    }
}
