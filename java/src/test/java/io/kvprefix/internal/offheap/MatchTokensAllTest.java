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
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The hash-and-match call that hands back every block's local hash (docs/SPEC.md section 6.7): the
 * native kernel ({@code kvp_match_tokens_all}), the Java kernel and the heap index give the same
 * depths as the plain token match and the same hashes as the pure-Java hasher, on seeded random
 * indexes and requests (the seed is printed on a failure).
 */
class MatchTokensAllTest {

    private static final int BS = 4;

    @Test
    void nativeAndJavaHandBackIdenticalHashesAndDepths() {
        long seed = TestScale.seed();
        SplittableRandom r = new SplittableRandom(seed);
        String why = TestScale.replay(seed);
        IndexConfig.Builder cfg = IndexConfig.builder().blockSize(BS);
        try (PrefixIndex nat = PrefixIndex.offHeap(
                        cfg.implementation(Implementation.NATIVE).build());
                PrefixIndex java = PrefixIndex.offHeap(
                        cfg.implementation(Implementation.PORTABLE).build());
                PrefixIndex heap = PrefixIndex.heap(
                        cfg.implementation(Implementation.PORTABLE).build())) {
            assertTrue(((OffHeapPrefixIndex) nat).nativeMatch(), "the native kernel is under test");
            int[][] prompts = new int[24][];
            for (int i = 0; i < prompts.length; i++) {
                prompts[i] = prompt(r, i > 0 && r.nextBoolean() ? prompts[r.nextInt(i)] : null);
                storeSome(r, prompts[i], i, nat, java, heap);
            }
            BlockHasher portable = BlockHasher.builder()
                    .blockSize(BS)
                    .implementation(Implementation.PORTABLE)
                    .build();
            for (int round = 0; round < TestScale.iterations(400, 4000); round++) {
                int[] q = prompt(r, r.nextInt(4) > 0 ? prompts[r.nextInt(prompts.length)] : null);
                int off = Math.min(q.length, r.nextInt(3));
                int len = q.length - off - r.nextInt(q.length - off + 1);
                long[] want = portable.localHashes(q, off, len);
                MatchResult plain = new MatchResult();
                nat.match(q, off, len, nat.hasher(), plain);
                plain.sortByWorker();
                for (PrefixIndex ix : new PrefixIndex[] {nat, java, heap}) {
                    long[] out = new long[want.length + r.nextInt(3)];
                    Arrays.fill(out, 7);
                    MatchResult m = new MatchResult();
                    assertEquals(want.length, ix.match(q, off, len, ix.hasher(), m, out), why);
                    assertArrayEquals(want, Arrays.copyOf(out, want.length), why + " " + ix);
                    m.sortByWorker();
                    assertEquals(plain.scores(), m.scores(), why + " " + ix);
                }
            }
        }
    }

    @Test
    void theNativeCallIsOneDowncallAndChecksItsRoom() {
        try (PrefixIndex ix = PrefixIndex.offHeap(IndexConfig.builder()
                .blockSize(16)
                .implementation(Implementation.NATIVE)
                .build())) {
            int[] tokens = new int[16 * 64];
            Arrays.setAll(tokens, i -> i * 31);
            long[] out = new long[64];
            MatchResult m = new MatchResult();
            ix.match(tokens, 0, tokens.length, ix.hasher(), m, out); // scratch grows on first use
            long before = KvpBindings.threadCalls();
            ix.match(tokens, 0, tokens.length, ix.hasher(), m, out);
            assertEquals(1, KvpBindings.threadCalls() - before);
            assertArrayEquals(ix.hasher().localHashes(tokens), out);
            assertThrows(
                    IllegalArgumentException.class,
                    () -> ix.match(tokens, 0, tokens.length, ix.hasher(), m, new long[63]));
        }
    }

    /** A prompt of 0 to 40 blocks plus a partial tail, sharing a random prefix of {@code base} if given. */
    private static int[] prompt(SplittableRandom r, int[] base) {
        int[] p = new int[r.nextInt(41) * BS + r.nextInt(BS)];
        int shared = base == null ? 0 : Math.min(p.length, r.nextInt(base.length + 1));
        for (int i = 0; i < p.length; i++) {
            p[i] = i < shared ? base[i] : r.nextInt(50);
        }
        return p;
    }

    /** Stores a random leading part of the prompt's blocks on one of three workers of every index. */
    private static void storeSome(SplittableRandom r, int[] prompt, int n, PrefixIndex... indexes) {
        long[] locals = indexes[0].hasher().localHashes(prompt);
        int k = r.nextInt(locals.length + 1);
        if (k == 0) {
            return;
        }
        long[] names = new long[k];
        Arrays.setAll(names, i -> 1_000_000L * n + i);
        Worker w = Worker.of(r.nextInt(3));
        for (PrefixIndex ix : indexes) {
            ix.apply(KvEvent.Stored.root(w, names, Arrays.copyOf(locals, k)));
        }
    }
}
