package io.kvprefix.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kvprefix.BlockHasher;
import io.kvprefix.nats.FleetConnection;
import io.kvprefix.nats.testing.DynamoWorker;
import io.kvprefix.nats.testing.NatsServer;
import io.kvprefix.standin.testing.StandinProcess;
import io.nats.client.Connection;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.OptionalLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kvprefix serve --dynamo}: the engines' KV events reach the router from a Dynamo deployment's
 * event plane (a real {@code nats-server}, a stand-in Dynamo worker publishing Dynamo's messages for
 * one stand-in engine's worker id), not from the engines' sockets, and route a request to the engine
 * that holds its prefix.
 */
class DynamoFeedTest {
    @Test
    void eventsFromDynamosEventPlaneRouteByCache(@TempDir Path dir) throws Exception {
        try (NatsServer nats = new NatsServer(dir);
                StandinProcess engines = StandinProcess.start("--engines", "2", "--time-scale", "0.05")) {
            Connection c = FleetConnection.open(nats.url(), "kvprefix-test-dynamo-worker");
            try (Serve serve = Serve.start(
                    engines.engines().stream()
                            .map(StandinProcess.Engine::httpOnly)
                            .toList(),
                    o -> o.dynamo(nats.url(), "dynamo", "backend", false, null))) {
                StandinProcess.Engine target = engines.engine(1);
                String w = target.worker() + "/0";
                int[] tokens = IntStream.rangeClosed(50_000, 50_069).toArray(); // 4 full blocks of 16
                long[] local = BlockHasher.builder().blockSize(16).build().localHashes(tokens);
                DynamoWorker worker = new DynamoWorker(c, "dynamo", "backend", target.worker(), false);
                worker.stored(0, "device", OptionalLong.empty(), new long[] {91, 92, 93, 94}, local, false);
                String body = Serve.completion(50_000, 50_069, "\"max_tokens\":2");
                Serve.await(
                        "Dynamo's event brought " + w + "'s blocks",
                        60,
                        () -> EngineLossTest.depth(serve, body, w) >= 4);
                HttpResponse<String> r = serve.post("/v1/completions", body);
                assertEquals(200, r.statusCode(), r.body());
                assertEquals(w, r.headers().firstValue("x-kvprefix-worker").orElseThrow());
                assertEquals(
                        "4", r.headers().firstValue("x-kvprefix-cached-blocks").orElseThrow());
            } finally {
                c.close();
            }
        }
    }
}
