package io.kvprefix.nats.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.nats.internal.Frames.Record;
import io.kvprefix.zmq.EngineEndpoint;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Frame format 1 (docs/FLEET.md section 2) and the relay's per-engine outbox, without a server. */
class FramesTest {
    private static final EngineEndpoint E = EngineEndpoint.parse("tcp://127.0.0.1:5557=7,replay=tcp://127.0.0.1:5558");

    @Test
    void aBodyReadsBackAsItsRecordsAndItsBytesAreAsSpecified() {
        List<Record> rs = List.of(new Record(5, new byte[] {1, 2}), Record.clear(), new Record(0, new byte[0]));
        byte[] body = Frames.body(rs);
        assertArrayEquals(
                new byte[] {'B', 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 2, 1, 2, 'C', 'B', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
                },
                body);
        List<Record> back = Frames.records(body);
        assertEquals(3, back.size());
        assertEquals(5, back.get(0).seq());
        assertArrayEquals(new byte[] {1, 2}, back.get(0).payload());
        assertTrue(back.get(1).isClear());
        assertEquals(0, back.get(2).payload().length);
    }

    @Test
    void badBodiesAreRefusedWithTheirFault() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Frames.records(new byte[0]))
                .getMessage()
                .contains("empty frame"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Frames.records(new byte[] {'X'}))
                .getMessage()
                .contains("unknown kind 88"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Frames.records(new byte[] {'B', 0, 0}))
                .getMessage()
                .contains("cut short"));
        byte[] tooLong = Frames.body(List.of(new Record(1, new byte[4])));
        tooLong[12] = 9; // claims 9 bytes of payload, has 4
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Frames.records(tooLong))
                .getMessage()
                .contains("length 9 of 4 bytes left"));
        // no random byte string crashes the reader with anything but IllegalArgumentException
        Random rnd = new Random(42);
        for (int i = 0; i < 10_000; i++) {
            byte[] b = new byte[rnd.nextInt(40)];
            rnd.nextBytes(b);
            if (b.length > 0) {
                b[0] = (byte) (rnd.nextBoolean() ? 'B' : 'C');
            }
            try {
                Frames.records(b);
            } catch (IllegalArgumentException expected) {
                // refused
            }
        }
    }

    @Test
    void anOutboxKeepsOneFrameInFlightAndSendsTheSameFrameAgain() throws Exception {
        Outbox o = new Outbox(E, "S.7.k", 10, 100, () -> {});
        o.add(new Record(3, new byte[] {1}));
        Outbox.InFlight f = o.take(0);
        assertNotNull(f);
        assertEquals(10, f.firstRec());
        assertEquals(Frames.messageId(Frames.engineKey(E), 10), f.id());
        assertEquals("3", f.headers().getFirst(Frames.LAST_SEQ));
        assertEquals(E.toSpec(), f.headers().getFirst(Frames.ENGINE));
        o.add(new Record(4, new byte[] {2}));
        o.add(Record.clear());
        assertNull(o.take(1), "one frame in flight");
        o.failed(f, 5, "no ack");
        assertNull(o.take(4), "not before its retry is due");
        assertEquals(f, o.take(5), "the same frame, the same id");
        o.acked(f, true);
        Outbox.InFlight g = o.take(6);
        assertEquals(11, g.firstRec(), "the next frame holds what queued meanwhile");
        assertEquals(2, g.records().size());
        assertNull(g.headers().getFirst(Frames.LAST_SEQ), "a clear ends it");
        assertEquals("12", g.headers().getFirst(Frames.LAST_REC));
        o.acked(g, false);
        assertTrue(o.idle());
        long[] c = o.counters();
        assertEquals(2, c[0]); // frames
        assertEquals(2, c[1]); // batches
        assertEquals(1, c[2]); // clears
        assertEquals(1, c[3]); // duplicate acks
        assertEquals(1, c[4]); // retries
    }

    @Test
    void aBatchTooLargeForAFrameBecomesAClear() throws Exception {
        Outbox o = new Outbox(E, "S.7.k", 0, 100, () -> {});
        o.add(new Record(0, new byte[Frames.MAX_FRAME_BYTES + 1]));
        Outbox.InFlight f = o.take(0);
        assertEquals(1, f.records().size());
        assertTrue(f.records().get(0).isClear());
        assertEquals(1, o.counters()[8]);
    }

    @Test
    void engineKeysAreStableAndDiffer() {
        assertEquals(16, Frames.engineKey(E).length());
        assertEquals(Frames.engineKey(E), Frames.engineKey(EngineEndpoint.parse("tcp://127.0.0.1:5557=9")));
        assertTrue(!Frames.engineKey(E).equals(Frames.engineKey(EngineEndpoint.parse("tcp://127.0.0.1:5559=7"))));
    }
}
