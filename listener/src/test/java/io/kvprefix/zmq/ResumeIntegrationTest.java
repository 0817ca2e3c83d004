package io.kvprefix.zmq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.BlockHasher;
import io.kvprefix.IndexConfig;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.testing.TestScale;
import io.kvprefix.zmq.SubscriberStats.Counter;
import io.kvprefix.zmq.testing.PythonPublisher;
import io.kvprefix.zmq.testing.Threads;
import io.kvprefix.zmq.testing.Truth;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A router restart against a real publisher in another process (vllm_publisher.py, the wire format
 * of vLLM's ZmqEventPublisher): a subscriber applies batches 0..99, snapshots the index with its
 * position and goes away; the engine publishes 100..179 to nobody; a new subscriber on the restored
 * index asks the replay socket for 99 onwards (not 0; 99 is the saved batch, whose hash the snapshot
 * holds and whose bytes must come back) and ends equal to the oracle fed the whole stream. When the engine's buffer no longer reaches 100, the engine's workers are cleared and it
 * counts as a resync, and the index ends equal to the oracle fed up to 99, cleared, and fed from
 * the first batch the buffer still had.
 */
class ResumeIntegrationTest {
    private static final String SPEC = """
            {"seed": %d, "engines": [
             {"name": "A", "encoding": "array", "replay": "plain", "ranks": [0, 1], "batches": 300,
              "restart_at": 100, "down_batches": 80, "buffer": %d}
            ]}""";

    @TempDir
    Path dir;

    @Test
    void aRestartedRouterAsksForWhatItMissedOnly() throws Exception {
        Run r = run(10_000);
        // from 99, the saved batch, whose bytes must come back (its hash is in the snapshot), not from 0
        assertEquals(List.of("REPLAY A 99 99"), r.afterTheRestart(), r.why());
        assertEquals(0, r.counts().get(Counter.RESYNCS), r.why());
        assertEquals(0, r.counts().get(Counter.LATE_JOINS), r.why());
        assertTrue(r.counts().get(Counter.REPLAYED_BATCHES) >= 80, r.why());
        r.compare(-1, -1);
    }

    @Test
    void aBufferThatNoLongerReachesBackClearsTheWorkersAsAResync() throws Exception {
        Run r = run(50); // when asked, the buffer holds 130..179
        assertEquals(List.of("REPLAY A 99 130"), r.afterTheRestart(), r.why());
        assertEquals(1, r.counts().get(Counter.RESYNCS), r.why());
        assertEquals(1, r.counts().get(Counter.REPLAY_FAILURES), r.why());
        r.compare(100, 130);
    }

    /** What one restart left: the restored index, the publisher's truth and log, the second subscriber's counts. */
    record Run(PrefixIndex index, Truth truth, List<String> replays, SubscriberStats.Counts counts, String why) {
        /**
         * The replay requests after the first subscriber's start-up request from 0 (docs/LISTENER.md
         * section 3, rule 2), which is the first one: the restarted router must never ask from 0.
         */
        List<String> afterTheRestart() {
            assertTrue(!replays.isEmpty() && replays.get(0).startsWith("REPLAY A 0 "), why);
            return replays.stream().filter(l -> !l.startsWith("REPLAY A 0 ")).toList();
        }

        /** The index equals the oracle fed from the truth (batches before {@code lostFrom}, a clear, batches from {@code resumeAt}). */
        void compare(long lostFrom, long resumeAt) {
            try (PrefixIndex oracle = PrefixIndex.heap(IndexConfig.defaults())) {
                truth.feed(oracle, "A", rank -> Worker.of(1, rank.orElse(0)), lostFrom, resumeAt);
                assertEquals(oracle.stats().blocksPerWorker(), index.stats().blocksPerWorker(), why);
                Map<String, BlockHasher> hashers = new HashMap<>();
                int nonEmpty = 0;
                for (Truth.Query q : truth.queries()) {
                    BlockHasher h = hashers.computeIfAbsent(
                            q.blockSize() + "/" + q.lora(),
                            k -> BlockHasher.builder()
                                    .blockSize(q.blockSize())
                                    .loraName(q.lora())
                                    .build());
                    MatchResult got = new MatchResult();
                    MatchResult want = new MatchResult();
                    index.match(q.tokens(), 0, q.tokens().length, h, q.mm(), got);
                    oracle.match(q.tokens(), 0, q.tokens().length, h, q.mm(), want);
                    assertEquals(want.scores(), got.scores(), why);
                    if (lostFrom < 0) { // the publisher's own simulated cache
                        assertEquals(q.depth(), got.depthOf(Worker.of(1, q.rank())), why);
                    }
                    nonEmpty += got.isEmpty() ? 0 : 1;
                }
                // some seeds leave few matching queries after the publisher's own clears: 5 keep the check from being
                // empty
                assertTrue(nonEmpty >= 5, "too few queries matched anything (" + nonEmpty + ") " + why);
            } finally {
                index.close();
            }
        }
    }

    private Run run(int buffer) throws Exception {
        long seed = TestScale.seed();
        Path file = dir.resolve("index.snap");
        io.kvprefix.zmq.ResumePoint at;
        try (PythonPublisher pub = new PythonPublisher(dir, SPEC.formatted(seed & Long.MAX_VALUE, buffer))) {
            EngineEndpoint engine = EngineEndpoint.of(pub.ports("A").pubEndpoint(), 1)
                    .withReplay(pub.ports("A").replayEndpoint());
            try (PrefixIndex first = PrefixIndex.create(IndexConfig.defaults());
                    KvEventSubscriber sub = KvEventSubscriber.builder(first).build()) {
                sub.addEngine(engine);
                awaitSeq(sub, engine, 99, pub); // the publisher holds batch 100 until this subscriber leaves
                sub.snapshot(file);
                at = sub.resumePoint(engine.endpoint()).orElseThrow();
            }
            PrefixIndex restored = PrefixIndex.restore(file, IndexConfig.defaults());
            // the snapshot names the exact batch (issue 31 item 5): the resume checks the engine still has it
            assertEquals(
                    "1 99 0,1 " + Long.toHexString(at.batchHash().orElseThrow()),
                    restored.snapshotMetadata().get("kvprefix.zmq.engine:" + engine.endpoint()));
            SubscriberStats.Counts counts;
            try (KvEventSubscriber sub = KvEventSubscriber.builder(restored)
                    .resumeFrom(restored.snapshotMetadata())
                    .replayTimeout(Duration.ofSeconds(5))
                    .build()) {
                sub.addEngine(engine);
                long last = pub.awaitDone(60).get("A");
                assertEquals(299, last);
                awaitSeq(sub, engine, last, pub);
                counts = sub.stats().engine(engine.endpoint()).orElseThrow().counts();
            }
            Threads.assertNoneAlive("kvprefix-zmq-", 5_000);
            List<String> replays =
                    pub.stderr().lines().filter(l -> l.startsWith("REPLAY ")).toList();
            return new Run(
                    restored, Truth.read(pub.truth()), replays, counts, TestScale.replay(seed) + " " + pub.stderr());
        }
    }

    private static void awaitSeq(KvEventSubscriber sub, EngineEndpoint engine, long seq, PythonPublisher pub)
            throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (true) {
            var s = sub.stats().engine(engine.endpoint()).orElseThrow();
            if (s.lastSeq() == seq && s.pendingBatches() == 0 && s.state().equals("live")) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the subscriber did not reach batch " + seq + ": "
                        + sub.stats().toJson() + "\npublisher stderr:\n" + pub.stderr());
            }
            Thread.sleep(10);
        }
    }
}
