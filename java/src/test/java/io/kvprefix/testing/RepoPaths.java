package io.kvprefix.testing;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Paths inside the repository for tests that read its files (the C header, sources).
 *
 * <p>Thread-safety: stateless.
 */
public final class RepoPaths {
    private RepoPaths() {}

    /** The repository root: {@code -Dkvprefix.repo.root} (set by the build), else found from the working directory. */
    public static Path root() {
        String p = System.getProperty("kvprefix.repo.root");
        if (p != null && !p.isBlank() && Files.isDirectory(Path.of(p, "include"))) {
            return Path.of(p);
        }
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null) {
            if (Files.isRegularFile(dir.resolve("include/kvprefix.h"))) {
                return dir;
            }
            dir = dir.getParent();
        }
        throw new IllegalStateException(
                "repository root not found from " + Path.of("").toAbsolutePath());
    }
}
