package io.kvprefix.cli;

import io.kvprefix.bench.Implementations;
import java.util.Iterator;

/**
 * The names of {@link Implementations}, for picocli's {@code ${COMPLETION-CANDIDATES}} in help texts.
 *
 * <p>Thread-safety: stateless; each iteration reads the registry, which never changes.
 */
final class ImplementationNames implements Iterable<String> {
    @Override
    public Iterator<String> iterator() {
        return Implementations.names().iterator();
    }
}
