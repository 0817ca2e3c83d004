package io.kvprefix;

import java.nio.file.Path;
import java.util.Objects;

/**
 * A snapshot could not be written or restored (docs/SNAPSHOT.md): the message names the file and
 * the reason in one line, for example {@code snapshot /var/lib/kvp/index.snap: truncated (4096 of
 * 1048576 bytes)}. A failed restore leaves nothing behind (no index, no memory held); a failed
 * write leaves the previous snapshot at that path as it was.
 *
 * <p>Thread-safety: immutable.
 */
public final class SnapshotException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The file. */
    private final transient Path file;
    /** Why, without the file's name. */
    private final String reason;

    public SnapshotException(Path file, String reason) {
        this(file, reason, null);
    }

    public SnapshotException(Path file, String reason, Throwable cause) {
        super("snapshot " + file + ": " + Objects.requireNonNull(reason, "reason"), cause);
        this.file = file;
        this.reason = reason;
    }

    /** The snapshot file concerned. */
    public Path file() {
        return file;
    }

    /** Why it failed, without the file's name (for example {@code bad magic: not a kvprefix snapshot}). */
    public String reason() {
        return reason;
    }
}
