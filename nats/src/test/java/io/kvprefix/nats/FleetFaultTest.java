package io.kvprefix.nats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.nats.testing.Fleet;
import io.kvprefix.nats.testing.RelayMain;
import io.kvprefix.testing.TestScale;
import io.kvprefix.zmq.SubscriberStats.Counter;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fleet against a real nats-server (Debian's 2.9.10, JetStream on, file storage in a temporary
 * folder, a free loopback port) and engines stood in for by the vLLM-shaped publisher process
 * (listener/src/test/python/vllm_publisher.py: vLLM's ZMQ framing, msgpack payloads and replay
 * protocol). After each fault every replica must answer the truth file's queries exactly as the test
 * oracle fed the engines' full history, and the stream must hold every engine's batches once each, in
 * order.
 *
 * <p>Engines: A (array encoding, no dp rank, 5 batches published before anyone subscribed: fetched
 * by the relay's start-up replay from 0) and B (map encoding, replay answers with a topic frame,
 * topic {@code kv@B}, batches alternating dp ranks 0 and 1).
 */
class FleetFaultTest {
    private static final String SPEC = """
            {"seed": %d, "engines": [
             {"name": "A", "encoding": "array", "replay": "plain", "ranks": null, "batches": %d, "early": 5 %s},
             {"name": "B", "encoding": "map", "replay": "topic", "topic": "kv@B", "ranks": [0, 1], "batches": %d,
              "signed": false}]}""";

    @TempDir
    Path dir;

    private static String spec(int batches, String extraA) {
        return SPEC.formatted(TestScale.seed() & Long.MAX_VALUE, batches, extraA, batches);
    }

    /**
     * An engine gap (A's 100..139 never sent live) filled by the relay's replay; the engines shared
     * between two relays (one each); two replicas agree with the oracle.
     */
    @Test
    void anEngineGapIsFilledByReplayAndTwoReplicasMatchTheOracle() throws Exception {
        String why = TestScale.replay(TestScale.seed());
        try (Fleet f = new Fleet(dir, spec(300, ", \"drop\": [[100, 139]]"))) {
            var r1 = f.startReplica("replica-1");
            var a = f.engine("A", 1);
            var b = f.engine("B", 2);
            try (EventRelay relayA = EventRelay.builder(f.connection, f.stream).build();
                    EventRelay relayB =
                            EventRelay.builder(f.connection, f.stream).build()) {
                relayA.addEngine(a);
                relayB.addEngine(b);
                var r2 = f.startReplica("replica-2");
                f.awaitConverged();
                RelayStats s = relayA.stats();
                var counts = s.subscriber().engines().get(0).counts();
                assertTrue(counts.get(Counter.REPLAYED_BATCHES) >= 40, s.toJson() + why);
                assertEquals(0, s.subscriber().total().get(Counter.RESYNCS), s.toJson() + why);
                assertEquals(0, s.retries(), s.toJson());
                assertEquals(300, relayB.stats().batches(), relayB.stats().toJson());
                f.assertEveryReplicaMatchesTheOracle();
                assertTrue(r2.replica().stats().lagCount() > 0, "lags measured");
                assertEquals(0, r1.replica().stats().resyncs());
            }
        }
    }

    /** The relay killed with SIGKILL mid-stream and started again: nothing lost, nothing twice. */
    @Test
    void aRelayKilledMidStreamIsRestartedAndNothingIsLostOrRepeated() throws Exception {
        try (Fleet f = new Fleet(dir, spec(600, ""))) {
            var r1 = f.startReplica("replica-1");
            var r2 = f.startReplica("replica-2");
            f.engine("A", 1);
            f.engine("B", 2);
            RelayMain.Handle first =
                    RelayMain.start(f.dir().resolve("relay-1.log"), f.server.url(), Fleet.STREAM, f.engineSpecs());
            try (first) {
                f.awaitApplied(r1, "A", 150);
                first.kill();
            }
            Thread.sleep(300); // the engines go on publishing into nobody's socket
            long before = f.appliedSeq(r2, "A");
            try (RelayMain.Handle second =
                    RelayMain.start(f.dir().resolve("relay-2.log"), f.server.url(), Fleet.STREAM, f.engineSpecs())) {
                f.awaitConverged();
                String stats = second.stop();
                assertTrue(second.log().contains("resumes at record"), second.log());
                assertTrue(stats.contains("\"resyncs\":0"), stats);
                assertTrue(before < 599, "killed mid-stream: A had " + before);
            }
            f.assertEveryReplicaMatchesTheOracle();
        }
    }

    /**
     * nats-server killed (SIGKILL: frames in flight are lost with it) and started again on the same
     * port and store mid-stream: clients reconnect and resume, and the relay sends again what was not
     * acknowledged.
     */
    @Test
    void theServerRestartedMidStreamLosesNothing() throws Exception {
        try (Fleet f = new Fleet(dir, spec(600, ""))) {
            var r1 = f.startReplica("replica-1");
            var r2 = f.startReplica("replica-2");
            f.engine("A", 1);
            f.engine("B", 2);
            // acks are waited for 300 ms and the server stays away for 1 s: frames in flight then are sent again
            try (EventRelay relay = EventRelay.builder(f.connection, f.stream)
                    .ackTimeout(Duration.ofMillis(300))
                    .build()) {
                for (var e : f.engineSpecs()) {
                    relay.addEngine(io.kvprefix.zmq.EngineEndpoint.parse(e));
                }
                f.awaitApplied(r1, "A", 150);
                long pid = f.server.pid();
                f.server.kill();
                Thread.sleep(1000);
                f.server.start();
                assertTrue(pid != f.server.pid(), "a new server process");
                f.awaitConverged();
                RelayStats s = relay.stats();
                assertEquals(0, s.subscriber().total().get(Counter.RESYNCS), s.toJson());
                assertTrue(s.retries() > 0, "frames were sent again: " + s.toJson());
            }
            assertEquals(0, r1.replica().stats().resyncs(), r1.replica().stats().toJson());
            assertEquals(0, r2.replica().stats().resyncs(), r2.replica().stats().toJson());
            f.assertEveryReplicaMatchesTheOracle();
        }
    }

    /** A replica killed mid-stream (its index gone) and started again: it rebuilds from the stream. */
    @Test
    void aReplicaKilledAndRestartedCatchesUp() throws Exception {
        try (Fleet f = new Fleet(dir, spec(600, ""))) {
            var r1 = f.startReplica("replica-1");
            var r2 = f.startReplica("replica-2");
            f.engine("A", 1);
            f.engine("B", 2);
            try (EventRelay relay = EventRelay.builder(f.connection, f.stream).build()) {
                for (var e : f.engineSpecs()) {
                    relay.addEngine(io.kvprefix.zmq.EngineEndpoint.parse(e));
                }
                f.awaitApplied(r2, "A", 150);
                f.killReplica(r2);
                Thread.sleep(300);
                var r2again = f.startReplica("replica-2-restarted");
                f.awaitConverged();
                assertTrue(r2again.replica().stats().messages() > 0);
            }
            assertEquals(0, r1.replica().stats().resyncs());
            f.assertEveryReplicaMatchesTheOracle();
        }
    }

    /**
     * A replica that starts mid-stream, after the stream's retention (3 s here) dropped the early
     * messages, bootstraps from the newest snapshot a sibling published to the object store (it
     * could not start from the stream: its start is gone), is fed the rest of the stream from the
     * message after the snapshot, and answers as the oracle. The control: a replica started at the
     * same moment without snapshots resyncs and misses the early events.
     */
    @Test
    void aLateReplicaBootstrapsFromTheSnapshot() throws Exception {
        String spec = """
                {"seed": %d, "interval": 0.005, "engines": [
                 {"name": "A", "encoding": "array", "replay": "plain", "ranks": null, "batches": 1200},
                 {"name": "B", "encoding": "map", "replay": "topic", "topic": "kv@B", "ranks": [0, 1],
                  "batches": 1200, "signed": false}]}""".formatted(TestScale.seed() & Long.MAX_VALUE);
        String why = " " + TestScale.replay(TestScale.seed());
        var shortLived = FleetStream.named(Fleet.STREAM).withMaxAge(Duration.ofSeconds(3));
        IndexImages images = IndexImages.of(IndexConfig.defaults());
        try (Fleet f = new Fleet(dir, spec, shortLived)) {
            var r1 = f.startReplica("replica-1", b -> b.snapshots(images, Duration.ofMillis(300)));
            var a = f.engine("A", 1);
            var b = f.engine("B", 2);
            try (EventRelay relay = EventRelay.builder(f.connection, f.stream).build()) {
                relay.addEngine(a);
                relay.addEngine(b);
                Fleet.await(
                        () -> firstSeq(f) > 1 && r1.replica().stats().snapshotsPublished() >= 2,
                        () -> "retention and snapshots: " + r1.replica().stats().toJson());
                long firstLeft = firstSeq(f);
                var late = f.startReplica("replica-late", x -> x.snapshots(images, Duration.ofMinutes(10)));
                var blind = f.startReplica("replica-without-snapshots");
                long boot = late.replica().stats().bootstrapSeq();
                assertTrue(f.appliedSeq(r1, "A") < 1199, "started mid-stream" + why);
                assertTrue(
                        boot >= firstLeft - 1, "bootstrapped at " + boot + ", the stream starts at " + firstLeft + why);
                f.awaitConverged();
                assertTrue(late.replica().stats().messages() > 0, "fed the rest of the stream" + why);
                assertEquals(
                        0,
                        late.replica().stats().resyncs(),
                        late.replica().stats().toJson() + why);
                assertEquals(
                        0, r1.replica().stats().resyncs(), r1.replica().stats().toJson() + why);
                // it starts at the retention's edge: more may age out before it reads them (a second resync)
                assertTrue(
                        blind.replica().stats().resyncs() >= 1,
                        blind.replica().stats().toJson() + why);
                // The counters tell what the final answers cannot (the engines' caches turn over, so
                // the oracle's queries hardly reach back to the dropped messages): the snapshot's
                // history plus the rest is the whole history, each batch once.
                long blindOk = blind.index().eventCount(EventStatus.OK);
                for (EventStatus st : EventStatus.values()) {
                    assertEquals(r1.index().eventCount(st), late.index().eventCount(st), st.wireName() + why);
                }
                assertTrue(blindOk < r1.index().eventCount(EventStatus.OK), "the control lost the early events" + why);
                f.killReplica(blind);
            }
            f.assertEveryReplicaMatchesTheOracle(false);
        }
    }

    private static long firstSeq(Fleet f) {
        try {
            return f.streamRange()[0];
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
