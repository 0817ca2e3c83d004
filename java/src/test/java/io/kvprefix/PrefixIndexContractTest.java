package io.kvprefix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kvprefix.MatchResult.Score;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

/**
 * The contract of docs/SPEC.md sections 3, 4 and 7, hand-written, for every {@link PrefixIndex}
 * implementation. A subclass names the implementation ({@link #newIndex}) and may change the base
 * configuration ({@link #config()}), for example the jump size or the number of worker slots:
 *
 * <pre>{@code
 * class OffHeap64ContractTest extends PrefixIndexContractTest {
 *     protected PrefixIndex newIndex(IndexConfig c) { return PrefixIndex.offHeap(c); }
 *     protected IndexConfig config() { return IndexConfig.builder().maxWorkers(64).jumpSize(2).build(); }
 * }
 * }</pre>
 *
 * <p>Expected answers are derived by hand from docs/SPEC.md, never computed by the code under test;
 * {@link BlockHasher} is used only to build inputs (a local hash equal to some chain hash, local
 * hashes of salted tokens). Tests that need more worker slots than the base configuration has raise
 * them ({@link #withSlots}); tests about running out of slots use the base configuration's own count.
 * {@code A, B, C, X} are local hashes, engine hashes are 101, 102, ... as in section 7.
 *
 * <p>Thread-safety: JUnit runs each test on one thread with a fresh instance; indexes are closed
 * after each test.
 */
public abstract class PrefixIndexContractTest {

    /** The implementation under test, built for {@code config}. */
    protected abstract PrefixIndex newIndex(IndexConfig config);

    /** The base configuration every test starts from (defaults unless a subclass overrides it). */
    protected IndexConfig config() {
        return IndexConfig.builder().build();
    }

    /** Whether the implementation enforces {@link IndexConfig#memoryBudgetBytes()} (the oracle does not). */
    protected boolean enforcesMemoryBudget() {
        return true;
    }

    /** Names the subclass and configuration on a failure (reports show only the method name). */
    @RegisterExtension
    final TestExecutionExceptionHandler nameTheSetup = (context, thrown) -> {
        thrown.addSuppressed(new AssertionError("under test: " + getClass().getName() + " with " + config()));
        throw thrown;
    };

    // Local hashes. Arbitrary, distinct, some with the top bit set.
    protected static final long A = 0x0000_0000_00A1_1CE5L;
    protected static final long B = 0x8000_0000_0000_0B0BL;
    protected static final long C = 0x0C0F_FEE0_0000_0001L;
    protected static final long X = 0xFFFF_FFFF_FFFF_FF00L;
    protected static final long Y = 0x0000_0000_0000_0000L;

    protected static final Worker W1 = Worker.of(1);
    protected static final Worker W2 = Worker.of(2);
    protected static final Worker W3 = Worker.of(3);

    private final List<PrefixIndex> opened = new ArrayList<>();

    @AfterEach
    void closeIndexes() {
        for (PrefixIndex i : opened) {
            i.close();
        }
    }

    /** A fresh index with the base configuration. */
    protected PrefixIndex index() {
        return index(config());
    }

    /** A fresh index with {@code c}, closed after the test. */
    protected PrefixIndex index(IndexConfig c) {
        PrefixIndex i = newIndex(c);
        opened.add(i);
        return i;
    }

    /** The base configuration with at least {@code slots} worker slots. */
    protected IndexConfig withSlots(int slots) {
        return config().toBuilder()
                .maxWorkers(Math.max(slots, config().maxWorkers()))
                .build();
    }

    // ------------------------------------------------------------------ helpers

    /** {@code stored w parent=- [(E0,L0),(E1,L1),...]}; {@code pairs} alternates E and L. */
    protected static KvEvent.Stored root(Worker w, long... pairs) {
        return KvEvent.Stored.root(w, evens(pairs), odds(pairs));
    }

    /** {@code stored w parent=P [(E0,L0),...]}. */
    protected static KvEvent.Stored after(Worker w, long parent, long... pairs) {
        return KvEvent.Stored.after(w, parent, evens(pairs), odds(pairs));
    }

    private static long[] evens(long[] pairs) {
        if (pairs.length % 2 != 0) {
            throw new IllegalArgumentException("pairs of (E, L) expected");
        }
        long[] out = new long[pairs.length / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = pairs[2 * i];
        }
        return out;
    }

    private static long[] odds(long[] pairs) {
        long[] out = new long[pairs.length / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = pairs[2 * i + 1];
        }
        return out;
    }

    protected static KvEvent.Removed removed(Worker w, long... hashes) {
        return new KvEvent.Removed(w, hashes);
    }

    protected static KvEvent.Cleared cleared(Worker w) {
        return new KvEvent.Cleared(w);
    }

    protected static KvEvent.RemoveWorker removeWorker(long id) {
        return new KvEvent.RemoveWorker(id);
    }

    protected static void ok(PrefixIndex index, KvEvent... events) {
        for (KvEvent e : events) {
            assertEquals(EventStatus.OK, index.apply(e), () -> e.toString());
        }
    }

    protected static void expect(PrefixIndex index, EventStatus status, KvEvent e) {
        assertEquals(status, index.apply(e), () -> e.toString());
    }

    protected static Score s(Worker w, int depth) {
        return new Score(w, depth);
    }

    /** The sorted (worker, depth) answer for local hashes {@code q}. */
    protected static List<Score> match(PrefixIndex index, long... q) {
        return index.match(q).scores();
    }

    protected static void assertMatch(PrefixIndex index, long[] q, Score... expected) {
        assertEquals(List.of(expected), match(index, q), () -> "match " + Arrays.toString(q));
    }

    protected static long[] q(long... hashes) {
        return hashes;
    }

    /** The chain hash of the prefix {@code locals} (docs/SPEC.md section 2.2), for building inputs only. */
    protected long chain(long... locals) {
        BlockHasher h = BlockHasher.builder()
                .blockSize(1)
                .chainSeed(config().chainSeed())
                .build();
        long c = locals[0];
        for (int i = 1; i < locals.length; i++) {
            c = h.chainHash(c, locals[i]);
        }
        return c;
    }

    /** A hasher for token matches with the base seeds, {@code blockSize} and an optional salt. */
    protected BlockHasher hasher(int blockSize, String lora, String namespace) {
        return BlockHasher.builder()
                .blockSize(blockSize)
                .seed(config().seed())
                .chainSeed(config().chainSeed())
                .loraName(lora)
                .cacheNamespace(namespace)
                .build();
    }

    protected static List<Score> matchTokens(PrefixIndex index, int[] tokens, BlockHasher hasher) {
        MatchResult r = new MatchResult();
        index.match(tokens, 0, tokens.length, hasher, r);
        return r.scores();
    }

    protected static int[] range(int from, int toInclusive) {
        int[] t = new int[toInclusive - from + 1];
        for (int i = 0; i < t.length; i++) {
            t[i] = from + i;
        }
        return t;
    }

    /** Distinct local hashes for long chains: {@code base + i * odd constant}. */
    protected static long[] locals(long base, int n) {
        long[] l = new long[n];
        for (int i = 0; i < n; i++) {
            l[i] = base + i * 0x9E37_79B9_7F4A_7C15L;
        }
        return l;
    }

    protected static long[] names(long first, int n) {
        long[] e = new long[n];
        for (int i = 0; i < n; i++) {
            e[i] = first + i;
        }
        return e;
    }

    /** Everything observable about one worker's holdings: its block count and whether it is known. */
    private static void assertWorkerState(PrefixIndex index, List<Worker> known, Map<Worker, Long> blocks) {
        assertEquals(known, index.workers());
        blocks.forEach((w, n) -> assertEquals(n, index.blockCount(w), () -> "blockCount(" + w + ")"));
    }

    // ================================================================== section 7, exactly as written

    @Test
    void example1_prefixDepth() {
        PrefixIndex index = index();
        ok(index, root(W1, 101, A, 102, B, 103, C));
        assertMatch(index, q(A, B, C), s(W1, 3));
        assertMatch(index, q(A, B, X), s(W1, 2));
        assertMatch(index, q(B));
        assertMatch(index, q());
    }

    @Test
    void example2_holeHidesDescendantsUntilFilled() {
        PrefixIndex index = index();
        ok(index, root(W1, 101, A, 102, B, 103, C));
        ok(index, removed(W1, 102));
        assertMatch(index, q(A, B, C), s(W1, 1));
        ok(index, after(W1, 101, 102, B));
        assertMatch(index, q(A, B, C), s(W1, 3));
    }

    @Test
    void example3_positionIsPartOfIdentity() {
        PrefixIndex index = index();
        ok(index, root(W1, 101, A));
        ok(index, root(W1, 201, chain(A, B)));
        assertMatch(index, q(A, B), s(W1, 1));
    }

    @Test
    void example4_reusingAnEngineHashMovesTheName() {
        PrefixIndex index = index();
        ok(index, root(W1, 101, A, 102, B));
        ok(index, root(W1, 101, C));
        assertMatch(index, q(A, B));
        assertMatch(index, q(C), s(W1, 1));
    }

    @Test
    void example5_oneBlockTwoNames() {
        PrefixIndex index = index();
        ok(index, root(W1, 101, A, 102, B), after(W1, 101, 202, B), removed(W1, 102));
        assertMatch(index, q(A, B), s(W1, 2));
        expect(index, EventStatus.BLOCK_NOT_FOUND, removed(W1, 202, 999));
        assertMatch(index, q(A, B), s(W1, 1));
    }

    @Test
    void example6_rejectedStoresApplyNothing() {
        PrefixIndex index = index();
        expect(index, EventStatus.PARENT_BLOCK_NOT_FOUND, after(W1, 777, 101, A));
        expect(index, EventStatus.INVALID_BLOCK_SEQUENCE, root(W1, 101, A, 101, B));
        expect(index, EventStatus.INVALID_BLOCK_SEQUENCE, after(W1, 101, 101, A));
        expect(index, EventStatus.INVALID_BLOCK_SEQUENCE, after(W1, 777, 102, A, 102, B));
        assertMatch(index, q(A));
        assertEquals(List.of(), index.workers(), "no store succeeded, so no worker is known");
        assertEquals(0, index.blockCount(W1));
    }

    @Test
    void example7_dpRanksAreSeparateWorkers() {
        PrefixIndex index = index();
        Worker r0 = Worker.of(1, 0);
        Worker r1 = Worker.of(1, 1);
        ok(index, root(r0, 101, A));
        expect(index, EventStatus.PARENT_BLOCK_NOT_FOUND, after(r1, 101, 102, B));
        ok(index, root(r1, 101, A), after(r1, 101, 102, B));
        assertMatch(index, q(A, B), s(r0, 1), s(r1, 2));
        ok(index, cleared(r1));
        assertMatch(index, q(A, B), s(r0, 1));
        ok(index, removeWorker(1));
        assertMatch(index, q(A));
    }

    @Test
    void example8_unsignedEverywhere() {
        PrefixIndex index = index();
        Worker big = Worker.of(Long.parseUnsignedLong("18446744073709551615"));
        ok(
                index,
                root(
                        big,
                        Long.parseUnsignedLong("18446744073709551611"),
                        Long.parseUnsignedLong("9223372036854775808")));
        ok(index, root(W3, -5L, -9223372036854775808L));
        assertMatch(index, q(Long.parseUnsignedLong("9223372036854775808")), s(W3, 1), s(big, 1));
    }

    @Test
    void example9_tokenFormEqualsHashForm() {
        PrefixIndex index = index();
        Worker w5 = Worker.of(5);
        ok(
                index,
                new KvEvent.StoredTokens(w5, OptionalLong.empty(), range(1, 13), 4, new long[] {1, 2, 3}, null, null));
        assertEquals(List.of(s(w5, 2)), matchTokens(index, range(1, 11), hasher(4, null, null)));
        // The last line of the example is a parser concern: the event cannot even be built, so the
        // replay front end answers invalid_input. Here: it is refused at construction, and nothing changes.
        assertThrows(
                IllegalArgumentException.class,
                () -> new KvEvent.StoredTokens(w5, OptionalLong.empty(), range(1, 4), 4, new long[0], null, null));
        assertEquals(3, index.blockCount(w5));
        assertEquals(0, index.eventCount(EventStatus.INVALID_INPUT));
    }

    // ================================================================== section 3: stored, rules 1-4

    @Test
    void storedContinuesItsParentsPosition() {
        PrefixIndex index = index();
        ok(index, root(W1, 101, A), after(W1, 101, 102, B), after(W1, 102, 103, C));
        assertMatch(index, q(A, B, C), s(W1, 3));
        assertMatch(index, q(B));
        assertMatch(index, q(C));
        assertMatch(index, q(A, C), s(W1, 1));
        assertEquals(3, index.blockCount(W1));
    }

    @Test
    void storedWithAnEmptyBlockList() {
        PrefixIndex index = index();
        ok(index, KvEvent.Stored.root(W1, new long[0], new long[0]));
        assertEquals(List.of(W1), index.workers(), "an empty successful store makes the worker known");
        assertEquals(0, index.blockCount(W1));
        ok(index, root(W1, 101, A));
        ok(index, KvEvent.Stored.after(W1, 101, new long[0], new long[0]));
        expect(index, EventStatus.PARENT_BLOCK_NOT_FOUND, KvEvent.Stored.after(W1, 999, new long[0], new long[0]));
        expect(index, EventStatus.PARENT_BLOCK_NOT_FOUND, KvEvent.Stored.after(W2, 101, new long[0], new long[0]));
        assertEquals(List.of(W1), index.workers());
        assertMatch(index, q(A), s(W1, 1));
    }

    @Test
    void chainHashesAreComputedByTheIndexNotTakenFromTheEngine() {
        PrefixIndex index = index();
        // Three engines with unrelated naming schemes (one names blocks by what looks like chain hashes).
        ok(index, root(W1, 101, A, 102, B, 103, C));
        ok(index, root(W2, chain(A), A, chain(A, B), B, chain(A, B, C), C));
        ok(index, root(W3, C, A, B, B, A, C)); // names equal to other blocks' local hashes
        assertMatch(index, q(A, B, C), s(W1, 3), s(W2, 3), s(W3, 3));
        // A store continuing a parent uses the parent's chain hash, whatever its name.
        ok(index, after(W3, A, 1, X));
        assertMatch(index, q(A, B, C, X), s(W1, 3), s(W2, 3), s(W3, 4));
    }

    @Test
    void invalidBlockSequence_everyVariantAppliesNothing() {
        PrefixIndex index = index();
        ok(index, root(W1, 101, A, 102, B));
        List<KvEvent> bad = List.of(
                root(W1, 201, A, 201, B), // adjacent duplicate
                root(W1, 201, A, 202, B, 203, C, 201, X), // distant duplicate
                root(W1, 102, X, 102, X), // duplicate of a held name
                after(W1, 102, 102, C), // the parent as the only block
                after(W1, 102, 301, C, 102, X, 302, Y), // the parent in the middle
                after(W1, 102, 301, C, 302, X, 102, Y), // the parent last
                after(W1, 999, 999, C), // contains an unknown parent: rule 1 first
                after(W1, 999, 401, C, 401, X), // duplicate and unknown parent: rule 1 first
                after(W2, 888, 501, A, 501, B), // unknown worker, duplicate, unknown parent
                new KvEvent.StoredTokens(W1, OptionalLong.empty(), range(1, 8), 4, new long[] {7, 7}, null, null),
                new KvEvent.StoredTokens(W1, OptionalLong.of(102), range(1, 4), 4, new long[] {102}, null, null));
        for (KvEvent e : bad) {
            expect(index, EventStatus.INVALID_BLOCK_SEQUENCE, e);
        }
        assertEquals(bad.size(), index.eventCount(EventStatus.INVALID_BLOCK_SEQUENCE));
        assertWorkerState(index, List.of(W1), Map.of(W1, 2L, W2, 0L));
        assertMatch(index, q(A, B, C), s(W1, 2));
        assertMatch(index, q(X));
        assertMatch(index, q(C));
        // 102 still names B and 101 still names A: both still work as parents and as removable names.
        ok(index, after(W1, 102, 103, C));
        assertMatch(index, q(A, B, C), s(W1, 3));
        ok(index, removed(W1, 101));
        assertMatch(index, q(A, B, C));
    }

    @Test
    void parentBlockNotFound_everyVariantAppliesNothing() {
        PrefixIndex index = index();
        Worker r1 = Worker.of(1, 1);
        ok(index, root(W1, 101, A, 102, B, 103, C));
        ok(index, root(W2, 201, X));
        ok(index, removed(W1, 103));
        expect(index, EventStatus.PARENT_BLOCK_NOT_FOUND, after(W1, 777, 104, X)); // never named
        expect(index, EventStatus.PARENT_BLOCK_NOT_FOUND, after(W1, 103, 104, X)); // removed
        expect(index, EventStatus.PARENT_BLOCK_NOT_FOUND, after(W1, 201, 104, X)); // held by another worker id
        expect(index, EventStatus.PARENT_BLOCK_NOT_FOUND, after(r1, 101, 104, X)); // held only by a sibling dp rank
        expect(index, EventStatus.PARENT_BLOCK_NOT_FOUND, after(W3, 101, 104, X)); // worker never seen
        ok(index, cleared(W2));
        expect(index, EventStatus.PARENT_BLOCK_NOT_FOUND, after(W2, 201, 202, A)); // gone with the clear
        assertEquals(6, index.eventCount(EventStatus.PARENT_BLOCK_NOT_FOUND));
        assertWorkerState(index, List.of(W1, W2), Map.of(W1, 2L, W2, 0L, W3, 0L, r1, 0L));
        assertMatch(index, q(A, B, C), s(W1, 2));
        assertMatch(index, q(A, B, X), s(W1, 2));
        assertMatch(index, q(X));
        assertMatch(index, q(A, X), s(W1, 1));
    }

    @Test
    void reusingAnEngineHashForABlockDeeperInTheSameChain() {
        PrefixIndex index = index();
        ok(index, root(W1, 101, A, 102, B));
        // 101 moves from A (position 0) to C at position 2: A is no longer held, B and C are orphans.
        ok(index, after(W1, 102, 101, C));
        assertMatch(index, q(A, B, C));
        assertEquals(2, index.blockCount(W1));
        expect(index, EventStatus.PARENT_BLOCK_NOT_FOUND, after(W1, 999, 1, A));
        ok(index, root(W1, 301, A));
        assertMatch(index, q(A, B, C), s(W1, 3));
        assertEquals(3, index.blockCount(W1));
    }

    @Test
    void reusingAnEngineHashLeavesHolesThatAReStoreFills() {
        PrefixIndex index = index();
        ok(index, root(W1, 101, A, 102, B, 103, C));
        ok(index, after(W1, 101, 102, X)); // 102 now names X at position 1; B lost its only name
        assertMatch(index, q(A, B, C), s(W1, 1));
        assertMatch(index, q(A, X), s(W1, 2));
        assertEquals(3, index.blockCount(W1), "A, X and the orphaned C");
        ok(index, after(W1, 101, 202, B)); // B is back: C (still named 103) is reachable again
        assertMatch(index, q(A, B, C), s(W1, 3));
        assertMatch(index, q(A, X), s(W1, 2));
        assertEquals(4, index.blockCount(W1));
        // Re-storing a name for the block it already names changes nothing.
        ok(index, after(W1, 202, 103, C));
        assertMatch(index, q(A, B, C), s(W1, 3));
        assertEquals(4, index.blockCount(W1));
    }

    @Test
    void reusingAnAncestorsEngineHashInsideOneStore() {
        PrefixIndex index = index();
        ok(index, root(W1, 101, A, 102, B));
        // C continues B at position 2, X continues C at position 3 and takes the name 101 from A in the
        // same event: A is no longer held, so B, C and X are held but unreachable.
        ok(index, after(W1, 102, 201, C, 101, X));
        assertMatch(index, q(A, B, C, X));
        assertEquals(3, index.blockCount(W1));
        ok(index, root(W1, 301, A));
        assertMatch(index, q(A, B, C, X), s(W1, 4));
        assertEquals(4, index.blockCount(W1));
    }

    @Test
    void oneBlockUnderSeveralNames() {
        PrefixIndex index = index();
        ok(index, root(W1, 101, A, 102, B), root(W1, 201, A), after(W1, 201, 202, B), after(W1, 101, 302, B));
        assertEquals(2, index.blockCount(W1), "two distinct blocks under five names");
        ok(index, removed(W1, 101));
        assertMatch(index, q(A, B), s(W1, 2));
        ok(index, removed(W1, 102, 202));
        assertMatch(index, q(A, B), s(W1, 2));
        assertEquals(2, index.blockCount(W1));
        ok(index, removed(W1, 302));
        assertMatch(index, q(A, B), s(W1, 1));
        assertEquals(1, index.blockCount(W1));
        ok(index, removed(W1, 201));
        assertMatch(index, q(A, B));
        assertEquals(0, index.blockCount(W1));
        assertEquals(List.of(W1), index.workers(), "a worker that removed everything stays known");
    }

    // ================================================================== section 3: removed, cleared, remove_worker

    @Test
    void removedProcessesHashesInOrderAndSkipsUnknownOnes() {
        PrefixIndex index = index();
        ok(index, root(W1, 101, A, 102, B, 103, C));
        ok(index, removed(W1));
        expect(index, EventStatus.BLOCK_NOT_FOUND, removed(W1, 999, 103, 998));
        assertMatch(index, q(A, B, C), s(W1, 2));
        assertEquals(2, index.blockCount(W1));
        expect(index, EventStatus.BLOCK_NOT_FOUND, removed(W1, 102, 102));
        assertMatch(index, q(A, B, C), s(W1, 1));
        expect(index, EventStatus.BLOCK_NOT_FOUND, removed(W2, 101));
        expect(index, EventStatus.BLOCK_NOT_FOUND, removed(Worker.of(1, 1), 101));
        ok(index, removed(W2));
        assertEquals(List.of(W1), index.workers(), "removed never makes a worker known");
        assertMatch(index, q(A), s(W1, 1));
        assertEquals(4, index.eventCount(EventStatus.BLOCK_NOT_FOUND));
    }

    @Test
    void removingAMiddleBlockKeepsDescendantsHeldButUnreachable() {
        PrefixIndex index = index();
        int n = 40;
        long[] l = locals(0x5EED, n);
        long[] e = names(1000, n);
        ok(index, KvEvent.Stored.root(W1, e, l));
        for (int hole : new int[] {1, 7, 8, 9, 16, 31, 39}) {
            ok(index, removed(W1, e[hole]));
            assertEquals(n - 1, index.blockCount(W1));
            assertMatch(index, l, s(W1, hole));
            assertMatch(index, Arrays.copyOf(l, hole), s(W1, hole));
            ok(index, KvEvent.Stored.after(W1, e[hole - 1], new long[] {e[hole]}, new long[] {l[hole]}));
            assertMatch(index, l, s(W1, n));
        }
        // Two holes: the first one decides; filling it exposes the second.
        ok(index, removed(W1, e[30], e[10]));
        assertMatch(index, l, s(W1, 10));
        ok(index, KvEvent.Stored.after(W1, e[9], new long[] {5000}, new long[] {l[10]}));
        assertMatch(index, l, s(W1, 30));
        ok(index, KvEvent.Stored.after(W1, e[29], new long[] {5001}, new long[] {l[30]}));
        assertMatch(index, l, s(W1, n));
        // Removing the root hides everything.
        ok(index, removed(W1, e[0]));
        assertMatch(index, l);
        ok(index, root(W1, 6000, l[0]));
        assertMatch(index, l, s(W1, n));
    }

    @Test
    void holesOfOneWorkerDoNotAffectAnother() {
        PrefixIndex index = index();
        int n = 20;
        long[] l = locals(0xABC, n);
        ok(index, KvEvent.Stored.root(W1, names(1, n), l), KvEvent.Stored.root(W2, names(1, n), l));
        ok(index, removed(W1, 6));
        assertMatch(index, l, s(W1, 5), s(W2, n));
        ok(index, removed(W2, 11));
        assertMatch(index, l, s(W1, 5), s(W2, 10));
        ok(index, after(W1, 5, 6, l[5]));
        assertMatch(index, l, s(W1, n), s(W2, 10));
    }

    @Test
    void storingBelowAnUnreachableParent() {
        PrefixIndex index = index();
        ok(index, root(W1, 101, A, 102, B, 103, C));
        ok(index, removed(W1, 102));
        ok(index, after(W1, 103, 104, X, 105, Y)); // the parent is held, though unreachable
        assertMatch(index, q(A, B, C, X, Y), s(W1, 1));
        assertEquals(4, index.blockCount(W1));
        // B under another prefix is another block: the hole stays.
        ok(index, root(W1, 201, X), after(W1, 201, 202, B));
        assertMatch(index, q(A, B, C, X, Y), s(W1, 1));
        assertMatch(index, q(X, B), s(W1, 2));
        // B under A fills it, and everything below becomes reachable at once.
        ok(index, after(W1, 101, 302, B));
        assertMatch(index, q(A, B, C, X, Y), s(W1, 5));
        assertMatch(index, q(A, B, C, X, A), s(W1, 4));
    }

    @Test
    void localHashesThatANaiveTableKeyCouldConflate() {
        // key = L + K * (position + 1) with K the 64-bit golden ratio makes (p, L) and (p + 1, L - K)
        // the same key; an index may hash (position, L) however it likes, but must tell them apart.
        long k = 0x9E37_79B9_7F4A_7C15L;
        PrefixIndex index = index();
        ok(index, root(W1, 1, A, 2, A - k, 3, A - 2 * k, 4, A - 3 * k));
        ok(index, root(W2, 1, A - k, 2, A - k, 3, A - k));
        ok(index, root(W3, 1, A + k, 2, A));
        assertMatch(index, q(A, A - k, A - 2 * k, A - 3 * k), s(W1, 4));
        assertMatch(index, q(A - k, A - k, A - k), s(W2, 3));
        assertMatch(index, q(A - k, A - 2 * k), s(W2, 1));
        assertMatch(index, q(A + k, A), s(W3, 2));
        // (1, A) shares the naive key of W3's (0, A + k), and (0, A) that of W1's (1, A - k).
        assertMatch(index, q(A, A), s(W1, 1));
        ok(index, removed(W1, 2));
        assertMatch(index, q(A, A - k, A - 2 * k, A - 3 * k), s(W1, 1));
    }

    @Test
    void replacementsInTheHighestSlotsInheritNothing() {
        int slots = config().maxWorkers();
        PrefixIndex index = index();
        for (int i = 0; i < slots; i++) {
            ok(index, root(Worker.of(i), 1, A, 2, B, 3, C));
        }
        int gone = Math.min(3, slots);
        for (int i = slots - gone; i < slots; i++) {
            ok(index, removeWorker(i));
        }
        for (int i = 0; i < gone; i++) {
            Worker fresh = Worker.of(1_000_000 + i, -1);
            ok(index, root(fresh, 1, A));
            assertEquals(1, index.blockCount(fresh));
        }
        MatchResult r = index.match(q(A, B, C));
        assertEquals(slots, r.size());
        for (int i = 0; i < r.size(); i++) {
            Worker w = r.worker(i);
            assertEquals(w.workerId() >= 1_000_000 ? 1 : 3, r.depth(i), () -> "depth of " + w);
        }
    }

    /** What the memory budget bounds: off-heap bytes if the index has any, else its heap estimate. */
    private static long budgeted(IndexStats s) {
        return s.nativeBytes() > 0 ? s.nativeBytes() : s.heapBytes();
    }

    @Test
    void storesBeyondTheMemoryBudgetApplyNothing() {
        assumeTrue(enforcesMemoryBudget(), "this implementation ignores the memory budget");
        long budget = 64 * 1024;
        PrefixIndex index = index(config().toBuilder().memoryBudgetBytes(budget).build());
        int chains = 0;
        EventStatus last = EventStatus.OK;
        long[] l = null;
        while (last == EventStatus.OK) {
            assertTrue(chains < 20_000, "64 KiB never ran out after " + chains + " chains of 16 blocks");
            l = locals(0x1000L * (chains + 1), 16);
            last = index.apply(KvEvent.Stored.root(W1, names(100L * chains, 16), l));
            chains++;
        }
        assertEquals(EventStatus.CAPACITY_EXCEEDED, last);
        assertEquals(1, index.eventCount(EventStatus.CAPACITY_EXCEEDED));
        assertEquals(16L * (chains - 1), index.blockCount(W1), "the rejected store applied nothing");
        assertMatch(index, l);
        assertMatch(index, locals(0x1000L, 16), s(W1, 16));
        assertTrue(budgeted(index.stats()) <= budget, () -> "bytes used " + index.stats());
        // Rejections never corrupt anything: removes, clears and matches still work.
        ok(index, removed(W1, 0), cleared(W1));
        assertMatch(index, locals(0x1000L, 16));
        assertEquals(0, index.blockCount(W1));
    }

    @Test
    void clearedEmptiesAWorkerButKeepsItKnown() {
        PrefixIndex index = index();
        ok(index, root(W1, 101, A, 102, B), root(W2, 201, A));
        ok(index, cleared(W1));
        assertWorkerState(index, List.of(W1, W2), Map.of(W1, 0L, W2, 1L));
        assertMatch(index, q(A, B), s(W2, 1));
        expect(index, EventStatus.PARENT_BLOCK_NOT_FOUND, after(W1, 101, 103, C));
        expect(index, EventStatus.BLOCK_NOT_FOUND, removed(W1, 102));
        ok(index, cleared(W1));
        ok(index, cleared(W3));
        ok(index, cleared(Worker.of(2, 7)));
        assertEquals(List.of(W1, W2), index.workers(), "cleared never makes a worker known");
        ok(index, root(W1, 101, A, 102, B));
        assertMatch(index, q(A, B), s(W1, 2), s(W2, 1));
    }

    @Test
    void clearedOfAWorkerThatIsTheOnlyHolderOfAChain() {
        PrefixIndex index = index();
        for (int round = 0; round < 8; round++) {
            ok(index, root(W1, 101, A, 102, B, 103, C), after(W1, 103, 104, X, 105, Y));
            ok(index, root(W2, 201, X, 202, Y));
            ok(index, cleared(W1));
            assertMatch(index, q(A, B, C, X, Y));
            assertMatch(index, q(X, Y), s(W2, 2));
            ok(index, removeWorker(2));
            assertMatch(index, q(X, Y));
            assertEquals(0, index.blockCount(W1));
            assertEquals(List.of(W1), index.workers());
        }
    }

    @Test
    void removeWorkerForgetsEveryDpRankOfThatIdOnly() {
        PrefixIndex index = index();
        Worker r0 = Worker.of(7, 0);
        Worker r1 = Worker.of(7, 1);
        Worker rMax = Worker.of(7, -1);
        Worker other = Worker.of(8, 1);
        for (Worker w : List.of(r0, r1, rMax, other)) {
            ok(index, root(w, 101, A, 102, B));
        }
        ok(index, removeWorker(7));
        assertWorkerState(index, List.of(other), Map.of(r0, 0L, r1, 0L, rMax, 0L, other, 2L));
        assertMatch(index, q(A, B), s(other, 2));
        ok(index, removeWorker(7));
        ok(index, removeWorker(12345));
        expect(index, EventStatus.PARENT_BLOCK_NOT_FOUND, after(r1, 101, 103, C));
        // The same id coming back starts from nothing.
        ok(index, root(r1, 301, A));
        assertMatch(index, q(A, B), s(r1, 1), s(other, 2));
        assertEquals(1, index.blockCount(r1));
    }

    // ================================================================== section 4: match semantics

    @Test
    void emptyMatchAndMatchOnAnEmptyIndex() {
        PrefixIndex index = index();
        assertMatch(index, q());
        assertMatch(index, q(A, B));
        ok(index, root(W1, 101, A));
        assertMatch(index, q());
        MatchResult r = index.match(new long[0]);
        assertTrue(r.isEmpty());
        assertEquals(0, r.queryBlocks());
        assertEquals(List.of(), index.match(new int[0]).scores());
    }

    @Test
    void depthOneAndMatchesLongerThanAnythingStored() {
        PrefixIndex index = index();
        ok(index, root(W1, 101, A));
        assertMatch(index, q(A), s(W1, 1));
        assertMatch(index, q(A, A), s(W1, 1));
        assertMatch(index, q(A, B, C, X, Y, A, B, C, X, Y, A, B, C, X, Y, A, B, C, X, Y), s(W1, 1));
        long[] l = locals(77, 10);
        ok(index, KvEvent.Stored.root(W2, names(1, 10), l));
        long[] longer = Arrays.copyOf(l, 300);
        for (int i = 10; i < longer.length; i++) {
            longer[i] = l[i % 10];
        }
        assertMatch(index, longer, s(W2, 10));
    }

    @Test
    void depth2000InOneEventAndInChainedEvents() {
        PrefixIndex index = index();
        int n = 2000;
        long[] l = locals(0xD00D, n);
        ok(index, KvEvent.Stored.root(W1, names(1, n), l));
        ok(index, root(W2, 1, l[0]));
        for (int i = 1; i < n; i++) {
            ok(index, after(W2, i, i + 1, l[i]));
        }
        assertMatch(index, l, s(W1, n), s(W2, n));
        long[] longer = Arrays.copyOf(l, n + 5);
        longer[n] = A;
        assertMatch(index, longer, s(W1, n), s(W2, n));
        ok(index, removed(W2, 1000)); // names are 1-based: block 999
        assertMatch(index, l, s(W1, n), s(W2, 999));
        ok(index, removed(W1, 2000));
        assertMatch(index, l, s(W1, n - 1), s(W2, 999));
        ok(index, after(W2, 999, 1000, l[999]));
        assertMatch(index, l, s(W1, n - 1), s(W2, n));
        assertEquals(n, index.blockCount(W2));
        assertEquals(n - 1, index.blockCount(W1));
    }

    @Test
    void theSameLocalHashAtEveryPosition() {
        PrefixIndex index = index();
        long[] same = new long[300];
        Arrays.fill(same, A);
        ok(index, KvEvent.Stored.root(W1, names(1, 300), same));
        ok(index, root(W2, 1, A, 2, A, 3, A));
        assertMatch(index, q(A), s(W1, 1), s(W2, 1));
        assertMatch(index, q(A, A, A, A, A), s(W1, 5), s(W2, 3));
        assertMatch(index, same, s(W1, 300), s(W2, 3));
        assertMatch(index, q(A, A, B), s(W1, 2), s(W2, 2));
        assertEquals(300, index.blockCount(W1), "the same L at 300 positions is 300 blocks");
        ok(index, removed(W1, 150));
        assertMatch(index, same, s(W1, 149), s(W2, 3));
    }

    @Test
    void collisionsAtTheSamePositionUnderDifferentPrefixes() {
        PrefixIndex index = index();
        ok(index, root(W1, 101, A, 102, B, 103, C));
        ok(index, root(W2, 201, X, 202, B, 203, C));
        ok(index, root(W3, 301, A, 302, X, 303, C));
        assertMatch(index, q(A, B, C), s(W1, 3), s(W3, 1));
        assertMatch(index, q(X, B, C), s(W2, 3));
        assertMatch(index, q(A, X, C), s(W1, 1), s(W3, 3));
        assertMatch(index, q(Y, B, C));
        // W2's B at position 1 under X does not stand in for W1's missing B under A.
        ok(index, removed(W1, 102));
        assertMatch(index, q(A, B, C), s(W1, 1), s(W3, 1));
    }

    @Test
    void divergenceInLongChainsAtEveryDistanceFromAJumpPoint() {
        PrefixIndex index = index();
        int n = 150;
        long[] l = locals(0xFACE, n);
        ok(index, KvEvent.Stored.root(W1, names(1, n), l));
        List<Score> expected = new ArrayList<>();
        expected.add(s(W1, n));
        int[] cuts = {1, 2, 3, 7, 8, 9, 15, 16, 17, 63, 64, 65, 66, 127, 128, 129, 149};
        for (int k = 0; k < cuts.length; k++) {
            int cut = cuts[k];
            // Worker k+10 shares l[0..cut) and then diverges by one block, after which it holds the
            // same local hashes as W1 again (same (position, L) keys, other chain hashes).
            Worker w = Worker.of(10 + k);
            long[] mine = l.clone();
            mine[cut] = X + k;
            ok(index, KvEvent.Stored.root(w, names(1, n), mine));
            expected.add(s(w, cut));
        }
        expected.sort((a, b) -> a.worker().compareTo(b.worker()));
        assertEquals(expected, match(index, l));
    }

    @Test
    void everyDepthFromOneToSeventyAtOnce() {
        PrefixIndex index = index(withSlots(70));
        int n = 70;
        long[] l = locals(0xBEEF, n);
        List<Score> expected = new ArrayList<>();
        for (int d = 1; d <= n; d++) {
            Worker w = Worker.of(d);
            ok(index, KvEvent.Stored.root(w, names(1, d), Arrays.copyOf(l, d)));
            expected.add(s(w, d));
        }
        assertEquals(expected, match(index, l));
        // Every worker loses block 5 (or its last block when shorter): depth min(d, 5) or d - 1.
        expected.clear();
        for (int d = 1; d <= n; d++) {
            Worker w = Worker.of(d);
            int hole = Math.min(5, d - 1);
            ok(index, removed(w, hole + 1));
            if (hole > 0) {
                expected.add(s(w, hole));
            }
        }
        assertEquals(expected, match(index, l));
    }

    @Test
    void aLocalHashEqualToADeeperChainHash() {
        PrefixIndex index = index();
        long ab = chain(A, B);
        long abc = chain(A, B, C);
        ok(index, root(W1, 101, A, 102, B, 103, C));
        ok(index, root(W2, 201, ab, 202, C)); // position 0 holds a block whose L is chain(A,B)
        ok(index, root(W3, 301, A, 302, ab)); // position 1 holds L = chain(A,B) under A
        ok(index, root(Worker.of(4), 401, abc)); // position 0, L = chain(A,B,C)
        assertMatch(index, q(A, B, C), s(W1, 3), s(W3, 1));
        assertMatch(index, q(ab, C), s(W2, 2));
        assertMatch(index, q(A, ab), s(W1, 1), s(W3, 2));
        assertMatch(index, q(abc), s(Worker.of(4), 1));
    }

    @Test
    void aMatchIntoAReusedResultShowsOnlyTheLatestAnswer() {
        PrefixIndex index = index(withSlots(101));
        long[] l = locals(0x77, 5);
        for (int w = 1; w <= 100; w++) {
            ok(index, KvEvent.Stored.root(Worker.of(w), names(1, 5), l));
        }
        ok(index, root(Worker.of(500), 1, X));
        MatchResult r = new MatchResult(1);
        index.match(l, 0, l.length, r);
        assertEquals(100, r.size());
        assertEquals(5, r.queryBlocks());
        index.match(q(X, A), 0, 2, r);
        assertEquals(1, r.size());
        assertEquals(Worker.of(500), r.worker(0));
        assertEquals(1, r.depth(0));
        assertEquals(2, r.queryBlocks());
        index.match(q(), 0, 0, r);
        assertEquals(0, r.size());
    }

    @Test
    void matchOfASubrange() {
        PrefixIndex index = index();
        ok(index, root(W1, 101, A, 102, B, 103, C));
        long[] padded = {X, X, A, B, C, X};
        MatchResult r = new MatchResult();
        index.match(padded, 2, 3, r);
        assertEquals(List.of(s(W1, 3)), r.scores());
        index.match(padded, 2, 2, r);
        assertEquals(List.of(s(W1, 2)), r.scores());
        index.match(padded, 3, 2, r);
        assertEquals(List.of(), r.scores());
        assertThrows(IndexOutOfBoundsException.class, () -> index.match(padded, 4, 3, new MatchResult()));
    }

    @Test
    void resultAccessorsAgreeWithScores() {
        PrefixIndex index = index();
        Worker big = Worker.of(-1L, -1);
        ok(index, root(big, 1, A), root(W2, 1, A, 2, B), root(W1, 1, A, 2, B, 3, C));
        MatchResult r = index.match(q(A, B, C));
        r.sortByWorker();
        assertEquals(3, r.size());
        assertEquals(List.of(W1, W2, big), List.of(r.worker(0), r.worker(1), r.worker(2)));
        assertEquals(List.of(3, 2, 1), List.of(r.depth(0), r.depth(1), r.depth(2)));
        assertEquals(3, r.maxDepth());
        assertEquals(2, r.depthOf(W2));
        assertEquals(0, r.depthOf(W3));
    }

    // ================================================================== workers, slots, unsigned ids

    @Test
    void unsignedWorkerIdsAndDpRanks() {
        PrefixIndex index = index();
        Worker max = Worker.of(-1L, 0);
        Worker maxMax = Worker.of(-1L, -1);
        Worker half = Worker.of(Long.MIN_VALUE, 0);
        Worker halfRank = Worker.of(3, Integer.MIN_VALUE);
        Worker small = Worker.of(3, 0);
        for (Worker w : List.of(maxMax, half, max, halfRank, small)) {
            ok(index, root(w, -1L, A, Long.MIN_VALUE, B));
        }
        assertEquals(List.of(small, halfRank, half, max, maxMax), index.workers());
        assertMatch(index, q(A, B), s(small, 2), s(halfRank, 2), s(half, 2), s(max, 2), s(maxMax, 2));
        ok(index, removed(maxMax, Long.MIN_VALUE));
        ok(index, removeWorker(Long.MIN_VALUE));
        assertMatch(index, q(A, B), s(small, 2), s(halfRank, 2), s(max, 2), s(maxMax, 1));
        ok(index, removeWorker(-1L));
        assertEquals(List.of(small, halfRank), index.workers());
        assertMatch(index, q(A, B), s(small, 2), s(halfRank, 2));
    }

    @Test
    void moreThan64AndMoreThan256Workers() {
        int n = 300;
        PrefixIndex index = index(withSlots(n));
        long[] l = locals(0x300, 8);
        List<Score> expected = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Worker w = Worker.of(1000 + i, i % 3);
            int depth = 1 + i % 8;
            ok(index, KvEvent.Stored.root(w, names(1, depth), Arrays.copyOf(l, depth)));
            expected.add(s(w, depth));
        }
        expected.sort((a, b) -> a.worker().compareTo(b.worker()));
        assertEquals(expected, match(index, l));
        assertEquals(n, index.workers().size());
        // Holes for every worker whose index is a multiple of 5 (spread over every 64-bit word): block 1.
        List<Score> after = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Worker w = Worker.of(1000 + i, i % 3);
            int depth = 1 + i % 8;
            if (i % 5 == 0 && depth > 1) {
                ok(index, removed(w, 2));
                depth = 1;
            }
            after.add(s(w, depth));
        }
        after.sort((a, b) -> a.worker().compareTo(b.worker()));
        assertEquals(after, match(index, l));
        assertEquals(List.of(), match(index, q(X)));
    }

    @Test
    void removedWorkersAreReplacedByNewOnesThatInheritNothing() {
        int n = 300;
        PrefixIndex index = index(withSlots(n));
        long[] l = locals(0x400, 6);
        for (int i = 0; i < n; i++) {
            ok(index, KvEvent.Stored.root(Worker.of(i), names(1, 6), l));
        }
        // Remove every other worker, then add as many new ones holding only the first block.
        for (int i = 0; i < n; i += 2) {
            ok(index, removeWorker(i));
        }
        List<Score> expected = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            if (i % 2 == 1) {
                expected.add(s(Worker.of(i), 6));
            }
        }
        for (int i = 0; i < n / 2; i++) {
            Worker fresh = Worker.of(10_000 + i);
            ok(index, root(fresh, 1, l[0]));
            assertEquals(1, index.blockCount(fresh));
            expected.add(s(fresh, 1));
        }
        assertEquals(expected, match(index, l));
        assertEquals(n, index.workers().size());
        // A new worker whose names equal the old workers' names still holds nothing under them.
        expect(index, EventStatus.PARENT_BLOCK_NOT_FOUND, after(Worker.of(10_000), 2, 3, l[2]));
        expect(index, EventStatus.BLOCK_NOT_FOUND, removed(Worker.of(10_001), 2));
    }

    @Test
    void slotReuseWithTwoSlots() {
        PrefixIndex index = index(config().toBuilder().maxWorkers(2).build());
        ok(index, root(W1, 101, A, 102, B, 103, C), root(W2, 201, A));
        expect(index, EventStatus.CAPACITY_EXCEEDED, root(W3, 301, X));
        ok(index, removeWorker(1));
        ok(index, root(W3, 301, X));
        assertMatch(index, q(A, B, C), s(W2, 1));
        assertMatch(index, q(X), s(W3, 1));
        ok(index, root(W3, 302, A));
        assertMatch(index, q(A, B, C), s(W2, 1), s(W3, 1));
        assertEquals(2, index.blockCount(W3));
        // The old worker id comes back: a new worker again, with nothing.
        expect(index, EventStatus.CAPACITY_EXCEEDED, root(W1, 101, A));
        ok(index, removeWorker(3));
        ok(index, after(W2, 201, 202, B));
        ok(index, root(W1, 401, A));
        assertMatch(index, q(A, B, C), s(W1, 1), s(W2, 2));
        assertEquals(List.of(W1, W2), index.workers());
    }

    @Test
    void capacityExceededWhenEverySlotIsTakenChangesNothing() {
        int slots = config().maxWorkers();
        PrefixIndex index = index();
        for (int i = 0; i < slots; i++) {
            ok(index, root(Worker.of(i), 1, A));
        }
        Worker late = Worker.of(slots);
        Worker sibling = Worker.of(0, 1); // a new dp rank of a known id is a new worker too
        expect(index, EventStatus.CAPACITY_EXCEEDED, root(late, 1, A, 2, B));
        expect(index, EventStatus.CAPACITY_EXCEEDED, root(sibling, 1, A));
        expect(index, EventStatus.CAPACITY_EXCEEDED, KvEvent.Stored.root(late, new long[0], new long[0]));
        expect(
                index,
                EventStatus.CAPACITY_EXCEEDED,
                new KvEvent.StoredTokens(late, OptionalLong.empty(), range(1, 4), 4, new long[] {1}, null, null));
        // Rules 1 and 2 come before the slot check.
        expect(index, EventStatus.INVALID_BLOCK_SEQUENCE, root(late, 1, A, 1, B));
        expect(index, EventStatus.PARENT_BLOCK_NOT_FOUND, after(late, 1, 2, B));
        // Known workers still store; cleared ones keep their slot.
        ok(index, after(Worker.of(0), 1, 2, B));
        ok(index, cleared(Worker.of(1)));
        expect(index, EventStatus.CAPACITY_EXCEEDED, root(late, 1, A));
        ok(index, root(Worker.of(1), 1, A));
        assertEquals(5, index.eventCount(EventStatus.CAPACITY_EXCEEDED));
        assertEquals(0, index.blockCount(late));
        assertEquals(slots, index.workers().size());
        assertTrue(!index.workers().contains(late) && !index.workers().contains(sibling));
        MatchResult r = index.match(q(A, B));
        assertEquals(slots, r.size());
        assertEquals(0, r.depthOf(late));
        assertEquals(2, r.depthOf(Worker.of(0)));
        // remove_worker frees a slot for the late worker.
        ok(index, removeWorker(slots - 1));
        ok(index, root(late, 1, A, 2, B));
        assertEquals(2, index.match(q(A, B)).depthOf(late));
        expect(index, EventStatus.CAPACITY_EXCEEDED, root(sibling, 1, A));
    }

    // ================================================================== token forms

    @Test
    void tokenFormStoreEqualsHashFormStore() {
        PrefixIndex index = index();
        // docs/SPEC.md section 2.3: the local hashes of [1,2,3,4], [5,6,7,8], [9,10,11,12] at seed 1337.
        long l1 = Long.parseUnsignedLong("14643705804678351452");
        long l2 = Long.parseUnsignedLong("16777012769546811212");
        long l3 = Long.parseUnsignedLong("483935686894639516");
        assumeTrue(
                config().seed() == BlockHasher.DEFAULT_SEED && config().chainSeed() == BlockHasher.DEFAULT_CHAIN_SEED,
                "the published vectors are for the default seeds");
        ok(
                index,
                new KvEvent.StoredTokens(
                        W1, OptionalLong.empty(), range(1, 14), 4, new long[] {11, 12, 13}, null, null));
        ok(index, root(W2, 21, l1, 22, l2, 23, l3));
        ok(
                index,
                root(W3, 31, l1),
                new KvEvent.StoredTokens(W3, OptionalLong.of(31), range(5, 12), 4, new long[] {32, 33}, null, null));
        assertMatch(index, q(l1, l2, l3), s(W1, 3), s(W2, 3), s(W3, 3));
        assertEquals(List.of(s(W1, 3), s(W2, 3), s(W3, 3)), matchTokens(index, range(1, 15), hasher(4, null, null)));
        assertEquals(List.of(s(W1, 2), s(W2, 2), s(W3, 2)), matchTokens(index, range(1, 8), hasher(4, null, null)));
        assertEquals(List.of(), matchTokens(index, range(1, 3), hasher(4, null, null)));
        // Chain hashes of tokens 1..12 (section 2.3) as local hashes are other blocks entirely.
        assertMatch(index, q(l1, Long.parseUnsignedLong("4945711292740353085")), s(W1, 1), s(W2, 1), s(W3, 1));
    }

    @Test
    void tokenMatchUsesTheConfiguredBlockSize() {
        PrefixIndex index = index(config().toBuilder().blockSize(4).build());
        ok(
                index,
                new KvEvent.StoredTokens(W1, OptionalLong.empty(), range(1, 12), 4, new long[] {1, 2, 3}, null, null));
        assertEquals(List.of(s(W1, 2)), index.match(range(1, 10)).scores());
        MatchResult r = new MatchResult();
        index.match(range(0, 20), 1, 12, r);
        assertEquals(List.of(s(W1, 3)), r.scores());
        assertEquals(3, r.queryBlocks());
    }

    @Test
    void mixedBlockSizesGiveDifferentBlocks() {
        PrefixIndex index = index();
        ok(index, new KvEvent.StoredTokens(W1, OptionalLong.empty(), range(1, 8), 4, new long[] {1, 2}, null, null));
        ok(
                index,
                new KvEvent.StoredTokens(
                        W2, OptionalLong.empty(), range(1, 8), 2, new long[] {1, 2, 3, 4}, null, null));
        ok(index, new KvEvent.StoredTokens(W3, OptionalLong.empty(), range(1, 8), 1, names(1, 8), null, null));
        assertEquals(List.of(s(W1, 2)), matchTokens(index, range(1, 8), hasher(4, null, null)));
        assertEquals(List.of(s(W2, 4)), matchTokens(index, range(1, 9), hasher(2, null, null)));
        assertEquals(List.of(s(W3, 8)), matchTokens(index, range(1, 8), hasher(1, null, null)));
        assertEquals(List.of(s(W3, 3)), matchTokens(index, new int[] {1, 2, 3, 5}, hasher(1, null, null)));
    }

    @Test
    void loraAndNamespaceSaltsSeparateTokenForms() {
        PrefixIndex index = index();
        Worker plain = W1;
        Worker lora = W2;
        Worker ns = W3;
        Worker both = Worker.of(4);
        Worker emptyStrings = Worker.of(5);
        int[] tokens = range(100, 111);
        long[] e = {1, 2, 3};
        ok(index, new KvEvent.StoredTokens(plain, OptionalLong.empty(), tokens, 4, e, null, null));
        ok(index, new KvEvent.StoredTokens(lora, OptionalLong.empty(), tokens, 4, e, "adapter-ünï", null));
        ok(index, new KvEvent.StoredTokens(ns, OptionalLong.empty(), tokens, 4, e, null, "tenant-7"));
        ok(index, new KvEvent.StoredTokens(both, OptionalLong.empty(), tokens, 4, e, "adapter-ünï", "tenant-7"));
        ok(index, new KvEvent.StoredTokens(emptyStrings, OptionalLong.empty(), tokens, 4, e, "", ""));
        assertEquals(List.of(s(plain, 3), s(emptyStrings, 3)), matchTokens(index, tokens, hasher(4, null, null)));
        assertEquals(List.of(s(plain, 3), s(emptyStrings, 3)), matchTokens(index, tokens, hasher(4, "", "")));
        assertEquals(List.of(s(lora, 3)), matchTokens(index, tokens, hasher(4, "adapter-ünï", null)));
        assertEquals(List.of(s(ns, 3)), matchTokens(index, tokens, hasher(4, null, "tenant-7")));
        assertEquals(List.of(s(both, 3)), matchTokens(index, tokens, hasher(4, "adapter-ünï", "tenant-7")));
        assertEquals(List.of(), matchTokens(index, tokens, hasher(4, "tenant-7", "adapter-ünï")));
        // A salted token store equals a hash-form store of the salted local hashes.
        long salted = BlockHasher.saltedSeed(config().seed(), "adapter-ünï", null);
        long[] l = BlockHasher.builder()
                .blockSize(4)
                .seed(salted)
                .chainSeed(config().chainSeed())
                .build()
                .localHashes(tokens);
        ok(index, KvEvent.Stored.root(Worker.of(6), e, l));
        assertEquals(
                List.of(s(lora, 3), s(Worker.of(6), 3)), matchTokens(index, tokens, hasher(4, "adapter-ünï", null)));
        assertMatch(index, l, s(lora, 3), s(Worker.of(6), 3));
    }

    @Test
    void tokenMatchWithAnotherChainSeedIsRefused() {
        PrefixIndex index = index();
        BlockHasher other = BlockHasher.builder()
                .blockSize(4)
                .chainSeed(config().chainSeed() + 1)
                .build();
        assertThrows(IllegalArgumentException.class, () -> index.match(range(1, 8), 0, 8, other, new MatchResult()));
    }

    // ================================================================== counters, bookkeeping, stats

    @Test
    void eventCountsPerStatus() {
        PrefixIndex index = index(config().toBuilder().maxWorkers(2).build());
        Map<EventStatus, Integer> expected = Map.of(
                EventStatus.OK,
                7,
                EventStatus.PARENT_BLOCK_NOT_FOUND,
                2,
                EventStatus.BLOCK_NOT_FOUND,
                3,
                EventStatus.INVALID_BLOCK_SEQUENCE,
                1,
                EventStatus.CAPACITY_EXCEEDED,
                2,
                EventStatus.INVALID_INPUT,
                0);
        ok(index, root(W1, 101, A), root(W2, 201, A)); // ok 2
        expect(index, EventStatus.CAPACITY_EXCEEDED, root(W3, 1, A)); // cap 1
        expect(index, EventStatus.CAPACITY_EXCEEDED, root(W3, 1, A)); // cap 2
        expect(index, EventStatus.PARENT_BLOCK_NOT_FOUND, after(W1, 5, 6, B)); // pbnf 1
        expect(index, EventStatus.PARENT_BLOCK_NOT_FOUND, after(W3, 5, 6, B)); // pbnf 2
        expect(index, EventStatus.BLOCK_NOT_FOUND, removed(W1, 9)); // bnf 1
        expect(index, EventStatus.BLOCK_NOT_FOUND, removed(W3, 9)); // bnf 2
        expect(index, EventStatus.BLOCK_NOT_FOUND, removed(W1, 101, 101)); // bnf 3
        expect(index, EventStatus.INVALID_BLOCK_SEQUENCE, root(W1, 1, A, 1, A)); // ibs 1
        ok(index, cleared(W1), cleared(W3), removeWorker(99), removed(W2, 201), root(W1, 1, B)); // ok 7
        index.match(q(A, B));
        for (EventStatus st : EventStatus.values()) {
            assertEquals((long) expected.get(st), index.eventCount(st), st::toString);
        }
        IndexStats stats = index.stats();
        for (EventStatus st : EventStatus.values()) {
            assertEquals((long) expected.get(st), stats.events().getOrDefault(st, 0L), st::toString);
        }
        assertEquals(15, stats.totalEvents());
    }

    @Test
    void blockCountAndWorkersBookkeeping() {
        PrefixIndex index = index();
        Worker r1 = Worker.of(1, 1);
        assertEquals(List.of(), index.workers());
        assertEquals(0, index.blockCount(W1));
        ok(index, root(W2, 1, A, 2, B), root(W1, 1, A), root(r1, 1, A, 2, B, 3, C));
        assertEquals(List.of(W1, r1, W2), index.workers());
        assertEquals(1, index.blockCount(W1));
        assertEquals(3, index.blockCount(r1));
        assertEquals(2, index.blockCount(W2));
        ok(index, after(W1, 1, 2, B), root(W1, 3, A)); // a second name for A
        assertEquals(2, index.blockCount(W1));
        ok(index, removed(r1, 2));
        assertEquals(2, index.blockCount(r1), "C stays held below the hole");
        ok(index, cleared(W2));
        assertEquals(0, index.blockCount(W2));
        assertEquals(List.of(W1, r1, W2), index.workers());
        ok(index, removeWorker(1));
        assertEquals(List.of(W2), index.workers());
        assertEquals(0, index.blockCount(W1));
        assertEquals(0, index.blockCount(r1));
    }

    @Test
    void statsSnapshot() {
        PrefixIndex index = index();
        ok(index, root(W1, 1, A, 2, B, 3, C), root(W2, 1, A, 2, B), after(W2, 2, 3, X), root(W3, 7, A));
        ok(index, removed(W1, 2), cleared(W3));
        expect(index, EventStatus.BLOCK_NOT_FOUND, removed(W1, 2));
        IndexStats stats = index.stats();
        assertEquals(3, stats.workers());
        assertEquals(5, stats.blocks(), "W1 holds A and C, W2 holds A, B and X, W3 nothing");
        assertEquals(Map.of(W1, 2L, W2, 3L, W3, 0L), stats.blocksPerWorker());
        // Distinct blocks held by anyone: A, C under A-B, B under A, X under A-B: at least 4 entries.
        assertTrue(stats.entries() >= 4, () -> "entries " + stats.entries());
        assertTrue(stats.bytesUsed() >= 0);
        assertEquals(6, stats.events().getOrDefault(EventStatus.OK, 0L));
        assertEquals(1, stats.events().getOrDefault(EventStatus.BLOCK_NOT_FOUND, 0L));
        assertEquals(7, stats.totalEvents());
    }

    // ================================================================== close

    @Test
    void callsAfterCloseFailWithIndexClosed() {
        PrefixIndex index = index();
        ok(index, root(W1, 1, A));
        index.close();
        List<Consumer<PrefixIndex>> calls = List.of(
                i -> i.apply(root(W1, 2, B)),
                i -> i.apply(removed(W1, 1)),
                i -> i.apply(cleared(W1)),
                i -> i.apply(removeWorker(1)),
                i -> i.match(q(A)),
                i -> i.match(q(A), 0, 1, new MatchResult()),
                i -> i.match(range(1, 32)),
                i -> i.match(range(1, 8), 0, 8, hasher(4, null, null), new MatchResult()),
                i -> i.blockCount(W1),
                i -> i.workers(),
                i -> i.stats());
        for (Consumer<PrefixIndex> call : calls) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> call.accept(index));
            assertTrue(e.getMessage().contains("index closed"), e::getMessage);
        }
        index.close(); // idempotent
    }
}
