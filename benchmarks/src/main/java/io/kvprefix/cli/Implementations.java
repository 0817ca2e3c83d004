package io.kvprefix.cli;

import io.kvprefix.IndexConfig;
import io.kvprefix.PrefixIndex;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * The index implementations the command line can run, by name ({@code --impl NAME}). Adding one is
 * a single {@link #register} line in the static block below.
 *
 * <p>Thread-safety: the registry is filled once, when the class initializes, and only read after:
 * safe from any thread.
 */
public final class Implementations {
    /** The implementation used when {@code --impl} is not given. */
    public static final String DEFAULT = "heap";

    private static final Map<String, Function<IndexConfig, PrefixIndex>> BY_NAME = new LinkedHashMap<>();

    static {
        register("heap", PrefixIndex::heap);
        // One line per implementation, for example:
        // register("offheap-java", config -> ...);
        // register("offheap-native", config -> ...);
    }

    private Implementations() {}

    private static void register(String name, Function<IndexConfig, PrefixIndex> factory) {
        if (BY_NAME.putIfAbsent(name, Objects.requireNonNull(factory)) != null) {
            throw new IllegalStateException("implementation '" + name + "' registered twice");
        }
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
            throw new IllegalArgumentException("unknown implementation '" + name + "': known implementations are "
                    + String.join(", ", names()));
        }
        return f.apply(config);
    }

    /** True if {@code name} is registered. */
    public static boolean isKnown(String name) {
        return BY_NAME.containsKey(name);
    }

    /** The names, for picocli's {@code ${COMPLETION-CANDIDATES}} in help texts. */
    static final class Names implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return Collections.unmodifiableList(names()).iterator();
        }
    }
}
