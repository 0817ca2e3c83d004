package io.kvprefix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kvprefix.testing.OracleIndex;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The tier rules of docs/SPEC.md section 3.1 on every index and the oracle, step by step. */
class TiersTest {
    private static final Worker W1 = Worker.of(1);
    private static final Worker W2 = Worker.of(2);
    private static final long A = 11, B = 22, C = 33, X = 99;

    static Stream<Function<IndexConfig, PrefixIndex>> indexes() {
        return Stream.of(
                PrefixIndex::heap,
                c -> PrefixIndex.offHeap(
                        c.toBuilder().implementation(Implementation.PORTABLE).build()),
                c -> PrefixIndex.offHeap(
                        c.toBuilder().implementation(Implementation.NATIVE).build()),
                OracleIndex::new);
    }

    private static List<MatchResult.Score> m(PrefixIndex ix, long... q) {
        return ix.match(q).scores();
    }

    private static MatchResult.Score s(Worker w, int gpu, int any) {
        return new MatchResult.Score(w, gpu, any);
    }

    private static long[] e(long... names) {
        return names;
    }

    @ParameterizedTest
    @MethodSource("indexes")
    void offloadedBlocksStillMatchOnTheAnyTierDepth(Function<IndexConfig, PrefixIndex> make) {
        try (PrefixIndex ix = make.apply(IndexConfig.defaults())) {
            assertEquals(EventStatus.OK, ix.apply(KvEvent.Stored.root(W1, e(101, 102, 103), e(A, B, C))));
            assertEquals(List.of(s(W1, 3, 3)), m(ix, A, B, C));
            // vLLM's offloading connector: placeholders naming the GPU's hashes
            assertEquals(EventStatus.OK, ix.apply(new KvEvent.Copied(W1, e(101, 102, 103), Medium.CPU)));
            // the GPU evicts the tail: the CPU still holds it
            assertEquals(EventStatus.OK, ix.apply(new KvEvent.Removed(W1, e(103, 102))));
            assertEquals(List.of(s(W1, 1, 3)), m(ix, A, B, C));
            assertEquals(1, ix.blockCount(W1), "block counts are the GPU's");
            // a removal on the CPU tier takes that tier only
            assertEquals(EventStatus.OK, ix.apply(new KvEvent.Removed(W1, e(103), Medium.CPU)));
            assertEquals(List.of(s(W1, 1, 2)), m(ix, A, B, C));
            assertEquals(
                    EventStatus.BLOCK_NOT_FOUND,
                    ix.apply(new KvEvent.Removed(W1, e(103), Medium.CPU)),
                    "no longer on the CPU");
            assertEquals(
                    EventStatus.BLOCK_NOT_FOUND,
                    ix.apply(new KvEvent.Removed(W1, e(102))),
                    "102 is on the CPU only: a GPU removal does not know it");
            // a GPU store needs its parent on the GPU; a CPU store on any tier
            assertEquals(EventStatus.PARENT_BLOCK_NOT_FOUND, ix.apply(KvEvent.Stored.after(W1, 102, e(104), e(X))));
            assertEquals(
                    EventStatus.OK, ix.apply(new KvEvent.Stored(W1, OptionalLong.of(102), e(104), e(X), Medium.CPU)));
            assertEquals(List.of(s(W1, 1, 3)), m(ix, A, B, X));
            // onload: the GPU stores 102 again (same block): both tiers hold it
            assertEquals(EventStatus.OK, ix.apply(KvEvent.Stored.after(W1, 101, e(102), e(B))));
            assertEquals(EventStatus.OK, ix.apply(new KvEvent.Removed(W1, e(102), Medium.CPU)));
            assertEquals(List.of(s(W1, 2, 3)), m(ix, A, B, X), "102 still on the GPU, 104 on the CPU");
            assertEquals(EventStatus.BLOCK_NOT_FOUND, ix.apply(new KvEvent.Copied(W1, e(101, 777), Medium.DISK)));
            assertEquals(EventStatus.OK, ix.apply(new KvEvent.Removed(W1, e(101))));
            assertEquals(List.of(s(W1, 0, 3)), m(ix, A, B, X), "101 on disk only now: GPU depth 0");
            assertEquals(EventStatus.OK, ix.apply(new KvEvent.Cleared(W1)));
            assertEquals(List.of(), m(ix, A, B, X), "cleared: every tier");
        }
    }

    @ParameterizedTest
    @MethodSource("indexes")
    void aLowerTierStoreKeepsTheBlocksTheWorkerHolds(Function<IndexConfig, PrefixIndex> make) {
        try (PrefixIndex ix = make.apply(IndexConfig.defaults())) {
            assertEquals(EventStatus.OK, ix.apply(KvEvent.Stored.root(W1, e(101, 102), e(A, B))));
            // the CPU store names 101 and 102 with other content (vLLM's CPU events lack extra_keys):
            // the known names keep their blocks; 103 is placed after 102
            assertEquals(
                    EventStatus.OK,
                    ix.apply(new KvEvent.Stored(
                            W1, OptionalLong.empty(), e(101, 102, 103), e(X, X + 1, C), Medium.CPU)));
            assertEquals(List.of(s(W1, 2, 3)), m(ix, A, B, C));
            assertEquals(List.of(), m(ix, X));
            // a GPU store that moves a name takes it from the lower tiers too
            assertEquals(EventStatus.OK, ix.apply(KvEvent.Stored.root(W1, e(101), e(X))));
            assertEquals(List.of(), m(ix, A, B, C), "A lost its only name on every tier");
            assertEquals(List.of(s(W1, 1, 1)), m(ix, X));
            assertEquals(EventStatus.OK, ix.apply(new KvEvent.Removed(W1, e(101))));
            assertEquals(List.of(), m(ix, X), "and the CPU did not keep it");
            // a worker that holds only CPU blocks appears with GPU depth 0
            assertEquals(
                    EventStatus.OK, ix.apply(new KvEvent.Stored(W2, OptionalLong.empty(), e(201), e(A), Medium.CPU)));
            assertEquals(List.of(s(W2, 0, 1)), m(ix, A, B));
            assertEquals(EventStatus.OK, ix.apply(new KvEvent.RemoveWorker(2)));
            assertEquals(List.of(), m(ix, A));
        }
    }

    @ParameterizedTest
    @MethodSource("indexes")
    void aTieredWorkerTakesASecondSlot(Function<IndexConfig, PrefixIndex> make) {
        try (PrefixIndex ix = make.apply(IndexConfig.builder().maxWorkers(2).build())) {
            assertEquals(EventStatus.OK, ix.apply(KvEvent.Stored.root(W1, e(101), e(A))));
            assertEquals(EventStatus.OK, ix.apply(new KvEvent.Copied(W1, e(101), Medium.CPU)));
            assertEquals(EventStatus.CAPACITY_EXCEEDED, ix.apply(KvEvent.Stored.root(W2, e(201), e(A))));
            assertEquals(
                    EventStatus.CAPACITY_EXCEEDED,
                    ix.apply(new KvEvent.Stored(W2, OptionalLong.empty(), e(201), e(A), Medium.CPU)));
            assertEquals(List.of(s(W1, 1, 1)), m(ix, A));
            assertEquals(EventStatus.OK, ix.apply(new KvEvent.Cleared(W1)), "drops the view and its slot");
            assertEquals(EventStatus.OK, ix.apply(KvEvent.Stored.root(W2, e(201), e(A))));
            assertEquals(List.of(s(W2, 1, 1)), m(ix, A));
            assertEquals(EventStatus.CAPACITY_EXCEEDED, ix.apply(new KvEvent.Copied(W2, e(201), Medium.CPU)));
        }
        assertThrows(IllegalArgumentException.class, () -> new KvEvent.Copied(W1, e(1), Medium.GPU));
    }
}
