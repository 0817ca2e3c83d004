package io.kvprefix.nats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.nats.testing.Fleet;
import io.kvprefix.testing.TestScale;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fleet's stream lost under it (docs/FLEET.md sections 3 and 4), against a real nats-server and
 * the vLLM-shaped publisher: deleted by an operator, or gone with a server restarted without its
 * store. Before the fix the replicas skipped the new stream's first messages as "already applied" and
 * the relay retried one frame forever; now the relay creates the stream again and has every engine
 * replay from its start, the replicas clear and read the new stream from its start, both count it,
 * and every replica answers as the oracle fed the engines' full history.
 */
class FleetStreamLossTest {
    private static final String SPEC = """
            {"seed": %d, "engines": [
             {"name": "A", "encoding": "array", "replay": "plain", "ranks": null, "batches": 600},
             {"name": "B", "encoding": "map", "replay": "topic", "topic": "kv@B", "ranks": [0, 1], "batches": 600,
              "signed": false}]}""";

    @TempDir
    Path dir;

    private static String spec() {
        return SPEC.formatted(TestScale.seed() & Long.MAX_VALUE);
    }

    @Test
    void aDeletedStreamIsCreatedAgainAndRefilledFromTheEngines() throws Exception {
        lose(f -> f.connection.jetStreamManagement().deleteStream(Fleet.STREAM));
    }

    @Test
    void aServerRestartedWithoutItsStoreIsRefilledFromTheEngines() throws Exception {
        lose(f -> f.server.restartWithoutStore());
    }

    /** How the stream is lost. */
    private interface Loss {
        void apply(Fleet f) throws Exception;
    }

    private void lose(Loss loss) throws Exception {
        String why = " " + TestScale.replay(TestScale.seed());
        try (Fleet f = new Fleet(dir, spec())) {
            var r1 = f.startReplica("replica-1", b -> b.streamCheck(Duration.ofMillis(200)));
            var r2 = f.startReplica("replica-2", b -> b.streamCheck(Duration.ofMillis(200)));
            try (EventRelay relay = EventRelay.builder(f.connection, f.stream)
                    .ackTimeout(Duration.ofMillis(300))
                    .streamCheck(Duration.ofMillis(200))
                    .build()) {
                relay.addEngine(f.engine("A", 1));
                relay.addEngine(f.engine("B", 2));
                f.awaitApplied(r1, "A", 100);
                f.awaitApplied(r2, "B", 100);
                loss.apply(f);
                Fleet.await(
                        () -> relay.stats().streamResets() >= 1,
                        () -> "the relay refills the new stream: "
                                + relay.stats().toJson());
                f.awaitConverged();
                for (var r : new Fleet.Replica[] {r1, r2}) {
                    ReplicaStats s = r.replica().stats();
                    assertTrue(s.streamResets() >= 1, r.name() + " counted the new stream: " + s.toJson() + why);
                    assertTrue(!s.streamGone(), s.toJson());
                }
                for (RelayStats.EngineStats e : relay.stats().engines()) {
                    assertNull(
                            e.lastError(),
                            "recovered: no error left standing: "
                                    + relay.stats().toJson());
                }
            }
            f.assertEveryReplicaMatchesTheOracle(false);
        }
    }

    /** With no relay to create it again, a replica says its stream is gone (stale) instead of serving on. */
    @Test
    void aReplicaWhoseStreamIsGoneSaysSo() throws Exception {
        try (Fleet f = new Fleet(dir, spec())) {
            var r1 = f.startReplica("replica-1", b -> b.streamCheck(Duration.ofMillis(200)));
            assertEquals(false, r1.replica().stats().streamGone());
            f.connection.jetStreamManagement().deleteStream(Fleet.STREAM);
            Fleet.await(
                    () -> r1.replica().stats().streamGone(),
                    () -> "the replica notices: " + r1.replica().stats().toJson());
            f.stream.ensure(f.connection); // made anew (another creation time)
            Fleet.await(
                    () -> !r1.replica().stats().streamGone()
                            && r1.replica().stats().streamResets() == 1,
                    () -> "the replica takes the new stream up: "
                            + r1.replica().stats().toJson());
        }
    }
}
