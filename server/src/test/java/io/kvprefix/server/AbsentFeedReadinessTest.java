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
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

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

    /**
     * The stand-in engine publishes its events, but its replay endpoint is a ROUTER socket that takes
     * the requests and never answers. {@code serve} follows {@code listen}'s one rule (docs/METRICS.md
     * section 2): not ready, naming the engine {@code replaying} as {@code listen} does, while its
     * start-up replay is outstanding (before, serve said only "a replay is outstanding"), never ok
     * before it is declared absent, and then not ready for that either without the flag.
     */
    @Test
    void aReplayThatNeverAnswersKeepsServeNotReadyByListensRule() throws Exception {
        try (ZContext ctx = new ZContext();
                StandinProcess s = StandinProcess.start("--worker-id", "1", "--time-scale", "0.05")) {
            ZMQ.Socket silent = ctx.createSocket(SocketType.ROUTER);
            int replay = silent.bindToRandomPort("tcp://127.0.0.1"); // takes requests, never answers
            String engine = "tcp://127.0.0.1:" + s.engine(0).events();
            EngineSpec spec = EngineSpec.parse(
                    "1=" + s.engine(0).url() + ",events=" + engine + ",replay=tcp://127.0.0.1:" + replay);
            try (Serve serve = Serve.start(List.of(spec), o -> o.replayTimeout(Duration.ofSeconds(1)))) {
                List<String> reasons = new java.util.ArrayList<>();
                Serve.await("the engine is declared absent", 60, () -> {
                    try {
                        var h = Serve.json(serve.get("/health").body());
                        assertEquals("unavailable", h.get("status").asText(), "ready before it synced: " + h);
                        String why = h.get("reason").asText();
                        if (reasons.isEmpty() || !reasons.getLast().equals(why)) {
                            reasons.add(why);
                        }
                        return why.equals("engine " + engine + " absent");
                    } catch (Exception e) {
                        throw new AssertionError(e);
                    }
                });
                assertTrue(
                        reasons.contains("engine " + engine + " replaying"),
                        "listen's words while the replay is outstanding: " + reasons);
            }
        }
    }
}
