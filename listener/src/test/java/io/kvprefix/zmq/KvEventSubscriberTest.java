package io.kvprefix.zmq;

import static io.kvprefix.zmq.VllmEventDecoderTest.list;
import static io.kvprefix.zmq.VllmEventDecoderTest.pack;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.zmq.SubscriberStats.Counter;
import io.kvprefix.zmq.SubscriberStats.EventKind;
import io.kvprefix.zmq.internal.EngineSync;
import io.kvprefix.zmq.testing.Threads;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/** The subscriber against engines faked in this JVM with JeroMQ: frames, engines at run time, replay timeouts, restarts, shutdown. */
class KvEventSubscriberTest {
    private static final Object NIL = null;

    private final ZContext zmq = new ZContext(1);
    private final PrefixIndex index = PrefixIndex.heap(IndexConfig.defaults());

    @AfterEach
    void tearDown() throws InterruptedException {
        zmq.close();
        index.close();
        Threads.assertNoneAlive("kvprefix-zmq-", 5_000);
    }

    /** A publisher as vLLM's: XPUB (so the test can wait until the subscription has arrived), frames [topic, seq, payload]. */
    final class FakeEngine implements AutoCloseable {
        final ZMQ.Socket pub = zmq.createSocket(SocketType.XPUB);
        final String endpoint;

        FakeEngine() {
            this("tcp://127.0.0.1:*");
        }

        FakeEngine(String bind) {
            pub.setLinger(0);
            // JeroMQ releases a closed socket's port asynchronously: a rebind may need a moment
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (true) {
                try {
                    pub.bind(bind);
                    break;
                } catch (org.zeromq.ZMQException e) {
                    if (System.nanoTime() > deadline) {
                        throw e;
                    }
                    Thread.onSpinWait();
                }
            }
            endpoint = pub.getLastEndpoint();
        }

        void awaitSubscriber() {
            pub.setReceiveTimeOut(10_000);
            byte[] sub = pub.recv();
            assertTrue(sub != null && sub.length > 0 && sub[0] == 1, "no subscription arrived");
        }

        void send(long seq, byte[] payload) {
            frames("".getBytes(StandardCharsets.UTF_8), seq(seq), payload);
        }

        void frames(byte[]... frames) {
            for (int i = 0; i < frames.length; i++) {
                assertTrue(pub.send(frames[i], i < frames.length - 1 ? ZMQ.SNDMORE : 0));
            }
        }

        @Override
        public void close() {
            pub.close();
        }
    }

    static byte[] seq(long s) {
        return ByteBuffer.allocate(8).putLong(s).array();
    }

    static byte[] store(long hash, int... tokens) {
        return pack(list(1.0, list(list("BlockStored", list(hash), NIL, list((Object[]) box(tokens)), 1, NIL, NIL))));
    }

    static Integer[] box(int[] a) {
        Integer[] out = new Integer[a.length];
        for (int i = 0; i < a.length; i++) {
            out[i] = a[i];
        }
        return out;
    }

    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(5);
        }
    }

    static SubscriberStats.EngineStats engine(KvEventSubscriber sub, String endpoint) {
        return sub.stats().engine(endpoint).orElseThrow();
    }

    @Test
    void malformedFramesAreCountedAndSkipped() throws Exception {
        try (FakeEngine e = new FakeEngine();
                KvEventSubscriber sub = KvEventSubscriber.builder(index).build()) {
            sub.addEngine(EngineEndpoint.of(e.endpoint, 1));
            e.awaitSubscriber();
            e.send(0, store(100, 1));
            e.frames(new byte[0], new byte[] {1, 2, 3}, store(101, 2)); // sequence frame of 3 bytes
            e.frames(new byte[0], seq(1)); // two frames
            e.frames(new byte[0], seq(1), store(102, 3), new byte[] {9}); // four frames
            e.frames(new byte[0], seq(-1), store(103, 4)); // a sequence number past 2^63
            e.send(1, new byte[] {(byte) 0xc1, 1, 2}); // not msgpack: batch 1 is consumed
            e.send(
                    2,
                    pack(list(
                            1.0,
                            list(
                                    list("BlockTeleported"),
                                    list("BlockStored", list(104L), NIL, list(5), 1, NIL, NIL)))));
            await("batch 2", () -> engine(sub, e.endpoint).lastSeq() == 2);
            SubscriberStats.Counts c = engine(sub, e.endpoint).counts();
            assertEquals(2, c.issues(DecodeIssue.BAD_SEQUENCE), sub.stats().toJson());
            assertEquals(2, c.issues(DecodeIssue.BAD_FRAMES), sub.stats().toJson());
            assertEquals(1, c.issues(DecodeIssue.BAD_MSGPACK), sub.stats().toJson());
            assertEquals(
                    1, c.issues(DecodeIssue.UNKNOWN_EVENT_TYPE), sub.stats().toJson());
            assertEquals(6, c.decodeErrors());
            assertEquals(2, c.events(EventKind.STORED, EventStatus.OK));
            assertEquals(0, c.get(Counter.GAPS));
            assertEquals(3, c.get(Counter.BATCHES));
            assertEquals(2, index.blockCount(Worker.of(1)));
        }
    }

    @Test
    void enginesComeAndGoAtRunTime() throws Exception {
        try (FakeEngine r0 = new FakeEngine();
                FakeEngine r1 = new FakeEngine();
                FakeEngine other = new FakeEngine();
                KvEventSubscriber sub = KvEventSubscriber.builder(index).build()) {
            sub.addEngine(EngineEndpoint.of(r0.endpoint, 5).withDpRank(0));
            sub.addEngine(EngineEndpoint.of(r1.endpoint, 5).withDpRank(1));
            r0.awaitSubscriber();
            r1.awaitSubscriber();
            r0.send(0, store(1, 1));
            r1.send(0, store(2, 2));
            await("both ranks", () -> index.blockCount(Worker.of(5, 0)) == 1 && index.blockCount(Worker.of(5, 1)) == 1);

            IllegalArgumentException twice = assertThrows(
                    IllegalArgumentException.class, () -> sub.addEngine(EngineEndpoint.of(r0.endpoint, 6)));
            assertTrue(twice.getMessage().contains("subscribed already"), twice.getMessage());
            assertFalse(sub.removeEngine("tcp://127.0.0.1:1"));

            // rank 1 goes away: its blocks are cleared, rank 0 (same worker id) keeps its own
            assertTrue(sub.removeEngine(r1.endpoint));
            assertEquals(0, index.blockCount(Worker.of(5, 1)));
            assertEquals(1, index.blockCount(Worker.of(5, 0)));
            assertEquals(1, sub.engines().size());

            // an engine added later
            sub.addEngine(EngineEndpoint.of(other.endpoint, 6));
            other.awaitSubscriber();
            other.send(0, store(3, 3));
            await("the late engine", () -> index.blockCount(Worker.of(6)) == 1);

            // the last engine of worker 5 goes: the worker is removed from the index
            assertTrue(sub.removeEngine(r0.endpoint));
            assertFalse(index.workers().contains(Worker.of(5, 0)));
            // totals keep the removed engines' counts
            assertEquals(3, sub.stats().total().events(EventKind.STORED, EventStatus.OK));
            assertEquals(1, sub.stats().engines().size());
        }
    }

    @Test
    void anUnansweredReplayIsGivenUpAndTheWorkerResynced() throws Exception {
        try (FakeEngine e = new FakeEngine()) {
            ZMQ.Socket silentRouter = zmq.createSocket(SocketType.ROUTER);
            silentRouter.setLinger(0);
            silentRouter.bind("tcp://127.0.0.1:*");
            try (KvEventSubscriber sub = KvEventSubscriber.builder(index)
                    .replayTimeout(Duration.ofMillis(300))
                    .build()) {
                sub.addEngine(EngineEndpoint.of(e.endpoint, 1).withReplay(silentRouter.getLastEndpoint()));
                e.awaitSubscriber();
                e.send(0, store(1, 1));
                e.send(2, store(3, 3)); // batch 1 lost
                await("the replay to be given up", () -> engine(sub, e.endpoint).lastSeq() == 2);
                SubscriberStats.Counts c = engine(sub, e.endpoint).counts();
                assertEquals(1, c.get(Counter.GAPS));
                // the start-up request, asked again and again for batch 1 once batch 0 had come live:
                // MAX_FUTILE_ATTEMPTS unanswered requests in a row, then the range is given up
                assertEquals(EngineSync.MAX_FUTILE_ATTEMPTS, c.get(Counter.REPLAYS));
                assertEquals(1, c.get(Counter.REPLAY_FAILURES));
                assertEquals(1, c.get(Counter.RESYNCS));
                assertEquals(0, c.get(Counter.LATE_JOINS), "batch 0 was the first: nothing lost at the start");
                assertEquals(1, index.blockCount(Worker.of(1)), "cleared, then batch 2 applied");
                // the requests really went out, as vLLM's ROUTER expects them: [identity, "", start seq],
                // from 0 at the start and, for the gap, from batch 0 (the last applied, whose bytes must come back)
                // Each attempt uses a new DEALER, closed without linger when it times out: on a loaded
                // machine a request queued before its connection's handshake completed is dropped with
                // it (the attempt was futile either way), so at least one, and at most every, request
                // is on the wire.
                silentRouter.setReceiveTimeOut(2000);
                ZMQ.Socket r = silentRouter;
                int received = 0;
                for (byte[] identity; received < EngineSync.MAX_FUTILE_ATTEMPTS && (identity = r.recv()) != null; ) {
                    assertTrue(r.hasReceiveMore(), "request " + received + ": identity, then more frames");
                    assertEquals(0, r.recv().length);
                    assertEquals(0L, ByteBuffer.wrap(r.recv()).getLong());
                    assertFalse(r.hasReceiveMore());
                    received++;
                }
                assertTrue(received >= 1, "no replay request reached the engine's ROUTER");
                e.send(3, store(4, 4));
                await("live again", () -> engine(sub, e.endpoint).lastSeq() == 3);
                assertEquals("live", engine(sub, e.endpoint).state());
            } finally {
                silentRouter.close();
            }
        }
    }

    @Test
    void anEngineRestartingOnTheSamePortIsReconnectedAndCleared() throws Exception {
        String endpoint;
        try (KvEventSubscriber sub = KvEventSubscriber.builder(index)
                .reconnectMax(Duration.ofMillis(200))
                .build()) {
            try (FakeEngine first = new FakeEngine()) {
                endpoint = first.endpoint;
                sub.addEngine(EngineEndpoint.of(endpoint, 1));
                first.awaitSubscriber();
                first.send(0, store(1, 1));
                first.send(1, store(2, 2));
                first.send(2, store(3, 3));
                await("first life", () -> engine(sub, endpoint).lastSeq() == 2);
                assertEquals(3, index.blockCount(Worker.of(1)));
            }
            try (FakeEngine second = new FakeEngine(endpoint)) { // a new process: sequence numbers start again
                second.awaitSubscriber();
                second.send(0, store(9, 9));
                await(
                        "second life",
                        () -> engine(sub, endpoint).counts().get(Counter.RESTARTS) == 1
                                && engine(sub, endpoint).lastSeq() == 0);
                assertEquals(1, index.blockCount(Worker.of(1)), "the old blocks are gone");
            }
        }
    }

    @Test
    void closeStopsEveryThreadAndSocket() throws Exception {
        int unused;
        try (ServerSocket s = new ServerSocket(0)) {
            unused = s.getLocalPort();
        }
        KvEventSubscriber sub = KvEventSubscriber.builder(index).build();
        // nothing listens there: both engines keep reconnecting until close
        sub.addEngine(EngineEndpoint.of("tcp://127.0.0.1:" + unused, 1).withReplay("tcp://127.0.0.1:" + unused));
        sub.addEngine(EngineEndpoint.of("tcp://localhost:" + unused, 2).withReplay("tcp://localhost:" + unused));
        assertFalse(Threads.alive("kvprefix-zmq-").isEmpty());
        assertEquals("replaying", sub.stats().engines().get(0).state(), "asked at once, unanswered");
        sub.close();
        Threads.assertNoneAlive("kvprefix-zmq-", 5_000);
        sub.close(); // idempotent
        assertThrows(IllegalStateException.class, () -> sub.addEngine(EngineEndpoint.of("tcp://127.0.0.1:9", 1)));
        assertEquals(2, sub.stats().engines().size(), "stats still readable after close");
    }
}
