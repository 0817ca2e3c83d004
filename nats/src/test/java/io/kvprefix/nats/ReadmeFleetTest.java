package io.kvprefix.nats;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kvprefix.IndexConfig;
import io.kvprefix.PrefixIndex;
import io.kvprefix.nats.testing.Fleet;
import io.kvprefix.nats.testing.FleetOracle;
import io.kvprefix.testing.TestScale;
import io.kvprefix.zmq.EngineEndpoint;
import io.nats.client.Connection;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's fleet snippet, run as written against a real nats-server and the vLLM-shaped
 * publisher process: a relay fills the default stream from one engine and stops; a replica started
 * afterwards rebuilds the index from the stream alone and answers as the oracle fed the engine's
 * history. DocumentsTest (core module) checks that the README's block is this code.
 */
class ReadmeFleetTest {
    @TempDir
    Path dir;

    @Test
    void theReadmesRelayAndReplicaRunAsWritten() throws Exception {
        long seed = TestScale.seed();
        String why = " " + TestScale.replay(seed); // every failure names the seed, to run it again
        String spec = """
                {"seed": %d, "engines": [
                 {"name": "A", "encoding": "array", "replay": "plain", "ranks": [0, 1], "batches": 300, "early": 5}]}""".formatted(seed & Long.MAX_VALUE);
        try (Fleet f = new Fleet(dir, spec);
                PrefixIndex index = PrefixIndex.create(IndexConfig.defaults())) {
            String natsUrl = f.server.url();
            String engineSpec = f.engine("A", 7).toSpec();
            // README, section "A fleet of replicas on NATS JetStream":
            Connection nats = FleetConnection.open(natsUrl, "router-1"); // or your own jnats Connection
            try (EventRelay relay =
                    EventRelay.builder(nats, FleetStream.defaults()).build()) { // in the relay
                relay.addEngine(EngineEndpoint.parse(engineSpec)); // "tcp://10.0.0.5:5557=7,replay=tcp://10.0.0.5:6557"
                Map<String, Long> last = f.publisher.awaitDone(60);
                Fleet.await(
                        () -> relay.stats().batches() == last.get("A") + 1,
                        () -> "relay: " + relay.stats().toJson() + why);
            }
            try (StreamReplica replica =
                    StreamReplica.builder(index, nats, FleetStream.defaults()).build()) { // in each router
                Fleet.await(
                        () -> replica.stats().appliedSeq() == replica.stats().streamLastSeq()
                                && replica.stats().appliedSeq() > 0,
                        () -> "replica: " + replica.stats().toJson() + why);
                try (FleetOracle oracle = new FleetOracle(f.publisher.truth(), Map.of("A", 7L))) {
                    oracle.assertSame(index, replica.stats().toJson() + why); // index.match(...) as usual meanwhile
                    assertEquals(0, replica.stats().resyncs(), replica.stats().toJson() + why);
                }
            }
            nats.close();
        }
    }
}
