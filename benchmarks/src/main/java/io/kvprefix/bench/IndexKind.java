package io.kvprefix.bench;

import io.kvprefix.Implementation;
import io.kvprefix.IndexConfig;
import io.kvprefix.PrefixIndex;

/**
 * The index implementations benchmarks compare, by the names the command line uses.
 *
 * <p>Thread-safety: stateless.
 */
public final class IndexKind {
    private IndexKind() {}

    /** Builds the index named {@code name}: {@code heap} or {@code offheap-java}. */
    public static PrefixIndex create(String name, IndexConfig base) {
        return switch (name) {
            case "heap" -> PrefixIndex.heap(base);
            case "offheap-java" -> PrefixIndex.offHeap(base.toBuilder().implementation(Implementation.PORTABLE).build());
            default -> throw new IllegalArgumentException("unknown index '" + name + "': expected heap or offheap-java");
        };
    }
}
