package io.kvprefix.internal.hash;

import io.kvprefix.BlockHasher;
import io.kvprefix.IndexConfig;
import io.kvprefix.MatchExplanation.Salt;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The hashers an index needs for token-form events and requests: one per (block size, LoRA name,
 * cache namespace), with the index's seeds and implementation, built once and cached (at most
 * {@value #MAX_CACHED}; a stream with endless distinct salts only rebuilds them). Also the check that
 * a caller's hasher chains like the index.
 *
 * <p>Thread-safety: thread-safe (a concurrent map; two threads may build the same hasher once each).
 */
public final class SaltedHashers {
    static final int MAX_CACHED = 256;

    private record Key(int blockSize, String lora, String namespace) {}

    private final IndexConfig config;
    private final ConcurrentHashMap<Key, BlockHasher> cache = new ConcurrentHashMap<>();
    /** The salts hashers were built for (the first {@value #MAX_CACHED}), for explain's other-salt search. */
    private final ConcurrentHashMap<Salt, Boolean> seen = new ConcurrentHashMap<>();

    public SaltedHashers(IndexConfig config) {
        this.config = Objects.requireNonNull(config, "config");
    }

    /** The hasher for blocks of {@code blockSize} tokens salted by {@code lora} and {@code namespace} (null for none). */
    public BlockHasher get(int blockSize, String lora, String namespace) {
        Key k = new Key(
                blockSize,
                lora == null || lora.isEmpty() ? null : lora,
                namespace == null || namespace.isEmpty() ? null : namespace);
        BlockHasher h = cache.get(k);
        if (h == null) {
            h = BlockHasher.builder()
                    .blockSize(blockSize)
                    .seed(config.seed())
                    .chainSeed(config.chainSeed())
                    .loraName(k.lora())
                    .cacheNamespace(k.namespace())
                    .implementation(config.implementation())
                    .build();
            if (seen.size() < MAX_CACHED) {
                seen.putIfAbsent(new Salt(k.lora(), k.namespace()), Boolean.TRUE);
            }
            if (cache.size() >= MAX_CACHED) {
                cache.clear();
            }
            cache.put(k, h);
        }
        return h;
    }

    /**
     * The salts (LoRA name, cache namespace) of the token-form events seen so far, the first
     * {@value #MAX_CACHED} of them, no salt included if it was seen; in no particular order.
     */
    public List<Salt> salts() {
        return new ArrayList<>(seen.keySet());
    }

    /** A restore: the index had seen these salts (a snapshot's; at most {@value #MAX_CACHED} are kept). */
    public void restoreSalts(List<Salt> salts) {
        for (Salt s : salts) {
            if (seen.size() < MAX_CACHED) {
                seen.putIfAbsent(s, Boolean.TRUE);
            }
        }
    }

    /** Throws {@link IllegalArgumentException} unless {@code h} chains with the index's chain seed. */
    public void checkChainSeed(BlockHasher h) {
        if (h.chainSeed() != config.chainSeed()) {
            throw new IllegalArgumentException("the hasher's chain seed " + Long.toUnsignedString(h.chainSeed())
                    + " differs from the index's " + Long.toUnsignedString(config.chainSeed()));
        }
    }
}
