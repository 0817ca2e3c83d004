package io.kvprefix.workload;

import io.kvprefix.BlockHasher;
import it.unimi.dsi.fastutil.longs.Long2LongOpenHashMap;
import it.unimi.dsi.fastutil.longs.LongOpenHashSet;
import java.util.Arrays;
import java.util.Objects;

/**
 * The local hash {@code L} (docs/SPEC.md section 2.1) of each hash id, computed once per distinct id and
 * cached: id {@code h} stands for a block of {@code tokensPerBlock} tokens all equal to {@code (u32) h},
 * so {@code L(h) = XXH3(tokensPerBlock copies of le32(h), seed 1337)}; at 512 tokens
 * {@code L(0) = 16456450638077811066}.
 *
 * <p>{@link #forTrace(Trace)} hashes every distinct id of a trace up front, many blocks per call to
 * {@link BlockHasher} (one native downcall per batch); {@link #localHash(long)} computes and caches an
 * id it has not seen.
 *
 * <p>Thread-safety: not thread-safe (lookups may fill the cache); confine an instance to one thread,
 * or precompute every id and then only read it after a safe publication.
 */
public final class LocalHashTable {
    private static final int BATCH_TOKENS = 1 << 18;

    private final BlockHasher hasher;
    private final int tokensPerBlock;
    private final Long2LongOpenHashMap cache = new Long2LongOpenHashMap();

    /** An empty table hashing blocks of {@code hasher.blockSize()} tokens with {@code hasher}'s seed. */
    public LocalHashTable(BlockHasher hasher) {
        this.hasher = Objects.requireNonNull(hasher, "hasher");
        this.tokensPerBlock = hasher.blockSize();
    }

    /** A table holding every id of {@code trace}, hashed at its tokens per block with the default seed. */
    public static LocalHashTable forTrace(Trace trace) {
        LocalHashTable t = new LocalHashTable(BlockHasher.of(trace.tokensPerBlock()));
        LongOpenHashSet ids = new LongOpenHashSet();
        for (TraceRequest r : trace.requests()) {
            for (long id : r.hashIds()) {
                ids.add(id);
            }
        }
        long[] all = ids.toLongArray();
        Arrays.sort(all);
        t.precompute(all);
        return t;
    }

    /** Tokens per block. */
    public int tokensPerBlock() {
        return tokensPerBlock;
    }

    /** Number of ids hashed so far. */
    public int size() {
        return cache.size();
    }

    /** Hashes every id of {@code ids} not yet in the table, in batches. */
    public void precompute(long[] ids) {
        int perBatch = Math.max(1, BATCH_TOKENS / tokensPerBlock);
        long[] todo = new long[perBatch];
        int[] tokens = new int[perBatch * tokensPerBlock];
        long[] out = new long[perBatch];
        int n = 0;
        for (long id : ids) {
            if (cache.containsKey(id)) {
                continue;
            }
            todo[n++] = id;
            if (n == perBatch) {
                hashBatch(todo, n, tokens, out);
                n = 0;
            }
        }
        hashBatch(todo, n, tokens, out);
    }

    private void hashBatch(long[] ids, int n, int[] tokens, long[] out) {
        if (n == 0) {
            return;
        }
        for (int i = 0; i < n; i++) {
            Arrays.fill(tokens, i * tokensPerBlock, (i + 1) * tokensPerBlock, (int) ids[i]);
        }
        hasher.localHashes(tokens, 0, n * tokensPerBlock, out, 0);
        for (int i = 0; i < n; i++) {
            cache.put(ids[i], out[i]);
        }
    }

    /** The local hash of the block named {@code id}. */
    public long localHash(long id) {
        if (cache.containsKey(id)) {
            return cache.get(id);
        }
        int[] tokens = blockTokens(id, tokensPerBlock);
        long l = hasher.localHashes(tokens)[0];
        cache.put(id, l);
        return l;
    }

    /** The local hashes of {@code ids[from .. to)}. */
    public long[] localHashes(long[] ids, int from, int to) {
        long[] out = new long[to - from];
        for (int i = from; i < to; i++) {
            out[i - from] = localHash(ids[i]);
        }
        return out;
    }

    /** The local hashes of every id of {@code ids}. */
    public long[] localHashes(long[] ids) {
        return localHashes(ids, 0, ids.length);
    }

    /** The tokens of the block named {@code id}: {@code tokensPerBlock} copies of {@code (u32) id}. */
    public static int[] blockTokens(long id, int tokensPerBlock) {
        int[] t = new int[tokensPerBlock];
        Arrays.fill(t, (int) id);
        return t;
    }

    /** The tokens of the blocks {@code ids[from .. to)}, one block after the other. */
    public static int[] blockTokens(long[] ids, int from, int to, int tokensPerBlock) {
        int[] t = new int[(to - from) * tokensPerBlock];
        for (int i = from; i < to; i++) {
            Arrays.fill(t, (i - from) * tokensPerBlock, (i - from + 1) * tokensPerBlock, (int) ids[i]);
        }
        return t;
    }
}
