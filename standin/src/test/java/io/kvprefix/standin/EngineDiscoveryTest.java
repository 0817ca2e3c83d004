package io.kvprefix.standin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.IndexConfig;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.zmq.EngineDiscovery;
import io.kvprefix.zmq.EngineEndpoint;
import io.kvprefix.zmq.EnginesFile;
import io.kvprefix.zmq.KvEventSubscriber;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Engines found, not listed (docs/LISTENER.md section 5): the stand-in answers vLLM's
 * {@code GET /kv_event_sources}; {@link EngineDiscovery} reads it (and vLLM's other shapes), and a
 * watched {@link EnginesFile} subscribes an added engine, and unsubscribes a removed one, clearing
 * its blocks, without a restart.
 */
class EngineDiscoveryTest {
    @TempDir
    Path dir;

    @Test
    void vllmsAnswerShapesAreRead() {
        // vllm tests/entrypoints/serve/kv_events: a bare array, replay_endpoint None, a wildcard bind
        List<EngineEndpoint> a = EngineDiscovery.sources(
                "[{\"data_parallel_rank\":1,\"endpoint\":\"tcp://0.0.0.0:41002\",\"replay_endpoint\":null,"
                        + "\"topic\":\"kv-events\"},{\"data_parallel_rank\":0,\"endpoint\":\"tcp://*:41001\","
                        + "\"replay_endpoint\":\"tcp://*:42001\",\"topic\":\"\"}]",
                "10.0.0.5",
                7,
                "vllm");
        assertEquals(
                List.of(
                        new EngineEndpoint("tcp://10.0.0.5:41002", 7, OptionalInt.of(1), Optional.empty(), "kv-events"),
                        new EngineEndpoint(
                                "tcp://10.0.0.5:41001", 7, OptionalInt.of(0), Optional.of("tcp://10.0.0.5:42001"), "")),
                a);
        List<EngineEndpoint> wrapped = EngineDiscovery.sources(
                "{\"sources\":[{\"data_parallel_rank\":0,\"endpoint\":\"tcp://10.0.0.9:5557\"}]}", "h", 3, "sglang");
        assertEquals(
                List.of(new EngineEndpoint(
                        "tcp://10.0.0.9:5557", 3, OptionalInt.of(0), Optional.empty(), "", "sglang")),
                wrapped);
        assertThrows(IllegalArgumentException.class, () -> EngineDiscovery.sources("{\"x\":1}", "h", 1, "vllm"));
        assertThrows(IllegalArgumentException.class, () -> EngineDiscovery.Spec.parse("http://h:1=x"));
        assertThrows(IllegalArgumentException.class, () -> EngineDiscovery.Spec.parse("tcp://h:1=1"));
        assertEquals(
                5, EngineDiscovery.Spec.parse("http://h:80=5,format=sglang").workerId());
    }

    @Test
    void aWatchedFileAddsAndRemovesEnginesWithoutARestart() throws Exception {
        try (Standin standin = Standin.start(StandinSettings.builder()
                        .engines(2)
                        .firstWorker(41)
                        .model("m1")
                        .timeScale(0.02)
                        .build());
                PrefixIndex index = PrefixIndex.create(IndexConfig.defaults());
                KvEventSubscriber sub = KvEventSubscriber.builder(index).build()) {
            Standin.BoundEngine a = standin.engines().get(0);
            Standin.BoundEngine b = standin.engines().get(1);
            List<EngineEndpoint> found = EngineDiscovery.discover(
                    EngineDiscovery.Spec.parse("http://127.0.0.1:" + a.http() + "=41"), Duration.ofSeconds(30));
            assertEquals(1, found.size(), found.toString());
            assertEquals("tcp://127.0.0.1:" + a.events(), found.get(0).endpoint());
            assertEquals(
                    Optional.of("tcp://127.0.0.1:" + a.replay()), found.get(0).replayEndpoint());

            Path file = dir.resolve("engines.txt");
            Files.writeString(file, "# the engines\nhttp://127.0.0.1:" + a.http() + "=41\n");
            try (EnginesFile watched = EnginesFile.watch(file, sub, Duration.ofMillis(100))) {
                assertEquals(1, watched.engines().size());
                completeUntil(a.http(), 1, () -> index.blockCount(Worker.of(41)) > 0, "engine 41's blocks");
                // engine b listed directly, engine a removed: a's blocks go, b's come
                Files.writeString(
                        file, "tcp://127.0.0.1:" + b.events() + "=42,replay=tcp://127.0.0.1:" + b.replay() + "\n");
                await(
                        () -> watched.engines().size() == 1
                                && watched.engines().get(0).workerId() == 42,
                        "the file read again");
                assertEquals(0, index.blockCount(Worker.of(41)), "a removed engine's blocks are cleared");
                completeUntil(b.http(), 2, () -> index.blockCount(Worker.of(42)) > 0, "engine 42's blocks");
                Files.writeString(file, "http://127.0.0.1:1=43\n"); // nobody there: pending, asked again
                await(() -> watched.pending().size() == 1 && watched.engines().isEmpty(), "the unreachable line");
                assertEquals(0, index.blockCount(Worker.of(42)));
                long[] c = watched.counters();
                assertEquals(2, c[1], "added");
                assertEquals(2, c[2], "removed");
            }
        }
    }

    private static void complete(int port, int seed) throws Exception {
        int[] p = StandinApiTest.prompt(seed, 64);
        HttpResponse<String> r = Http.post(
                port,
                "/v1/completions",
                "{\"model\":\"m1\",\"prompt\":" + StandinApiTest.ids(p) + ",\"max_tokens\":2}");
        assertEquals(200, r.statusCode(), r.body());
    }

    /**
     * Sends completions with new prompts until {@code condition} holds: a subscriber that has just
     * connected may miss the first batch (ZMQ drops what a publisher sends before the subscription
     * arrives), and only a later batch shows it the gap that its replay then fills
     * (docs/LISTENER.md section 3).
     */
    private static void completeUntil(int port, int seed, BooleanSupplier condition, String what) throws Exception {
        long deadline = System.nanoTime() + 120_000_000_000L; // generous: the machine is shared
        for (int s = seed; !condition.getAsBoolean(); s += 100) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            complete(port, s);
            long retry = System.nanoTime() + 2_000_000_000L;
            while (!condition.getAsBoolean() && System.nanoTime() < retry) {
                Thread.sleep(20);
            }
        }
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + 120_000_000_000L; // generous: the machine is shared
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(20);
        }
        assertTrue(condition.getAsBoolean());
    }
}
