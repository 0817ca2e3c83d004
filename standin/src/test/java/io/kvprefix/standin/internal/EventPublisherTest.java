package io.kvprefix.standin.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.Medium;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.zmq.DecodedBatch;
import io.kvprefix.zmq.EngineEndpoint;
import io.kvprefix.zmq.KvEventSubscriber;
import io.kvprefix.zmq.SubscriberStats;
import io.kvprefix.zmq.VllmEventDecoder;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

/**
 * The KV events as kvprefix's own listener reads them: every batch the publisher sends, in both of
 * vLLM's encodings, decoded by {@link VllmEventDecoder} (no issue) and applied by a
 * {@link KvEventSubscriber} to a {@link PrefixIndex} whose depths then equal what was stored; the
 * replay socket answers exactly as vLLM's {@code _service_replay} and fills what a late subscriber
 * missed; a replay buffer shorter than the gap answers only what it still holds.
 */
class EventPublisherTest {
    private static final int BS = 16;
    private static final Duration WAIT = Duration.ofSeconds(60);

    /** A chain of {@code n} blocks: tokens and engine hashes (half of them >= 2^63, sent as uint64). */
    record Chain(int[] tokens, long[] hashes) {
        static Chain random(SplittableRandom rnd, int n) {
            int[] t = new int[n * BS];
            for (int i = 0; i < t.length; i++) {
                t[i] = rnd.nextInt(50_000);
            }
            long[] h = new long[n];
            for (int i = 0; i < n; i++) {
                h[i] = rnd.nextLong();
            }
            return new Chain(t, h);
        }

        WireEvent.Stored stored(int from, int to) {
            return new WireEvent.Stored(
                    from > 0,
                    from > 0 ? hashes[from - 1] : 0,
                    Arrays.copyOfRange(hashes, from, to),
                    Arrays.copyOfRange(tokens, from * BS, to * BS),
                    BS);
        }
    }

    @ParameterizedTest
    @EnumSource(EventEncoding.class)
    void everyBatchDecodesCleanlyIntoTheIndex(EventEncoding encoding) throws Exception {
        SplittableRandom rnd = new SplittableRandom(42);
        Chain a = Chain.random(rnd, 6);
        Chain b = Chain.random(rnd, 3);
        try (ZContext ctx = new ZContext();
                EventPublisher pub = new EventPublisher(ctx, "127.0.0.1", 0, 0, encoding, "", 100, "test-pub");
                PrefixIndex index = PrefixIndex.create(IndexConfig.defaults());
                KvEventSubscriber sub = KvEventSubscriber.builder(index).build()) {
            EngineEndpoint engine = endpoint(pub, 3);
            sub.addEngine(engine);
            long base = awaitLive(pub, sub, engine);
            pub.publish(List.of(a.stored(0, 4))); // a fresh chain
            pub.publish(List.of(a.stored(4, 6), b.stored(0, 3))); // a continuation and a second root
            pub.publish(List.of(new WireEvent.Removed(new long[] {a.hashes()[5], a.hashes()[4]})));
            awaitApplied(sub, engine, base + 3);
            assertEquals(4, index.match(a.tokens()).depthOf(Worker.of(3)), "a's blocks 0..3 held, 4 and 5 evicted");
            assertEquals(3, index.match(b.tokens()).depthOf(Worker.of(3)));
            pub.publish(List.of(new WireEvent.Cleared()));
            awaitApplied(sub, engine, base + 4);
            assertEquals(0, index.match(a.tokens()).depthOf(Worker.of(3)), "cleared");
            SubscriberStats.Counts c = sub.stats().total();
            assertEquals(0, c.decodeErrors(), sub.stats().toJson());
            assertEquals(
                    9, c.get(SubscriberStats.Counter.BLOCKS_STORED), sub.stats().toJson());
        }
    }

    @ParameterizedTest
    @EnumSource(EventEncoding.class)
    void theDecoderSeesEveryFieldAsVllmSendsIt(EventEncoding encoding) throws Exception {
        Chain a = Chain.random(new SplittableRandom(7), 2);
        long[] big = {-1L, Long.MIN_VALUE}; // 2^64 - 1 and 2^63 on the wire
        byte[] payload = encoding.encode(
                1.5,
                List.of(
                        a.stored(0, 2),
                        new WireEvent.Stored(true, big[0], new long[] {big[1]}, new int[BS], BS),
                        new WireEvent.Removed(big)),
                0);
        DecodedBatch batch = new VllmEventDecoder(EngineEndpoint.of("tcp://127.0.0.1:1", 9)).decode(payload);
        assertEquals(List.of(), batch.issues(), "no decode issue");
        assertEquals(3, batch.events().size());
        assertEquals(1.5, batch.timestamp(), 0.0);
        KvEvent.StoredTokens first = (KvEvent.StoredTokens) batch.events().get(0);
        assertEquals(Worker.of(9), first.worker());
        assertTrue(first.parentHash().isEmpty());
        assertArrayEquals(a.tokens(), first.tokenIds());
        assertEquals(BS, first.blockSize());
        assertArrayEquals(a.hashes(), first.blockHashes());
        assertEquals(Medium.GPU, first.medium());
        assertNull(first.loraName());
        KvEvent.StoredTokens second = (KvEvent.StoredTokens) batch.events().get(1);
        assertEquals(-1L, second.parentHash().getAsLong(), "a parent of 2^64 - 1");
        assertArrayEquals(new long[] {Long.MIN_VALUE}, second.blockHashes());
        assertArrayEquals(big, ((KvEvent.Removed) batch.events().get(2)).blockHashes());
    }

    @Test
    void aLateSubscriberGetsEverythingThroughReplay() throws Exception {
        SplittableRandom rnd = new SplittableRandom(3);
        List<Chain> chains = new ArrayList<>();
        try (ZContext ctx = new ZContext();
                EventPublisher pub =
                        new EventPublisher(ctx, "127.0.0.1", 0, 0, EventEncoding.MAP, "", 100, "test-pub");
                PrefixIndex index = PrefixIndex.create(IndexConfig.defaults())) {
            for (int i = 0; i < 5; i++) {
                Chain c = Chain.random(rnd, 2 + i);
                chains.add(c);
                pub.publish(List.of(c.stored(0, c.hashes().length)));
            }
            await(() -> pub.published() == 5, "published");
            // nobody was subscribed: every batch went nowhere live; the replay buffer has them all
            try (KvEventSubscriber sub = KvEventSubscriber.builder(index).build()) {
                EngineEndpoint engine = endpoint(pub, 1);
                sub.addEngine(engine);
                awaitApplied(sub, engine, 5);
                for (Chain c : chains) {
                    assertEquals(c.hashes().length, index.match(c.tokens()).depthOf(Worker.of(1)));
                }
                assertEquals(5, sub.stats().total().get(SubscriberStats.Counter.REPLAYED_BATCHES));
                assertEquals(0, sub.stats().total().get(SubscriberStats.Counter.RESYNCS));
            }
        }
    }

    @Test
    void aReplayBufferShorterThanTheGapLeavesTheOldestBatchesOut() throws Exception {
        SplittableRandom rnd = new SplittableRandom(5);
        try (ZContext ctx = new ZContext();
                EventPublisher pub = new EventPublisher(ctx, "127.0.0.1", 0, 0, EventEncoding.MAP, "", 2, "test-pub");
                PrefixIndex index = PrefixIndex.create(IndexConfig.defaults())) {
            Chain first = Chain.random(rnd, 3);
            pub.publish(List.of(first.stored(0, 3)));
            for (int i = 0; i < 4; i++) {
                Chain c = Chain.random(rnd, 2);
                pub.publish(List.of(c.stored(0, 2)));
            }
            await(() -> pub.published() == 5, "published");
            try (KvEventSubscriber sub = KvEventSubscriber.builder(index).build()) {
                EngineEndpoint engine = endpoint(pub, 1);
                sub.addEngine(engine);
                awaitApplied(sub, engine, 5);
                assertEquals(0, index.match(first.tokens()).depthOf(Worker.of(1)), "batch 0 left the buffer");
                // the buffer starts past what was asked for: the subscriber counts a late join, applies the rest
                assertEquals(
                        1,
                        sub.stats().total().get(SubscriberStats.Counter.LATE_JOINS),
                        sub.stats().toJson());
                assertEquals(2, sub.stats().total().get(SubscriberStats.Counter.REPLAYED_BATCHES));
            }
        }
    }

    @Test
    void theReplaySocketAnswersAsVllmsServiceReplay() throws Exception {
        try (ZContext ctx = new ZContext();
                EventPublisher pub =
                        new EventPublisher(ctx, "127.0.0.1", 0, 0, EventEncoding.ARRAY, "", 3, "test-pub")) {
            SplittableRandom rnd = new SplittableRandom(11);
            List<byte[]> sent = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                pub.publish(List.of(Chain.random(rnd, 1).stored(0, 1)));
            }
            await(() -> pub.published() == 5, "published");
            ZMQ.Socket dealer = ctx.createSocket(SocketType.DEALER);
            dealer.setReceiveTimeOut(30_000);
            dealer.connect("tcp://127.0.0.1:" + pub.replayPort());
            dealer.sendMore(new byte[0]);
            dealer.sendMore(new byte[] {1, 2});
            dealer.send(new byte[0]); // three frames after the delimiter: not vLLM's request shape, ignored
            dealer.sendMore(new byte[0]);
            dealer.send(ByteBuffer.allocate(8).putLong(1).array()); // from 1: the buffer holds 2, 3, 4
            for (long seq = 2; seq <= 4; seq++) {
                List<byte[]> m = frames(ZMsg.recvMsg(dealer));
                assertEquals(3, m.size(), "[\"\", seq, payload]");
                assertEquals(0, m.get(0).length);
                assertEquals(seq, ByteBuffer.wrap(m.get(1)).getLong());
                sent.add(m.get(2));
            }
            List<byte[]> end = frames(ZMsg.recvMsg(dealer));
            assertEquals(3, end.size());
            assertArrayEquals(EventPublisher.END_SEQ, end.get(1), "the end marker is -1 as 8 bytes");
            assertEquals(0, end.get(2).length, "with an empty payload");
            dealer.setReceiveTimeOut(300);
            assertNull(ZMsg.recvMsg(dealer), "the malformed request got no answer");
            assertEquals(3, sent.size());
        }
    }

    private static List<byte[]> frames(ZMsg m) {
        List<byte[]> out = new ArrayList<>();
        m.forEach(f -> out.add(f.getData()));
        return out;
    }

    private static EngineEndpoint endpoint(EventPublisher pub, long worker) {
        return EngineEndpoint.parse(
                "tcp://127.0.0.1:" + pub.eventsPort() + "=" + worker + ",replay=tcp://127.0.0.1:" + pub.replayPort());
    }

    /**
     * Waits until the subscriber receives live batches: a PUB socket drops what it sends before the
     * subscription reaches it (ZMQ's late joiner), and a batch lost that way is only found, and
     * replayed, when a later one arrives. Empty clears (no blocks, nothing to change) are sent until
     * one is applied; returns how many batches were sent, the sequence the test's own start at.
     */
    private static long awaitLive(EventPublisher pub, KvEventSubscriber sub, EngineEndpoint engine)
            throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (lastSeq(sub, engine) < 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(
                        "timed out waiting for a live batch: " + sub.stats().toJson());
            }
            pub.publish(List.of(new WireEvent.Cleared()));
            Thread.sleep(50);
        }
        long sent = pub.queued();
        awaitApplied(sub, engine, sent);
        return sent;
    }

    private static long lastSeq(KvEventSubscriber sub, EngineEndpoint engine) {
        return sub.stats()
                .engine(engine.endpoint())
                .map(SubscriberStats.EngineStats::lastSeq)
                .orElse(-1L);
    }

    private static void awaitApplied(KvEventSubscriber sub, EngineEndpoint engine, long batches)
            throws InterruptedException {
        await(
                () -> lastSeq(sub, engine) >= batches - 1,
                () -> "the subscriber applied " + batches + " batches: "
                        + sub.stats().toJson());
    }

    static void await(BooleanSupplier done, String what) throws InterruptedException {
        await(done, () -> what);
    }

    static void await(BooleanSupplier done, Supplier<String> what) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what.get());
            }
            Thread.sleep(5);
        }
    }
}
