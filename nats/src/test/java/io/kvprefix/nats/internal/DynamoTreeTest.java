package io.kvprefix.nats.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kvprefix.testing.ThreadAllocation;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/** {@link DynamoTree}'s MessagePack reading of a Dynamo event message held to the message's own bytes. */
class DynamoTreeTest {
    @Test
    void byteStringsAreReadWhole() throws IOException {
        MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
        p.packArrayHeader(2)
                .packBinaryHeader(3)
                .writePayload(new byte[] {1, 2, 3})
                .packLong(7);
        Object tree = DynamoTree.msgpack(p.toByteArray());
        List<?> l = (List<?>) tree;
        assertArrayEquals(new byte[] {1, 2, 3}, (byte[]) l.get(0));
        assertEquals(7L, l.get(1));
    }

    /**
     * A byte string whose header claims 2 GiB in a message of a few bytes: refused as malformed without
     * allocating the claim (msgpack's readPayload sizes its array from the header; the JVM refuses
     * an array that large outright and the reading thread dies).
     */
    @Test
    void aLyingByteStringHeaderIsRefusedWithoutAllocatingItsClaim() throws Exception {
        ThreadAllocation allocation = ThreadAllocation.counter();
        assumeTrue(allocation != null, "this JVM has no per-thread allocation counter");
        MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
        p.packArrayHeader(1).packBinaryHeader(Integer.MAX_VALUE);
        byte[] head = p.toByteArray();
        byte[] message = Arrays.copyOf(head, head.length + 3);
        assertThrows(IOException.class, () -> DynamoTree.msgpack(message)); // warm, and the answer
        long before = allocation.bytes();
        IOException e = assertThrows(IOException.class, () -> DynamoTree.msgpack(message));
        long allocated = allocation.bytes() - before;
        assertTrue(allocated < 1 << 20, allocated + " bytes allocated reading a " + message.length + "-byte message");
        assertTrue(e.getMessage().contains("claims"), e.getMessage());
    }
}
