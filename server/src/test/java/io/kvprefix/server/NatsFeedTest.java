package io.kvprefix.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kvprefix.nats.EventRelay;
import io.kvprefix.nats.FleetConnection;
import io.kvprefix.nats.FleetStream;
import io.kvprefix.nats.testing.NatsServer;
import io.kvprefix.standin.testing.StandinProcess;
import io.kvprefix.zmq.EngineEndpoint;
import io.kvprefix.zmq.SubscriberStats;
import io.nats.client.Connection;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kvprefix serve --nats}: the engines' KV events reach the router through a fleet stream (a real
 * {@code nats-server}, and the relay that fills the stream from the stand-in engines' publishers), not
 * through the engines' sockets, and route a request to the engine that holds its prefix.
 */
class NatsFeedTest {
    @Test
    void eventsFromTheFleetStreamRouteByCache(@TempDir Path dir) throws Exception {
        try (NatsServer nats = new NatsServer(dir);
                StandinProcess engines = StandinProcess.start(
                        "--engines", "2", "--time-scale", "0.05", "--enable-prompt-tokens-details")) {
            Connection c = FleetConnection.open(nats.url(), "kvprefix-test-relay");
            try (EventRelay relay =
                            EventRelay.builder(c, FleetStream.defaults()).build();
                    Serve serve = Serve.start(
                            engines.engines().stream()
                                    .map(StandinProcess.Engine::httpOnly)
                                    .toList(),
                            o -> o.nats(nats.url(), FleetStream.DEFAULT_NAME))) {
                for (StandinProcess.Engine e : engines.engines()) {
                    relay.addEngine(EngineEndpoint.parse("tcp://127.0.0.1:" + e.events() + "=" + e.worker()
                            + ",replay=tcp://127.0.0.1:" + e.replay()));
                }
                // the first request's events must reach the relay live
                engines.awaitLive(
                        e -> relay.stats()
                                .subscriber()
                                .engine("tcp://127.0.0.1:" + e.events())
                                .map(SubscriberStats.EngineStats::lastSeq)
                                .orElse(-1L),
                        () -> relay.stats().toJson());
                StandinProcess.Engine target = engines.engine(1);
                String w = target.worker() + "/0";
                String first = Serve.completion(50_000, 50_069, "\"max_tokens\":2");
                HttpResponse<String> direct = serve.http.send(
                        HttpRequest.newBuilder(URI.create(target.url() + "/v1/completions"))
                                .header("content-type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString(first))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                assertEquals(200, direct.statusCode(), direct.body());
                Serve.await(
                        "the stream brought " + w + "'s blocks", 60, () -> EngineLossTest.depth(serve, first, w) >= 4);
                HttpResponse<String> r =
                        serve.post("/v1/completions", Serve.completion(50_000, 50_069, "\"max_tokens\":2"));
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
