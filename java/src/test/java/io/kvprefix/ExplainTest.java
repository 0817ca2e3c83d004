package io.kvprefix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kvprefix.MatchExplanation.Salt;
import io.kvprefix.MatchExplanation.Stop;
import io.kvprefix.MatchExplanation.WorkerStop;
import io.kvprefix.testing.OracleIndex;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.Function;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link PrefixIndex#explain} against hand-computed cases, one for every {@link Stop}, on the
 * off-heap and heap indexes and on the oracle (docs/SPEC.md section 4.1). The expected stops are
 * derived by hand from the events; the random differential streams of the op-stream module compare
 * the indexes with the oracle on every match besides.
 */
class ExplainTest {
    private static final long A = 11;
    private static final long B = 22;
    private static final long C = 33;
    private static final long D = 44;
    private static final long X = 99;

    private static PrefixIndex index(String impl) {
        IndexConfig config = IndexConfig.builder().blockSize(4).build();
        Function<IndexConfig, PrefixIndex> f = switch (impl) {
            case "offheap" -> PrefixIndex::offHeap;
            case "heap" -> PrefixIndex::heap;
            default -> OracleIndex::new;
        };
        return f.apply(config);
    }

    private static void ok(PrefixIndex index, KvEvent e) {
        assertEquals(EventStatus.OK, index.apply(e), e::toString);
    }

    private static KvEvent.Stored root(long worker, long firstName, long... locals) {
        long[] names = new long[locals.length];
        for (int i = 0; i < names.length; i++) {
            names[i] = firstName + i;
        }
        return KvEvent.Stored.root(Worker.of(worker), names, locals);
    }

    private static WorkerStop stop(long w, int depth, Stop s, int resumesAt) {
        return new WorkerStop(Worker.of(w), depth, s, resumesAt, null, 0);
    }

    @ParameterizedTest
    @ValueSource(strings = {"offheap", "heap", "oracle"})
    void everyStopOfAHashRequest(String impl) {
        try (PrefixIndex index = index(impl)) {
            ok(index, root(1, 101, A, B, C, D)); // the whole request
            ok(index, root(2, 201, A, B, C, D));
            ok(index, new KvEvent.Removed(Worker.of(2), new long[] {202})); // B gone: holds C and D without it
            ok(index, root(3, 301, A, B)); // the first two, nothing later
            ok(index, root(4, 401, X)); // nothing of the request
            ok(index, root(5, 501, A, B, C, D));
            ok(index, new KvEvent.Removed(Worker.of(5), new long[] {502, 503})); // B, C gone: holds D
            ok(index, KvEvent.Stored.after(Worker.of(3), 302, new long[] {303}, new long[] {X})); // diverges at 2

            MatchExplanation e = index.explain(new long[] {A, B, C, D}, 0, 4);
            assertEquals(4, e.queryBlocks());
            assertEquals(
                    List.of(
                            stop(1, 4, Stop.COMPLETE, -1),
                            stop(2, 1, Stop.HOLE, 2),
                            stop(3, 2, Stop.ABSENT, -1),
                            stop(4, 0, Stop.ABSENT, -1),
                            stop(5, 1, Stop.HOLE, 3)),
                    e.workers(),
                    e::toString);

            // an offset and length: the request [B, C] starts no chain anyone holds at position 0
            MatchExplanation part = index.explain(new long[] {X, B, C, X}, 1, 2);
            assertEquals(2, part.queryBlocks());
            for (WorkerStop s : part.workers()) {
                assertEquals(Stop.ABSENT, s.stop(), part::toString);
                assertEquals(0, s.depth(), part::toString);
            }
            // the hole closes when the block comes back
            ok(index, KvEvent.Stored.after(Worker.of(2), 201, new long[] {202}, new long[] {B}));
            assertEquals(
                    stop(2, 4, Stop.COMPLETE, -1),
                    index.explain(new long[] {A, B, C, D}, 0, 4)
                            .of(Worker.of(2))
                            .orElseThrow());
            // an empty request: every worker holds all of it
            assertEquals(
                    stop(4, 0, Stop.COMPLETE, -1),
                    index.explain(new long[0], 0, 0).of(Worker.of(4)).orElseThrow());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"offheap", "heap", "oracle"})
    void anotherSaltThatMatchesDeeperIsNamed(String impl) {
        int[] tokens = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
        try (PrefixIndex index = index(impl)) {
            Worker w6 = Worker.of(6);
            Worker w7 = Worker.of(7);
            Worker w8 = Worker.of(8);
            // w6: all three blocks under LoRA adapter-a; w7: the first two under namespace tenant-b;
            // w8: the first block unsalted and all three under adapter-a too (its own salt wins at 1 only)
            ok(
                    index,
                    new KvEvent.StoredTokens(
                            w6, OptionalLong.empty(), tokens, 4, new long[] {61, 62, 63}, "adapter-a", null));
            ok(
                    index,
                    new KvEvent.StoredTokens(
                            w7,
                            OptionalLong.empty(),
                            new int[] {1, 2, 3, 4, 5, 6, 7, 8},
                            4,
                            new long[] {71, 72},
                            null,
                            "tenant-b"));
            ok(
                    index,
                    new KvEvent.StoredTokens(
                            w8, OptionalLong.empty(), new int[] {1, 2, 3, 4}, 4, new long[] {81}, null, null));
            ok(
                    index,
                    new KvEvent.StoredTokens(
                            w8, OptionalLong.empty(), tokens, 4, new long[] {82, 83, 84}, "adapter-a", null));
            BlockHasher plain = index.hasher();

            MatchExplanation e = index.explain(tokens, 0, tokens.length, plain);
            assertEquals(
                    List.of(
                            new WorkerStop(w6, 0, Stop.OTHER_SALT, -1, new Salt("adapter-a", null), 3),
                            new WorkerStop(w7, 0, Stop.OTHER_SALT, -1, new Salt(null, "tenant-b"), 2),
                            new WorkerStop(w8, 1, Stop.OTHER_SALT, -1, new Salt("adapter-a", null), 3)),
                    e.workers(),
                    e::toString);

            // asked with adapter-a: w6 and w8 are complete, w7 matches deeper under tenant-b, and
            // "no salt" counts as another salt (w8's unsalted block would give 1 < 3: not named)
            BlockHasher lora =
                    BlockHasher.builder().blockSize(4).loraName("adapter-a").build();
            MatchExplanation l = index.explain(tokens, 0, tokens.length, lora);
            assertEquals(
                    List.of(
                            new WorkerStop(w6, 3, Stop.COMPLETE, -1, null, 0),
                            new WorkerStop(w7, 0, Stop.OTHER_SALT, -1, new Salt(null, "tenant-b"), 2),
                            new WorkerStop(w8, 3, Stop.COMPLETE, -1, null, 0)),
                    l.workers(),
                    l::toString);

            // asked with namespace tenant-b: w8 would match 1 unsalted and 3 under adapter-a: the deeper wins
            BlockHasher ns = BlockHasher.builder()
                    .blockSize(4)
                    .cacheNamespace("tenant-b")
                    .build();
            assertEquals(
                    new WorkerStop(w8, 0, Stop.OTHER_SALT, -1, new Salt("adapter-a", null), 3),
                    index.explain(tokens, 0, tokens.length, ns).of(w8).orElseThrow());
            // a request given as local hashes carries no tokens: no salt is tried
            long[] locals = plain.localHashes(tokens);
            assertEquals(
                    new WorkerStop(w6, 0, Stop.ABSENT, -1, null, 0),
                    index.explain(locals, 0, locals.length).of(w6).orElseThrow());
            // the chain seed must be the index's
            BlockHasher other = BlockHasher.builder().blockSize(4).chainSeed(0).build();
            assertThrows(IllegalArgumentException.class, () -> index.explain(tokens, 0, tokens.length, other));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"offheap", "heap", "oracle"})
    void aClosedIndexRefusesToExplain(String impl) {
        PrefixIndex index = index(impl);
        ok(index, root(1, 101, A));
        index.close();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> index.explain(new long[] {A}, 0, 1));
        assertEquals("index closed", e.getMessage());
    }
}
