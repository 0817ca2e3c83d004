package io.kvprefix.workload;

import io.kvprefix.BlockHasher;
import io.kvprefix.KvEvent;
import it.unimi.dsi.fastutil.longs.Long2LongOpenHashMap;
import java.util.OptionalLong;

/**
 * Renames the mock engines' block hashes to the ones NVIDIA Dynamo's engines send: the block's
 * chain hash of the local hashes ({@code C[0] = L[0]}, {@code C[i] = chain(C[i-1], L[i])},
 * docs/SPEC.md section 2.2). kvprefix treats engine hashes as opaque names and answers the same
 * either way; Dynamo's positional indexer (and the Rust yardstick built after it) takes them to be
 * chain hashes, so a stream for a side-by-side comparison must carry them. A mock-engine hash names
 * a whole prefix, as a chain hash does, so the renaming is one-to-one: each name's chain hash is
 * remembered (a map of every name seen) and a child's is its parent's chained with its local hash.
 *
 * <p>Thread-safety: not thread-safe; one instance renames one stream, in order.
 */
public final class DynamoEngineHashes {
    private final BlockHasher chainer = BlockHasher.builder().blockSize(1).build();
    private final Long2LongOpenHashMap chainOf = new Long2LongOpenHashMap();

    /** The event with its engine hashes renamed (matches and other events pass unchanged). */
    public KvEvent rename(KvEvent e) {
        return switch (e) {
            case KvEvent.Stored s -> {
                long[] names = new long[s.size()];
                boolean parent = s.parentHash().isPresent();
                long c = parent ? known(s.parentHash().getAsLong()) : 0;
                for (int i = 0; i < names.length; i++) {
                    long l = s.localHashes()[i];
                    c = (i == 0 && !parent) ? l : chainer.chainHash(c, l);
                    chainOf.put(s.blockHashes()[i], c);
                    names[i] = c;
                }
                OptionalLong p = parent ? OptionalLong.of(known(s.parentHash().getAsLong())) : OptionalLong.empty();
                yield new KvEvent.Stored(s.worker(), p, names, s.localHashes());
            }
            case KvEvent.Removed r -> {
                long[] names = new long[r.blockHashes().length];
                for (int i = 0; i < names.length; i++) {
                    names[i] = known(r.blockHashes()[i]);
                }
                yield new KvEvent.Removed(r.worker(), names);
            }
            default -> e;
        };
    }

    private long known(long name) {
        if (!chainOf.containsKey(name)) {
            throw new IllegalStateException("engine hash " + Long.toUnsignedString(name) + " was never stored");
        }
        return chainOf.get(name);
    }
}
