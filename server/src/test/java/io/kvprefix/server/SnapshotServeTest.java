package io.kvprefix.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.MatchResult;
import io.kvprefix.Worker;
import io.kvprefix.service.EngineSpec;
import io.kvprefix.standin.testing.StandinProcess;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kvprefix serve --snapshot FILE}: the index is saved when the router stops and restored when it
 * starts, so a restarted router knows what the engines held even when an engine cannot replay it any
 * more (here: it is gone); a file that cannot be restored is kept aside, never overwritten, and the
 * router starts with an empty index.
 */
class SnapshotServeTest {
    @Test
    void aRestartedRouterKnowsWhatTheEnginesHeld(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("index.kvps");
        StandinProcess.Engine e;
        String prompt = Serve.completion(60_000, 60_069, "\"max_tokens\":2");
        try (StandinProcess engines = StandinProcess.start("--time-scale", "0.05")) {
            e = engines.engine(0);
            try (Serve serve = Serve.start(List.of(e.spec()), o -> o.snapshot(file, Duration.ofHours(1)))) {
                HttpResponse<String> r = serve.post("/v1/completions", prompt);
                assertEquals(200, r.statusCode(), r.body());
                Serve.await(
                        "the index has the blocks",
                        30,
                        () -> EngineLossTest.depth(serve, prompt, e.worker() + "/0") >= 4);
            } // saved here
            assertTrue(Files.size(file) > 0, "saved at the end");
        } // the engine is gone: nothing can be replayed from it
        EngineSpec gone = e.spec();
        try (Serve again = Serve.start(List.of(gone), o -> o.snapshot(file, Duration.ofHours(1)))) {
            // the engine is down, so the router would not route; the index itself answers
            MatchResult m = again.service
                    .index()
                    .match(IntStream.rangeClosed(60_000, 60_069).toArray());
            assertEquals(1, m.size(), "one worker holds it");
            assertEquals(Worker.of(e.worker()), m.worker(0));
            assertEquals(4, m.depth(0), "restored from the snapshot");
        }
    }

    @Test
    void aFileThatCannotBeRestoredIsKeptAside(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("index.kvps"), "not a snapshot");
        EngineSpec nowhere = EngineSpec.parse("3=http://127.0.0.1:1,events=tcp://127.0.0.1:1");
        try (Serve serve = Serve.start(List.of(nowhere), o -> o.snapshot(file, Duration.ofHours(1)))) {
            Path aside = dir.resolve("index.kvps.refused");
            assertArrayEquals("not a snapshot".getBytes(StandardCharsets.UTF_8), Files.readAllBytes(aside));
            assertEquals(0, serve.service.index().stats().blocks(), "an empty index");
        }
        assertTrue(Files.exists(dir.resolve("index.kvps.refused")), "still kept after the router saved its own");
    }
}
