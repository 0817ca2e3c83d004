package io.kvprefix;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Every vector of docs/SPEC.md section 2.3 (and the extra ones of dynamo-notes 2.6) on both paths. */
class BlockHasherVectorsTest {

    private static long u(String unsigned) {
        return Long.parseUnsignedLong(unsigned);
    }

    private static BlockHasher hasher(Implementation impl, int blockSize) {
        return BlockHasher.builder().blockSize(blockSize).implementation(impl).build();
    }

    @ParameterizedTest
    @EnumSource(
            value = Implementation.class,
            names = {"NATIVE", "PORTABLE"})
    void implementationIsTheOneAskedFor(Implementation impl) {
        assertEquals(impl, hasher(impl, 4).implementation());
    }

    @ParameterizedTest
    @EnumSource(
            value = Implementation.class,
            names = {"NATIVE", "PORTABLE"})
    void tokensOneToTwelve(Implementation impl) {
        BlockHasher h = hasher(impl, 4);
        int[] tokens = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
        long[] local = h.localHashes(tokens);
        assertArrayEquals(
                new long[] {u("14643705804678351452"), u("16777012769546811212"), u("483935686894639516")}, local);
        long[] chain = {u("14643705804678351452"), u("4945711292740353085"), u("12583592247330656132")};
        assertArrayEquals(chain, h.chainHashes(local));
        long[] l2 = new long[3], c2 = new long[3];
        assertEquals(3, h.hashBlocks(tokens, 0, tokens.length, l2, c2));
        assertArrayEquals(local, l2);
        assertArrayEquals(chain, c2);
        assertEquals(chain[1], h.chainHash(chain[0], local[1]));
        assertEquals(chain[2], h.chainHash(chain[1], local[2]));
    }

    @ParameterizedTest
    @EnumSource(
            value = Implementation.class,
            names = {"NATIVE", "PORTABLE"})
    void partialTailIsDropped(Implementation impl) {
        BlockHasher h = hasher(impl, 4);
        int[] thirteen = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
        assertEquals(3, h.localHashes(thirteen).length);
        assertArrayEquals(h.localHashes(Arrays.copyOf(thirteen, 12)), h.localHashes(thirteen));
        assertEquals(0, h.localHashes(new int[] {1, 2, 3}).length);
    }

    @ParameterizedTest
    @EnumSource(
            value = Implementation.class,
            names = {"NATIVE", "PORTABLE"})
    void rawXxh3Vectors(Implementation impl) {
        // The raw primitive: "test data" and the empty input, seed 1337.
        assertEquals(
                u("13226331709069118873"), BlockHasher.xxh3("test data".getBytes(StandardCharsets.US_ASCII), 1337));
        assertEquals(u("15128690059815094969"), BlockHasher.xxh3(new byte[0], 1337));
        // The same through the kernel of each implementation.
        var kernel = impl == Implementation.NATIVE
                ? new io.kvprefix.internal.hash.NativeHashKernel(1337, 1337)
                : new io.kvprefix.internal.hash.PortableHashKernel(1337, 1337);
        assertEquals(
                u("13226331709069118873"), kernel.xxh3("test data".getBytes(StandardCharsets.US_ASCII), 0, 9, 1337));
        assertEquals(u("15128690059815094969"), kernel.xxh3(new byte[0], 0, 0, 1337));
    }

    @ParameterizedTest
    @EnumSource(
            value = Implementation.class,
            names = {"NATIVE", "PORTABLE"})
    void mooncakeHashIds(Implementation impl) {
        BlockHasher h = hasher(impl, 512);
        long[] expectLocal = {u("16456450638077811066"), u("10716031498429279048"), u("17161484913955091167")};
        int[] tokens = new int[512 * 3];
        for (int id = 0; id < 3; id++) {
            Arrays.fill(tokens, id * 512, (id + 1) * 512, id);
        }
        assertArrayEquals(expectLocal, h.localHashes(tokens));
        assertArrayEquals(
                new long[] {u("16456450638077811066"), u("10107136320548696770"), u("13351200824785277189")},
                h.chainHashes(expectLocal));
        int[] b42 = new int[512];
        Arrays.fill(b42, 42);
        assertEquals(u("11733219580547862099"), h.localHashes(b42)[0]);
    }

    @ParameterizedTest
    @EnumSource(
            value = Implementation.class,
            names = {"NATIVE", "PORTABLE"})
    void saltsChangeLocalHashesOnly(Implementation impl) {
        int[] block = {0, 1, 2, 3};
        assertEquals(u("9143094415614847814"), hasher(impl, 4).localHashes(block)[0]);
        BlockHasher lora = BlockHasher.builder()
                .blockSize(4)
                .loraName("adapter-a")
                .implementation(impl)
                .build();
        assertEquals(u("8842669519798868182"), lora.seed());
        assertEquals(u("6665157333201000639"), lora.localHashes(block)[0]);
        BlockHasher ns = BlockHasher.builder()
                .blockSize(4)
                .cacheNamespace("tenant-a")
                .implementation(impl)
                .build();
        assertEquals(u("1948188790972764086"), ns.seed());
        assertEquals(u("17009624042690211646"), ns.localHashes(block)[0]);
        BlockHasher both = BlockHasher.builder()
                .blockSize(4)
                .loraName("adapter-a")
                .cacheNamespace("tenant-a")
                .implementation(impl)
                .build();
        assertEquals(u("10790858310771630931"), both.seed());
        assertEquals(u("8269515957840517240"), both.localHashes(block)[0]);
        // Empty strings count as absent; the chain seed never changes.
        BlockHasher empty = BlockHasher.builder()
                .blockSize(4)
                .loraName("")
                .cacheNamespace("")
                .implementation(impl)
                .build();
        assertEquals(1337L, empty.seed());
        assertEquals(1337L, both.chainSeed());
        // A non-ASCII name is hashed as UTF-8 (checked against python3-xxhash).
        BlockHasher utf8 = BlockHasher.builder()
                .blockSize(2)
                .loraName("ünï")
                .implementation(impl)
                .build();
        assertEquals(u("6574230039953975001"), utf8.seed());
        assertEquals(u("7721552733305758552"), utf8.localHashes(new int[] {0, 1})[0]);
    }

    @ParameterizedTest
    @EnumSource(
            value = Implementation.class,
            names = {"NATIVE", "PORTABLE"})
    void seedReplacesTheBaseBeforeSalt(Implementation impl) {
        BlockHasher h = BlockHasher.builder()
                .blockSize(4)
                .seed(0)
                .loraName("adapter-a")
                .implementation(impl)
                .build();
        assertEquals(u("8842669519798868182") - 1337L, h.seed());
        assertEquals(0L, h.baseSeed());
    }

    @ParameterizedTest
    @EnumSource(
            value = Implementation.class,
            names = {"NATIVE", "PORTABLE"})
    void multimodalExtras(Implementation impl) {
        BlockHasher h = hasher(impl, 2);
        int[] tokens = {0, 1};
        assertEquals(u("6100948656312251355"), h.localHashes(tokens, 0, 2, new long[][] {{42}})[0]);
        assertEquals(u("10918435022357402928"), h.localHashes(tokens, 0, 2, new long[][] {null})[0]);
        assertEquals(u("10918435022357402928"), h.localHashes(tokens, 0, 2, new long[][] {{}})[0]);
        // Extras are sorted ascending as unsigned values before hashing: order of the caller does not matter.
        long big = u("18000000000000000000");
        long a = h.localHashes(tokens, 0, 2, new long[][] {{big, 7, 42}})[0];
        long b = h.localHashes(tokens, 0, 2, new long[][] {{42, big, 7}})[0];
        assertEquals(a, b);
    }

    @ParameterizedTest
    @EnumSource(
            value = Implementation.class,
            names = {"NATIVE", "PORTABLE"})
    void chainOverGivenLocals(Implementation impl) {
        BlockHasher h = hasher(impl, 1);
        assertArrayEquals(
                new long[] {11, u("750553365844651409"), u("3257565445809651757")},
                h.chainHashes(new long[] {11, 22, 33}));
        long[] out = new long[2];
        h.chainHashes(new long[] {22, 33}, 0, 2, true, 11, out, 0);
        assertArrayEquals(new long[] {u("750553365844651409"), u("3257565445809651757")}, out);
    }

    @ParameterizedTest
    @EnumSource(
            value = Implementation.class,
            names = {"NATIVE", "PORTABLE"})
    void chainSeedIsConfigurable(Implementation impl) {
        // One Dynamo branch used chain seed 0 (dynamo-notes 2.5).
        BlockHasher h = BlockHasher.builder()
                .blockSize(4)
                .chainSeed(0)
                .implementation(impl)
                .build();
        long[] chain = h.chainHashes(h.localHashes(new int[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
        assertArrayEquals(
                new long[] {u("14643705804678351452"), u("13257339816715102022"), u("18362646011897812054")}, chain);
    }
}
