package io.kvprefix;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Native memory safety and argument checks: every bad range is rejected in Java with a clear
 * exception before any native call, and inputs that end exactly at the end of an array work.
 */
class HashingSafetyTest {

    private static BlockHasher h(Implementation impl, int bs) {
        return BlockHasher.builder().blockSize(bs).implementation(impl).build();
    }

    @ParameterizedTest
    @EnumSource(
            value = Implementation.class,
            names = {"NATIVE", "PORTABLE"})
    void emptyInput(Implementation impl) {
        BlockHasher h = h(impl, 4);
        assertEquals(0, h.localHashes(new int[0]).length);
        assertEquals(0, h.chainHashes(new long[0]).length);
        assertEquals(0, h.hashBlocks(new int[0], 0, 0, new long[0], new long[0]));
        assertEquals(0, h.localHashes(new int[] {1, 2}, 2, 0).length);
        assertEquals(0, h.localHashes(new int[0], 0, 0, new long[0][]).length);
    }

    @ParameterizedTest
    @EnumSource(
            value = Implementation.class,
            names = {"NATIVE", "PORTABLE"})
    void inputEndingExactlyAtTheEndOfTheArray(Implementation impl) {
        BlockHasher h = h(impl, 3);
        int[] tokens = {9, 9, 1, 2, 3, 4, 5, 6};
        long[] tail = h.localHashes(tokens, 2, 6);
        assertArrayEquals(h.localHashes(new int[] {1, 2, 3, 4, 5, 6}), tail);
        long[] out = new long[3];
        assertEquals(2, h.localHashes(tokens, 2, 6, out, 1));
        assertEquals(0, out[0]);
        assertEquals(tail[0], out[1]);
        assertEquals(tail[1], out[2]);
    }

    @ParameterizedTest
    @EnumSource(
            value = Implementation.class,
            names = {"NATIVE", "PORTABLE"})
    void badRangesAreRejectedBeforeAnyNativeCall(Implementation impl) {
        BlockHasher h = h(impl, 4);
        int[] tokens = new int[8];
        assertThrows(IndexOutOfBoundsException.class, () -> h.localHashes(tokens, 0, 9));
        assertThrows(IndexOutOfBoundsException.class, () -> h.localHashes(tokens, 5, 4));
        assertThrows(IndexOutOfBoundsException.class, () -> h.localHashes(tokens, -1, 4));
        assertThrows(IndexOutOfBoundsException.class, () -> h.localHashes(tokens, 0, -4));
        assertThrows(IndexOutOfBoundsException.class, () -> h.localHashes(tokens, 0, Integer.MAX_VALUE));
        assertThrows(IndexOutOfBoundsException.class, () -> h.localHashes(tokens, Integer.MAX_VALUE, 8));
        assertThrows(IndexOutOfBoundsException.class, () -> h.localHashes(tokens, 0, 8, new long[1], 0));
        assertThrows(IndexOutOfBoundsException.class, () -> h.localHashes(tokens, 0, 8, new long[2], 1));
        assertThrows(IndexOutOfBoundsException.class, () -> h.hashBlocks(tokens, 0, 8, new long[2], new long[1]));
        assertThrows(IndexOutOfBoundsException.class, () -> h.chainHashes(new long[2], 0, 3, false, 0, new long[3], 0));
        assertThrows(IndexOutOfBoundsException.class, () -> h.chainHashes(new long[3], 0, 3, false, 0, new long[3], 1));
        assertThrows(IllegalArgumentException.class, () -> h.localHashes(tokens, 0, 8, new long[1][]));
        assertThrows(NullPointerException.class, () -> h.localHashes(null));
    }

    @ParameterizedTest
    @EnumSource(
            value = Implementation.class,
            names = {"NATIVE", "PORTABLE"})
    void blockSizeBelowOneIsRejected(Implementation impl) {
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> BlockHasher.builder().blockSize(0).implementation(impl).build());
        assertTrue(e.getMessage().contains("block_size"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> BlockHasher.builder().blockSize(-3));
        assertThrows(
                IllegalArgumentException.class,
                () -> BlockHasher.builder().implementation(impl).build());
        assertThrows(IllegalArgumentException.class, () -> h(impl, 4).blockCount(-1));
    }

    @ParameterizedTest
    @EnumSource(
            value = Implementation.class,
            names = {"NATIVE", "PORTABLE"})
    void blockSizeOneAndBlockSizeLargerThanInput(Implementation impl) {
        assertEquals(5, h(impl, 1).localHashes(new int[5]).length);
        assertEquals(0, h(impl, Integer.MAX_VALUE).localHashes(new int[5]).length);
    }
}
