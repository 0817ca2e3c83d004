package io.kvprefix.workload;

import it.unimi.dsi.fastutil.longs.LongOpenHashSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A workload's requests in arrival order, with the number of tokens each hash id stands for
 * (512 in the Mooncake traces), and the transforms of Dynamo's {@code mooncake_bench}:
 * {@link #split(int)} ({@code --trace-length-factor}), {@link #duplicate(int)}
 * ({@code --trace-duplication-factor}, copies that share nothing with each other) and
 * {@link #truncate(int)}.
 *
 * <p>Every id of a trace is in {@code 0 .. 2^32-1}: id {@code h} names the block of tokens all equal to
 * {@code (u32) h}, so a larger id would collide with a smaller one. A transform that would go past
 * that limit throws {@link IllegalArgumentException} saying so.
 *
 * <p>Thread-safety: immutable (requests are shared, never modified).
 */
public final class Trace {
    /** Tokens per hash id in the Mooncake traces. */
    public static final int MOONCAKE_BLOCK_TOKENS = 512;
    /** The largest hash id: ids are token values, unsigned 32-bit. */
    public static final long MAX_ID = 0xFFFF_FFFFL;

    private final String source;
    private final int tokensPerBlock;
    private final List<TraceRequest> requests;
    private final long maxId;

    /**
     * A trace over {@code requests}, which must be indexed 0, 1, 2, ... with non-decreasing timestamps
     * and ids in {@code 0 .. 2^32-1}.
     *
     * @param source where the requests came from, for messages (a file name or "generated ...")
     * @param tokensPerBlock tokens each hash id stands for, at least 1
     * @param requests the requests in arrival order
     */
    public Trace(String source, int tokensPerBlock, List<TraceRequest> requests) {
        this.source = Objects.requireNonNull(source, "source");
        if (tokensPerBlock < 1) {
            throw new IllegalArgumentException("tokens per block must be >= 1, got " + tokensPerBlock);
        }
        this.tokensPerBlock = tokensPerBlock;
        this.requests = List.copyOf(requests);
        long max = -1;
        long lastTime = 0;
        for (int i = 0; i < this.requests.size(); i++) {
            TraceRequest r = this.requests.get(i);
            if (r.index() != i) {
                throw new IllegalArgumentException("request at position " + i + " has index " + r.index());
            }
            if (r.timestampMs() < lastTime) {
                throw new IllegalArgumentException("request " + i + " arrives at " + r.timestampMs()
                        + " ms, before the previous one (" + lastTime + " ms)");
            }
            lastTime = r.timestampMs();
            for (long id : r.hashIds()) {
                if (id < 0 || id > MAX_ID) {
                    throw new IllegalArgumentException("request " + i + ": hash id " + id + " is outside 0.." + MAX_ID);
                }
                max = Math.max(max, id);
            }
        }
        this.maxId = max;
    }

    /** Where the requests came from. */
    public String source() {
        return source;
    }

    /** Tokens each hash id stands for. */
    public int tokensPerBlock() {
        return tokensPerBlock;
    }

    /** The requests in arrival order (unmodifiable). */
    public List<TraceRequest> requests() {
        return requests;
    }

    /** Number of requests. */
    public int size() {
        return requests.size();
    }

    /** The largest hash id, or -1 if there is none. */
    public long maxId() {
        return maxId;
    }

    /** Every id split into {@code k} sub-ids of {@code tokensPerBlock / k} tokens; {@code k} must divide the block. */
    public Trace split(int k) {
        if (k < 1 || tokensPerBlock % k != 0) {
            throw new IllegalArgumentException(
                    "--split must be a divisor of " + tokensPerBlock + " (the tokens per hash id), got " + k);
        }
        if (k == 1) {
            return this;
        }
        checkIdSpace((maxId + 1) * k - 1, "--split " + k);
        List<TraceRequest> out = new ArrayList<>(requests.size());
        for (TraceRequest r : requests) {
            long[] ids = r.hashIds();
            long[] sub = new long[ids.length * k];
            for (int i = 0; i < ids.length; i++) {
                for (int s = 0; s < k; s++) {
                    sub[i * k + s] = ids[i] * k + s;
                }
            }
            out.add(r.with(r.index(), sub));
        }
        return new Trace(source, tokensPerBlock / k, out);
    }

    /** Each request followed by {@code d - 1} copies under fresh ids (copy {@code j} adds {@code (maxId+1)*j}). */
    public Trace duplicate(int d) {
        if (d < 1) {
            throw new IllegalArgumentException("--duplicate must be >= 1, got " + d);
        }
        if (d == 1) {
            return this;
        }
        long stride = maxId + 1;
        checkIdSpace(stride * d - 1, "--duplicate " + d);
        long total = (long) requests.size() * d;
        if (total > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("--duplicate " + d + " would make " + total + " requests, too many");
        }
        List<TraceRequest> out = new ArrayList<>((int) total);
        for (TraceRequest r : requests) {
            for (int j = 0; j < d; j++) {
                long[] ids = r.hashIds().clone();
                long off = stride * j;
                for (int i = 0; i < ids.length; i++) {
                    ids[i] += off;
                }
                out.add(r.with(out.size(), ids));
            }
        }
        return new Trace(source, tokensPerBlock, out);
    }

    /** The first {@code n} requests ({@code n >= 1}; all of them if there are fewer). */
    public Trace truncate(int n) {
        if (n < 1) {
            throw new IllegalArgumentException("--truncate must be >= 1, got " + n);
        }
        return n >= requests.size() ? this : new Trace(source, tokensPerBlock, requests.subList(0, n));
    }

    private void checkIdSpace(long newMax, String what) {
        if (newMax > MAX_ID || newMax < 0) {
            throw new IllegalArgumentException(what + " would need hash ids up to "
                    + (newMax < 0 ? "beyond 2^63" : newMax)
                    + ", above " + MAX_ID + " (an id names a block of tokens equal to it, and tokens are 32-bit);"
                    + " this trace's largest id is " + maxId);
        }
    }

    /** Total number of blocks over all requests, full or partial (what matches query). */
    public long totalBlocks() {
        long n = 0;
        for (TraceRequest r : requests) {
            n += r.blocks();
        }
        return n;
    }

    /** Total number of full blocks over all requests (what engines may cache). */
    public long totalFullBlocks() {
        long n = 0;
        for (TraceRequest r : requests) {
            n += r.fullBlocks(tokensPerBlock);
        }
        return n;
    }

    /** Number of distinct hash ids. */
    public int distinctIds() {
        LongOpenHashSet seen = new LongOpenHashSet();
        for (TraceRequest r : requests) {
            for (long id : r.hashIds()) {
                seen.add(id);
            }
        }
        return seen.size();
    }

    /**
     * The ideal prefix-hit rate by blocks: the fraction of all blocks (partial last ones included, as
     * matches query them) that continue a prefix some earlier request already had, that is the hit
     * rate of one infinite cache shared by every request. A real router with finite caches spread
     * over workers stays below it. 0 for an empty trace.
     */
    public double prefixHitBound() {
        long total = totalBlocks();
        return total == 0 ? 0.0 : (double) prefixHitBlocks() / total;
    }

    /** The numerator of {@link #prefixHitBound()}: blocks whose whole prefix was seen before. */
    public long prefixHitBlocks() {
        LongOpenHashSet seen = new LongOpenHashSet();
        long hits = 0;
        for (TraceRequest r : requests) {
            long[] ids = r.hashIds();
            long key = 0;
            boolean prefixSeen = true;
            for (int i = 0; i < ids.length; i++) {
                key = MockEngine.engineHash(i > 0, key, ids[i]);
                if (prefixSeen && seen.contains(key)) {
                    hits++;
                } else {
                    prefixSeen = false;
                    seen.add(key);
                }
            }
        }
        return hits;
    }

    @Override
    public String toString() {
        return "Trace[" + source + ", " + requests.size() + " requests, " + tokensPerBlock + " tokens per block]";
    }
}
