package io.kvprefix.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.service.EngineSpec;
import io.kvprefix.standin.testing.StandinProcess;
import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code serve}'s readiness by the rule {@code listen}'s has (docs/METRICS.md section 2): an engine
 * whose HTTP side is up (a stand-in process) but whose event publisher and replay socket never
 * answer. Before, {@code /health} said ok with nothing applied once the start-up replay was given
 * up; now that feed is declared absent, named in the 503's reason, and only
 * {@code readyWithAbsentEngines} ({@code --ready-with-absent-engines}) makes that ready.
 */
class AbsentFeedReadinessTest {
    @Test
    void anAbsentFeedKeepsServeNotReadyUnlessAllowed() throws Exception {
        int events;
        int replay;
        try (ServerSocket a = new ServerSocket(0);
                ServerSocket b = new ServerSocket(0)) {
            events = a.getLocalPort(); // nobody publishes or answers there
            replay = b.getLocalPort();
        }
        for (boolean allowed : new boolean[] {false, true}) {
            try (StandinProcess s = StandinProcess.start("--worker-id", "1", "--time-scale", "0.05")) {
                EngineSpec spec =
                        EngineSpec.parse("1=http://127.0.0.1:" + s.engine(0).http() + ",events=tcp://127.0.0.1:"
                                + events + ",replay=tcp://127.0.0.1:" + replay);
                try (Serve serve = Serve.start(
                        List.of(spec),
                        o -> o.replayTimeout(Duration.ofMillis(200)).readyWithAbsentEngines(allowed))) {
                    String want = allowed ? "ok" : "unavailable";
                    String absent = "engine tcp://127.0.0.1:" + events + " absent";
                    Serve.await("/health settles on " + want, 60, () -> {
                        try {
                            var h = Serve.json(serve.get("/health").body());
                            return h.get("status").asText().equals(want)
                                    && (allowed || h.get("reason").asText().equals(absent));
                        } catch (Exception e) {
                            throw new AssertionError(e);
                        }
                    });
                    HttpResponse<String> r = serve.get("/health");
                    assertEquals(allowed ? 200 : 503, r.statusCode(), r.body());
                    if (!allowed) {
                        assertTrue(r.body().contains("\"reason\":\"" + absent + "\""), r.body());
                    }
                }
            }
        }
    }
}
