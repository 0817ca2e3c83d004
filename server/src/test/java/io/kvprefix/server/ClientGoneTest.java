package io.kvprefix.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.service.EngineStatus;
import io.kvprefix.standin.testing.StandinProcess;
import java.io.InputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Clients that go away while their streams are open (docs/SERVE.md section 5, the lifecycle): the
 * router aborts each engine request and counts it cancelled, and the engine stays in routing — the
 * router's own abort of the upstream request is not the engine's failure. Found by the proxy
 * benchmark (docs/SERVE.md section 7), whose idle streams are closed this way between rounds.
 */
class ClientGoneTest {
    @Test
    void streamsClosedByTheirClientsLeaveTheEnginesUp() throws Exception {
        // a decode step of 30 engine seconds: each stream is open, its headers sent, nothing flowing
        try (StandinProcess engines =
                        StandinProcess.start("--engines", "2", "--time-scale", "1", "--speeds", "100,30000000");
                Serve serve = Serve.start(
                        List.of(engines.engine(0).spec(), engines.engine(1).spec()),
                        o -> o.healthInterval(Duration.ofHours(1)))) {
            List<InputStream> open = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                HttpResponse<InputStream> r = serve.http.send(
                        HttpRequest.newBuilder(serve.uri("/v1/completions"))
                                .timeout(Duration.ofSeconds(120))
                                .header("content-type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString(
                                        Serve.completion(100 * i, 100 * i + 63, "\"max_tokens\":100,\"stream\":true")))
                                .build(),
                        HttpResponse.BodyHandlers.ofInputStream());
                assertEquals(200, r.statusCode());
                open.add(r.body());
            }
            Serve.await("8 exchanges open", 60, () -> serve.server.stats().exchanges() == 8);
            for (InputStream in : open) {
                in.close(); // the client goes away
            }
            Serve.await("every exchange ended", 60, () -> serve.server.stats().exchanges() == 0);
            Serve.await(
                    "the in-flight counts are back to 0",
                    60,
                    () -> serve.service.stats().engineInFlight() == 0);
            for (EngineStatus s : serve.service.engines()) {
                assertTrue(s.up(), s.spec() + " left routing: " + s.downReason());
            }
            String metrics = serve.service.scrape();
            assertFalse(metrics.contains("kvprefix_service_engine_down_total{"), metrics);
            assertTrue(metrics.contains("outcome=\"cancelled\""), metrics);
        }
    }
}
