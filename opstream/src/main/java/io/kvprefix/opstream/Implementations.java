package io.kvprefix.opstream;

import io.kvprefix.Implementation;
import io.kvprefix.IndexConfig;
import io.kvprefix.PrefixIndex;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * The index implementations by name: the names {@code --impl NAME} takes in every command, the JMH
 * suites' {@code impl} parameter and the differential tests' candidates, and how each restores a
 * snapshot. Adding one is a single {@link #register} call in the static block below.
 *
 * <p>Thread-safety: the registry is filled once, when the class initializes, and only read after:
 * safe from any thread.
 */
public final class Implementations {
    /** The implementation used when {@code --impl} is not given: the off-heap index, native if it loads. */
    public static final String DEFAULT = "offheap";

    private static final Map<String, Function<IndexConfig, PrefixIndex>> BY_NAME = new LinkedHashMap<>();
    private static final Map<String, BiFunction<Path, IndexConfig, PrefixIndex>> RESTORE = new LinkedHashMap<>();

    static {
        // The on-heap baseline, pure Java (hashing included).
        register(
                "heap",
                config -> PrefixIndex.heap(with(config, Implementation.PORTABLE)),
                (file, config) -> PrefixIndex.restoreHeap(file, with(config, Implementation.PORTABLE)));
        // The off-heap index, native matching if the library loads (kvprefix's default).
        register("offheap", PrefixIndex::offHeap, PrefixIndex::restore);
        // The off-heap index, pure-Java hashing and matching.
        register(
                "offheap-java",
                config -> PrefixIndex.offHeap(with(config, Implementation.PORTABLE)),
                (file, config) -> PrefixIndex.restore(file, with(config, Implementation.PORTABLE)));
        // The off-heap index, hashing and matching in the native kernel (fails if the library cannot load).
        register(
                "offheap-native",
                config -> PrefixIndex.offHeap(with(config, Implementation.NATIVE)),
                (file, config) -> PrefixIndex.restore(file, with(config, Implementation.NATIVE)));
    }

    private static IndexConfig with(IndexConfig config, Implementation impl) {
        return config.toBuilder().implementation(impl).build();
    }

    private Implementations() {}

    private static void register(
            String name,
            Function<IndexConfig, PrefixIndex> factory,
            BiFunction<Path, IndexConfig, PrefixIndex> restore) {
        if (BY_NAME.putIfAbsent(name, Objects.requireNonNull(factory)) != null) {
            throw new IllegalStateException("implementation '" + name + "' registered twice");
        }
        RESTORE.put(name, Objects.requireNonNull(restore));
    }

    /** The known names, in registration order. */
    public static List<String> names() {
        return List.copyOf(BY_NAME.keySet());
    }

    /**
     * A new index of implementation {@code name}.
     *
     * @throws IllegalArgumentException for an unknown name (the message lists the known ones)
     */
    public static PrefixIndex create(String name, IndexConfig config) {
        Function<IndexConfig, PrefixIndex> f = BY_NAME.get(name);
        if (f == null) {
            throw new IllegalArgumentException(
                    "unknown implementation '" + name + "': known implementations are " + String.join(", ", names()));
        }
        return f.apply(config);
    }

    /**
     * A new index of implementation {@code name} holding the state of the snapshot {@code file}
     * (docs/SNAPSHOT.md).
     *
     * @throws IllegalArgumentException for an unknown name
     * @throws io.kvprefix.SnapshotException if the file cannot be restored
     */
    public static PrefixIndex restore(String name, Path file, IndexConfig config) {
        BiFunction<Path, IndexConfig, PrefixIndex> f = RESTORE.get(name);
        if (f == null) {
            throw new IllegalArgumentException(
                    "unknown implementation '" + name + "': known implementations are " + String.join(", ", names()));
        }
        return f.apply(file, config);
    }

    /** True if {@code name} is registered. */
    public static boolean isKnown(String name) {
        return BY_NAME.containsKey(name);
    }

    /**
     * The known names as an {@code Iterable} with a public no-argument constructor: picocli's
     * {@code completionCandidates} for an {@code --impl} option, whose help lists them.
     *
     * <p>Thread-safety: stateless; each iteration reads the registry, which never changes.
     */
    public static final class Names implements Iterable<String> {
        /** The names, read when iterated. */
        public Names() {}

        @Override
        public java.util.Iterator<String> iterator() {
            return names().iterator();
        }
    }
}
