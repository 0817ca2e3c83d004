package io.kvprefix.internal.offheap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.BlockHasher;
import io.kvprefix.Implementation;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.internal.ffi.KvpBindings;
import io.kvprefix.testing.TestScale;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The native match kernel: same layout and hashing as Java, one downcall per request, safe arguments. */
class NativeKernelTest {

    private static OffHeapPrefixIndex index(Implementation impl, int blockSize) {
        return new OffHeapPrefixIndex(
                IndexConfig.builder().blockSize(blockSize).implementation(impl).build());
    }

    @Test
    void theLibraryReadsTheRecordLayoutJavaWrites() {
        assertArrayEquals(
                new int[] {
                    (int) ChainLayout.RUN_LENGTH,
                    (int) ChainLayout.RUN_ENTRIES,
                    (int) ChainLayout.RUN_CHUNKS,
                    (int) ChainLayout.RUN_ENTRY0,
                    (int) ChainLayout.RUN_LOCALS,
                    (int) ChainLayout.CHUNK_NEXT,
                    (int) ChainLayout.CHUNK_ENTRIES,
                    (int) ChainLayout.CHILD_LOCAL,
                    (int) ChainLayout.CHILD_PARENT,
                    (int) ChainLayout.CHILD_RUN,
                    (int) ChainLayout.CHILD_STRIDE
                },
                KvpBindings.layout());
    }

    @Test
    void childHomeRecordsAgree() {
        long seed = TestScale.seed();
        SplittableRandom r = new SplittableRandom(seed);
        for (int i = 0; i < 100_000; i++) {
            int parent = r.nextInt(4) == 0 ? r.nextInt(Integer.MAX_VALUE) : r.nextInt(5000) - 1;
            long local = r.nextLong();
            int mask = (1 << (1 + r.nextInt(30))) - 1;
            assertEquals(
                    ChainLayout.childHome(parent, local, mask),
                    KvpBindings.childHome(parent, local, mask),
                    TestScale.replay(seed));
        }
    }

    @Test
    void aTokenMatchIsExactlyOneDowncall() {
        try (OffHeapPrefixIndex ix = index(Implementation.NATIVE, 16)) {
            assertTrue(ix.nativeMatch());
            int[] tokens = new int[16 * 512];
            for (int i = 0; i < tokens.length; i++) {
                tokens[i] = i * 31;
            }
            BlockHasher h = ix.hasher();
            long[] locals = h.localHashes(tokens);
            long[] names = new long[locals.length];
            for (int i = 0; i < names.length; i++) {
                names[i] = 1000 + i;
            }
            ix.apply(KvEvent.Stored.root(Worker.of(1), names, locals));
            MatchResult m = new MatchResult();
            ix.match(tokens, 0, tokens.length, m); // warm up: scratch buffers grow on first use
            long before = KvpBindings.threadCalls();
            for (int i = 0; i < 100; i++) {
                ix.match(tokens, 0, tokens.length, m);
            }
            assertEquals(100, KvpBindings.threadCalls() - before, "one native call per token match, hashing included");
            assertEquals(512, m.depthOf(Worker.of(1)));
            long before2 = KvpBindings.threadCalls();
            ix.match(locals, 0, locals.length, m);
            assertEquals(1, KvpBindings.threadCalls() - before2);
        }
    }

    @Test
    void argumentsAreCheckedInJavaBeforeTheCall() {
        for (Implementation impl : new Implementation[] {Implementation.NATIVE, Implementation.PORTABLE}) {
            try (OffHeapPrefixIndex ix = index(impl, 4)) {
                MatchResult m = new MatchResult();
                int[] tokens = new int[10];
                long[] hashes = new long[10];
                assertThrows(IndexOutOfBoundsException.class, () -> ix.match(tokens, 0, 11, m));
                assertThrows(IndexOutOfBoundsException.class, () -> ix.match(tokens, 8, 3, m));
                assertThrows(IndexOutOfBoundsException.class, () -> ix.match(tokens, -1, 3, m));
                assertThrows(IndexOutOfBoundsException.class, () -> ix.match(tokens, 0, Integer.MAX_VALUE, m));
                assertThrows(IndexOutOfBoundsException.class, () -> ix.match(hashes, 5, 6, m));
                assertThrows(IndexOutOfBoundsException.class, () -> ix.match(hashes, Integer.MAX_VALUE, 1, m));
                BlockHasher otherChain = BlockHasher.builder()
                        .blockSize(4)
                        .chainSeed(0)
                        .implementation(impl)
                        .build();
                assertThrows(IllegalArgumentException.class, () -> ix.match(tokens, 0, 8, otherChain, m));
            }
        }
    }

    @Test
    void emptyAndEndOfArrayRequests() {
        for (Implementation impl : new Implementation[] {Implementation.NATIVE, Implementation.PORTABLE}) {
            try (OffHeapPrefixIndex ix = index(impl, 4)) {
                int[] stored = {1, 2, 3, 4, 5, 6, 7, 8};
                ix.apply(new KvEvent.StoredTokens(
                        Worker.of(9), OptionalLong.empty(), stored, 4, new long[] {1, 2}, null, null));
                MatchResult m = new MatchResult();
                ix.match(new int[0], 0, 0, m);
                assertEquals(0, m.size());
                ix.match(new int[] {1, 2, 3}, 0, 3, m); // less than one block
                assertEquals(0, m.size());
                ix.match(new long[0], 0, 0, m);
                assertEquals(0, m.size());
                int[] padded = {0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8};
                ix.match(padded, 3, 8, m); // the request ends exactly at the end of the array
                assertEquals(2, m.depthOf(Worker.of(9)), impl.name());
                int[] longer = new int[4 * 300];
                System.arraycopy(stored, 0, longer, 0, 8);
                ix.match(longer, 0, longer.length, m); // far deeper than anything stored
                assertEquals(2, m.depthOf(Worker.of(9)), impl.name());
                assertEquals(300, m.queryBlocks());
            }
        }
    }

    /** Native and Java paths answer the same on random token requests over random stores, many block sizes. */
    @Test
    void nativeAndJavaAgreeOnRandomTokenRequests() {
        long seed = TestScale.seed();
        SplittableRandom r = new SplittableRandom(seed);
        int rounds = TestScale.iterations(40, 400);
        for (int round = 0; round < rounds; round++) {
            int bs = 1 + r.nextInt(r.nextBoolean() ? 8 : 64);
            IndexConfig cfg = IndexConfig.builder()
                    .blockSize(bs)
                    .maxWorkers(r.nextBoolean() ? 64 : 1024)
                    .build();
            try (PrefixIndex nat = PrefixIndex.offHeap(cfg.toBuilder()
                            .implementation(Implementation.NATIVE)
                            .build());
                    PrefixIndex jav = PrefixIndex.offHeap(cfg.toBuilder()
                            .implementation(Implementation.PORTABLE)
                            .build())) {
                int[][] docs = new int[6][];
                for (int d = 0; d < docs.length; d++) {
                    docs[d] = new int[bs * (1 + r.nextInt(80))];
                    for (int i = 0; i < docs[d].length; i++) {
                        docs[d][i] = i < bs ? 5 : r.nextInt(4); // shared first block, small alphabet
                    }
                }
                int workers = 1 + r.nextInt(r.nextBoolean() ? 8 : 200);
                long e = 1;
                for (int k = 0; k < 60; k++) {
                    int[] doc = docs[r.nextInt(docs.length)];
                    int blocks = 1 + r.nextInt(doc.length / bs);
                    long[] names = new long[blocks];
                    for (int i = 0; i < blocks; i++) {
                        names[i] = e++;
                    }
                    String lora = r.nextInt(5) == 0 ? "ad" : null;
                    Worker worker = Worker.of(r.nextInt(workers));
                    KvEvent ev = new KvEvent.StoredTokens(
                            worker,
                            OptionalLong.empty(),
                            java.util.Arrays.copyOf(doc, blocks * bs),
                            bs,
                            names,
                            lora,
                            null);
                    assertEquals(jav.apply(ev), nat.apply(ev));
                    if (r.nextInt(6) == 0) {
                        KvEvent rm = new KvEvent.Removed(worker, new long[] {names[r.nextInt(blocks)]});
                        assertEquals(jav.apply(rm), nat.apply(rm));
                    }
                }
                MatchResult a = new MatchResult(), b = new MatchResult();
                for (int q = 0; q < 30; q++) {
                    int[] doc = docs[r.nextInt(docs.length)];
                    int len = r.nextInt(doc.length + 3 * bs);
                    int[] req = java.util.Arrays.copyOf(doc, len);
                    if (len > 0 && r.nextInt(3) == 0) {
                        req[r.nextInt(len)] = 99;
                    }
                    BlockHasher h = r.nextInt(5) == 0
                            ? BlockHasher.builder()
                                    .blockSize(bs)
                                    .loraName("ad")
                                    .implementation(Implementation.PORTABLE)
                                    .build()
                            : jav.hasher();
                    jav.match(req, 0, len, h, a);
                    nat.match(req, 0, len, h, b);
                    assertEquals(a.scores(), b.scores(), "round " + round + ", " + TestScale.replay(seed));
                    long[] locals = h.localHashes(req);
                    jav.match(locals, 0, locals.length, a);
                    nat.match(locals, 0, locals.length, b);
                    assertEquals(a.scores(), b.scores(), "hashes, round " + round + ", " + TestScale.replay(seed));
                }
            }
        }
    }
}
