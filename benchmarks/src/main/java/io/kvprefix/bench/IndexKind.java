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

    /** Every name {@link #create} accepts. */
    public static final java.util.List<String> NAMES = java.util.List.of("heap", "offheap-java", "offheap-native");

    /**
     * Builds the index named {@code name}: {@code heap} (the on-heap baseline, pure Java),
     * {@code offheap-java} (the off-heap index, pure-Java hashing and matching) or
     * {@code offheap-native} (the off-heap index, matching in the native kernel; fails if the
     * library cannot load).
     */
    public static PrefixIndex create(String name, IndexConfig base) {
        return switch (name) {
            case "heap" -> PrefixIndex.heap(base.toBuilder().implementation(Implementation.PORTABLE).build());
            case "offheap-java" -> PrefixIndex.offHeap(base.toBuilder().implementation(Implementation.PORTABLE).build());
            case "offheap-native" -> PrefixIndex.offHeap(base.toBuilder().implementation(Implementation.NATIVE).build());
            default -> throw new IllegalArgumentException("unknown index '" + name + "': expected one of " + NAMES);
        };
    }
}
