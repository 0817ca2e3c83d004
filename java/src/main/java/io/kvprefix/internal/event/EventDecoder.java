package io.kvprefix.internal.event;

import io.kvprefix.BlockHasher;
import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.Worker;
import io.kvprefix.internal.hash.SaltedHashers;
import java.util.Objects;

/**
 * The one front door every index's events go through (docs/SPEC.md section 3): a {@link KvEvent}
 * becomes a store, remove, clear or remove-worker ({@link DecodedEvent}), or is rejected with its
 * status. It checks the structure, applies rule 1 (an engine hash twice, or the parent among the
 * blocks: {@code invalid_block_sequence}) and hashes a token-form store's blocks with the index's
 * seeds and the event's salt. Rules 2 to 5 need the index's state and are the {@link IndexWriter}'s.
 *
 * <p>Thread-safety: thread-safe (the salted hashers are a concurrent cache); each calling thread
 * passes its own {@link DecodedEvent}.
 */
public final class EventDecoder {
    /** Stores of at most this many blocks check duplicates pairwise; longer ones with a hash set. */
    private static final int PAIRWISE_LIMIT = 8;

    private final SaltedHashers hashers;

    public EventDecoder(IndexConfig config) {
        this.hashers = new SaltedHashers(config);
    }

    /** The hashers of token-form events and requests (also used to check a request's chain seed). */
    public SaltedHashers hashers() {
        return hashers;
    }

    /**
     * Decodes {@code event} into {@code into}; returns null if it is to be applied
     * ({@link DecodedEvent#applyTo}), or the status it is rejected with.
     */
    public EventStatus decode(KvEvent event, DecodedEvent into) {
        Objects.requireNonNull(event, "event");
        return switch (event) {
            case KvEvent.Stored s -> {
                if (s.blockHashes().length != s.localHashes().length) {
                    yield EventStatus.INVALID_INPUT;
                }
                into.medium = s.medium();
                yield store(
                        into,
                        s.worker(),
                        s.parentHash().isPresent(),
                        s.parentHash().orElse(0L),
                        s.blockHashes(),
                        s.localHashes());
            }
            case KvEvent.Copied c -> {
                into.kind = DecodedEvent.Kind.COPY;
                into.medium = c.medium();
                into.worker = c.worker();
                into.engineHashes = c.blockHashes();
                yield null;
            }
            case KvEvent.StoredTokens t -> {
                if (t.blockSize() < 1
                        || t.blockHashes().length != t.tokenIds().length / t.blockSize()
                        || (t.mmHashes() != null && t.mmHashes().length != t.blockHashes().length)) {
                    yield EventStatus.INVALID_INPUT;
                }
                into.medium = t.medium();
                yield storeTokens(into, t);
            }
            case KvEvent.Removed r -> {
                into.kind = DecodedEvent.Kind.REMOVE;
                into.medium = r.medium();
                into.worker = r.worker();
                into.engineHashes = r.blockHashes();
                yield null;
            }
            case KvEvent.Cleared c -> {
                into.kind = DecodedEvent.Kind.CLEAR;
                into.worker = c.worker();
                yield null;
            }
            case KvEvent.RemoveWorker rw -> {
                into.kind = DecodedEvent.Kind.REMOVE_WORKER;
                into.worker = null;
                into.workerId = rw.workerId();
                yield null;
            }
        };
    }

    private static EventStatus store(
            DecodedEvent into, Worker worker, boolean hasParent, long parent, long[] engineHashes, long[] locals) {
        if (hasDuplicate(engineHashes, hasParent, parent, into.seen)) {
            return EventStatus.INVALID_BLOCK_SEQUENCE;
        }
        into.kind = DecodedEvent.Kind.STORE;
        into.worker = worker;
        into.hasParent = hasParent;
        into.parentHash = parent;
        into.engineHashes = engineHashes;
        into.localHashes = locals;
        into.blocks = engineHashes.length;
        return null;
    }

    private EventStatus storeTokens(DecodedEvent into, KvEvent.StoredTokens t) {
        boolean hasParent = t.parentHash().isPresent();
        long parent = t.parentHash().orElse(0L);
        if (hasDuplicate(t.blockHashes(), hasParent, parent, into.seen)) {
            return EventStatus.INVALID_BLOCK_SEQUENCE;
        }
        int n = t.blockHashes().length;
        long[] locals = into.ownLocals(n);
        BlockHasher h = hashers.get(t.blockSize(), t.loraName(), t.cacheNamespace());
        if (t.mmHashes() == null) {
            h.localHashes(t.tokenIds(), 0, n * t.blockSize(), locals, 0);
        } else { // multimodal blocks append their items' hashes (docs/SPEC.md section 2.1); rare, so it may allocate
            System.arraycopy(h.localHashes(t.tokenIds(), 0, n * t.blockSize(), t.mmHashes()), 0, locals, 0, n);
        }
        into.kind = DecodedEvent.Kind.STORE;
        into.worker = t.worker();
        into.hasParent = hasParent;
        into.parentHash = parent;
        into.engineHashes = t.blockHashes();
        into.localHashes = locals;
        into.blocks = n;
        return null;
    }

    /** Rule 1: an engine hash repeated among the blocks, or the parent among them. */
    static boolean hasDuplicate(long[] hashes, boolean hasParent, long parent, SeenSet seen) {
        int n = hashes.length;
        if (n <= PAIRWISE_LIMIT) {
            for (int i = 0; i < n; i++) {
                if (hasParent && hashes[i] == parent) {
                    return true;
                }
                for (int j = i + 1; j < n; j++) {
                    if (hashes[i] == hashes[j]) {
                        return true;
                    }
                }
            }
            return false;
        }
        seen.start(n);
        for (long h : hashes) {
            if (!seen.add(h)) {
                return true;
            }
        }
        return hasParent && seen.contains(parent);
    }
}
