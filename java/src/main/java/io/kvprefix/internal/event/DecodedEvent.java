package io.kvprefix.internal.event;

import io.kvprefix.EventStatus;
import io.kvprefix.Medium;
import io.kvprefix.Worker;

/**
 * One event as {@link EventDecoder} understood it: which write it asks for and its arguments, with
 * the local hashes computed for a token-form store. Reused event after event by one thread, so
 * decoding allocates nothing beyond what hashing a token-form store needs once its buffers have grown.
 *
 * <p>Thread-safety: not thread-safe; one instance per writing thread.
 */
public final class DecodedEvent {
    /** The write an event asks for. */
    public enum Kind {
        STORE,
        COPY,
        REMOVE,
        CLEAR,
        REMOVE_WORKER
    }

    Kind kind;
    Medium medium = Medium.GPU;
    Worker worker;
    long workerId;
    boolean hasParent;
    long parentHash;
    long[] engineHashes;
    /** The event's own local hashes (hash form), or {@link #ownLocals} (token form). */
    long[] localHashes;
    /** Local hashes of token-form stores, computed here; grown, never shrunk. */
    private long[] ownLocals = new long[64];

    int blocks;
    /** Scratch for the duplicate check of long stores. */
    final SeenSet seen = new SeenSet();

    public Kind kind() {
        return kind;
    }

    /** The worker of a store, remove or clear (null for remove_worker). */
    public Worker worker() {
        return worker;
    }

    /** Applies the decoded write to {@code writer}; a store's status may be null (the writer asks to be called again). */
    public EventStatus applyTo(IndexWriter writer) {
        return switch (kind) {
            case STORE -> writer.store(worker, medium, hasParent, parentHash, engineHashes, localHashes, blocks);
            case COPY -> writer.copy(worker, medium, engineHashes);
            case REMOVE -> writer.remove(worker, medium, engineHashes);
            case CLEAR -> {
                writer.clear(worker);
                yield EventStatus.OK;
            }
            case REMOVE_WORKER -> {
                writer.removeWorker(workerId);
                yield EventStatus.OK;
            }
        };
    }

    /** Room for {@code n} local hashes of a token-form store. */
    long[] ownLocals(int n) {
        if (ownLocals.length < n) {
            ownLocals = new long[Math.max(n, ownLocals.length * 2)];
        }
        return ownLocals;
    }
}
