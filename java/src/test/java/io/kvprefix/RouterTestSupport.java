package io.kvprefix;

import java.util.Arrays;

/** Small helpers shared by the router tests: token ranges and stores built from them. */
final class RouterTestSupport {
    static final Worker W1 = Worker.of(1);
    static final Worker W2 = Worker.of(2);
    static final Worker W3 = Worker.of(3);

    private RouterTestSupport() {}

    /** {@code n} consecutive tokens starting at {@code first}. */
    static int[] tokens(int first, int n) {
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = first + i;
        }
        return t;
    }

    /** The first {@code blocks} blocks of {@code tokens} at the index's block size. */
    static int[] prefix(PrefixIndex index, int[] tokens, int blocks) {
        return Arrays.copyOf(tokens, blocks * index.hasher().blockSize());
    }

    /** Stores every full block of {@code tokens} for {@code worker} as a new sequence (engine hashes = chain hashes). */
    static void store(PrefixIndex index, Worker worker, int[] tokens) {
        store(index, worker, tokens, index.hasher());
    }

    static void store(PrefixIndex index, Worker worker, int[] tokens, BlockHasher hasher) {
        long[] local = hasher.localHashes(tokens);
        long[] chain = hasher.chainHashes(local);
        EventStatus st = index.apply(KvEvent.Stored.root(worker, chain, local));
        if (st != EventStatus.OK) {
            throw new AssertionError("store for " + worker + ": " + st);
        }
    }

    /** An index with 4-token blocks (the hand-computed costs below use it). */
    static PrefixIndex heapIndex() {
        return PrefixIndex.heap(IndexConfig.builder().blockSize(4).build());
    }
}
