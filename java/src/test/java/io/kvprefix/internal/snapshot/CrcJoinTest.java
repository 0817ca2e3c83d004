package io.kvprefix.internal.snapshot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.kvprefix.testing.TestScale;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

/**
 * {@link SnapshotReader#crcJoin}, which lets a restore compute a section's CRC32C in pieces on every
 * core: joined at every cut, the pieces' CRCs give the whole one's as {@link CRC32C} computes it.
 */
class CrcJoinTest {
    private static int crc(byte[] b, int from, int to) {
        CRC32C c = new CRC32C();
        c.update(b, from, to - from);
        return (int) c.getValue();
    }

    @Test
    void piecesJoinedAreTheWhole() {
        long seed = TestScale.seed();
        SplittableRandom r = new SplittableRandom(seed);
        for (int round = 0; round < TestScale.iterations(200, 5000); round++) {
            byte[] b = new byte[r.nextInt(0, 20_000)];
            r.nextBytes(b);
            int whole = crc(b, 0, b.length);
            int joined = 0; // of no bytes
            for (int from = 0; from < b.length; ) {
                int to = Math.min(b.length, from + 1 + r.nextInt(5000));
                joined = SnapshotReader.crcJoin(joined, crc(b, from, to), to - from);
                from = to;
            }
            assertEquals(whole, joined, "round " + round + ", " + TestScale.replay(seed));
        }
    }

    @Test
    void theLengthMatters() { // a join that ignored the second piece's length would pass the test above only by luck
        byte[] b = new byte[64];
        new SplittableRandom(1).nextBytes(b);
        int a = crc(b, 0, 32);
        int c = crc(b, 32, 64);
        assertEquals(crc(b, 0, 64), SnapshotReader.crcJoin(a, c, 32));
        assertNotEquals(crc(b, 0, 64), SnapshotReader.crcJoin(a, c, 31));
    }
}
