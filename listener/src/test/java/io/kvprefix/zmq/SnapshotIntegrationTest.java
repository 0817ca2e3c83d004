package io.kvprefix.zmq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.testing.TestScale;
import io.kvprefix.zmq.SubscriberStats.Counter;
import io.kvprefix.zmq.testing.IndexCheck;
import io.kvprefix.zmq.testing.PythonPublisher;
import io.kvprefix.zmq.testing.Threads;
import io.kvprefix.zmq.testing.Truth;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The snapshot protocol end to end (provisional vLLM PR #57789, docs/LISTENER.md section 8) against
 * a real publisher in another process (listener/src/test/python/vllm_publisher.py, whose snapshot
 * endpoint compacts the very cache it publishes from): an idle engine whose cache outgrew its replay
 * buffer gives a new subscriber its whole cache; a restarted publisher (a new UUID) is cleared and
 * taken again from its own snapshot and live suffix; a damaged snapshot leaves the worker empty and
 * not synced, and readiness says so. Each index is compared with the oracle fed from the truth.
 */
class SnapshotIntegrationTest {
    private static final Duration CATCH_UP = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private static EngineEndpoint endpoint(PythonPublisher pub, String name, long worker) {
        PythonPublisher.Ports p = pub.ports(name);
        return EngineEndpoint.of(p.pubEndpoint(), worker).withSnapshot(p.snapshotEndpoint());
    }

    private static boolean synced(SubscriberStats s, String endpoint, long last, long snapshots) {
        return s.engine(endpoint)
                .map(e -> e.state().equals("live")
                        && e.lastSeq() == last
                        && e.pendingBatches() == 0
                        && e.counts().get(Counter.SNAPSHOTS_APPLIED) >= snapshots
                        && e.counts().get(Counter.HEARTBEATS) >= 2)
                .orElse(false);
    }

    private Path sub(String name) throws java.io.IOException {
        return Files.createDirectories(dir.resolve(name));
    }

    @Test
    void anIdleEngineWhoseCacheOutgrewItsReplayBufferGivesItsWholeCache() throws Exception {
        long seed = TestScale.seed();
        String why = TestScale.replay(seed);
        String spec = """
                {"seed": %d, "engines": [{"name": "S", "encoding": "array", "replay": "plain", "ranks": [0, 1],
                 "batches": 400, "early": 400, "buffer": 50, "clears": false, "snapshot": true}]}""".formatted(seed & Long.MAX_VALUE);
        try (PythonPublisher pub = new PythonPublisher(dir, spec);
                PrefixIndex actual = PrefixIndex.create(IndexConfig.defaults());
                PrefixIndex oracle = PrefixIndex.heap(IndexConfig.defaults());
                KvEventSubscriber sub = KvEventSubscriber.builder(actual).build()) {
            EngineEndpoint engine = endpoint(pub, "S", 3);
            sub.addEngine(engine);
            pub.awaitDone(30);
            Truth truth = Truth.read(pub.truth());
            SubscriberStats stats =
                    IndexCheck.await(sub, s -> synced(s, engine.endpoint(), 399, 1), CATCH_UP, pub::stderr);
            String json = stats.toJson() + " " + why + "\n" + pub.stderr();
            SubscriberStats.Counts c =
                    stats.engine(engine.endpoint()).orElseThrow().counts();
            assertEquals(0, c.get(Counter.BATCHES), "an idle engine publishes no batch " + json);
            assertEquals(1, c.get(Counter.SNAPSHOTS_APPLIED), json);
            assertEquals(0, c.get(Counter.SNAPSHOTS_REFUSED), json);
            assertTrue(pub.stderr().contains("SNAPSHOT S 399 "), json);
            truth.feed(oracle, "S", r -> Worker.of(3, r.orElse(0)), -1, -1);
            assertTrue(oracle.stats().blocks() > 50, "the cache holds more than the replay buffer could " + json);
            int matched = IndexCheck.assertSameAnswers(List.of(truth), actual, oracle, json);
            assertTrue(matched > 20, json);
            assertEquals(null, stats.notReady(false), json);
        }
        Threads.assertNoneAlive("kvprefix-zmq-", 5_000);
    }

    /**
     * {@code early} 120: the new process's first 120 batches reach nobody live, its last 80 do, and the
     * first of them shows the new UUID; {@code early} 200: it publishes nothing live and only its idle
     * heartbeats show the new UUID.
     */
    @ParameterizedTest
    @ValueSource(ints = {120, 200})
    void aRestartedPublisherIsClearedAndTakenAgainFromItsOwnSnapshot(int early) throws Exception {
        long seed = TestScale.seed();
        String why = TestScale.replay(seed);
        String first = """
                {"seed": %d, "engines": [{"name": "S", "encoding": "map", "replay": "none", "ranks": [0, 1],
                 "batches": 150, "snapshot": true}]}""".formatted(seed & Long.MAX_VALUE);
        try (PrefixIndex actual = PrefixIndex.create(IndexConfig.defaults());
                PrefixIndex oracle = PrefixIndex.heap(IndexConfig.defaults());
                KvEventSubscriber sub = KvEventSubscriber.builder(actual).build()) {
            EngineEndpoint engine;
            PythonPublisher.Ports ports;
            long batchesBefore;
            try (PythonPublisher pub = new PythonPublisher(sub("first"), first)) {
                engine = endpoint(pub, "S", 4);
                ports = pub.ports("S");
                sub.addEngine(engine);
                long last = pub.awaitDone(30).get("S");
                batchesBefore = IndexCheck.await(sub, s -> synced(s, engine.endpoint(), last, 1), CATCH_UP, pub::stderr)
                        .engine(engine.endpoint())
                        .orElseThrow()
                        .counts()
                        .get(Counter.BATCHES);
                Truth.read(pub.truth()).feed(oracle, "S", r -> Worker.of(4, r.orElse(0)), -1, -1);
            }
            for (int rank = 0; rank < 2; rank++) {
                oracle.apply(new KvEvent.Cleared(Worker.of(4, rank))); // the restart clears what the first fed
            }
            // the second process publishes `early` batches nobody receives live, the rest live, then idles
            String second = """
                    {"seed": %d, "engines": [{"name": "S", "encoding": "map", "replay": "none", "ranks": [0, 1],
                     "batches": 200, "early": %d, "bind_late": true, "snapshot": true,
                     "ports": {"pub": %d, "snapshot": %d}}]}""".formatted((seed + 1) & Long.MAX_VALUE, early, ports.pub(), ports.snapshot());
            try (PythonPublisher pub = new PythonPublisher(sub("second"), second)) {
                long last = pub.awaitDone(30).get("S");
                SubscriberStats stats =
                        IndexCheck.await(sub, s -> synced(s, engine.endpoint(), last, 2), CATCH_UP, pub::stderr);
                String json = stats.toJson() + " " + why + "\n" + pub.stderr();
                SubscriberStats.Counts c =
                        stats.engine(engine.endpoint()).orElseThrow().counts();
                assertTrue(c.get(Counter.RESTARTS) >= 1, "the new UUID is a restart " + json);
                if (early == 200) {
                    assertEquals(0, c.get(Counter.BATCHES) - batchesBefore, "nothing live from the new one " + json);
                }
                Truth after = Truth.read(pub.truth());
                after.feed(oracle, "S", r -> Worker.of(4, r.orElse(0)), -1, -1);
                IndexCheck.assertSameAnswers(List.of(after), actual, oracle, json);
            }
        }
        Threads.assertNoneAlive("kvprefix-zmq-", 5_000);
    }

    @ParameterizedTest
    @ValueSource(strings = {"truncated", "count", "undecodable"})
    void aDamagedSnapshotFailsClosed(String damage) throws Exception {
        long seed = TestScale.seed();
        String why = damage + " " + TestScale.replay(seed);
        String spec = """
                {"seed": %d, "engines": [{"name": "D", "encoding": "array", "replay": "none", "ranks": [0],
                 "batches": 100, "early": 100, "snapshot": true, "snapshot_damage": "%s"}]}""".formatted(seed & Long.MAX_VALUE, damage);
        try (PythonPublisher pub = new PythonPublisher(dir, spec);
                PrefixIndex actual = PrefixIndex.create(IndexConfig.defaults());
                KvEventSubscriber sub = KvEventSubscriber.builder(actual).build()) {
            EngineEndpoint engine = endpoint(pub, "D", 6);
            sub.addEngine(engine);
            SubscriberStats stats = IndexCheck.await(
                    sub,
                    s -> s.engine(engine.endpoint())
                            .map(e -> e.state().equals("unsynced") && e.counts().get(Counter.HEARTBEATS) >= 2)
                            .orElse(false),
                    CATCH_UP,
                    pub::stderr);
            String json = stats.toJson() + " " + why + "\n" + pub.stderr();
            SubscriberStats.Counts c =
                    stats.engine(engine.endpoint()).orElseThrow().counts();
            assertEquals(1, c.get(Counter.SNAPSHOTS_REFUSED), json);
            assertEquals(0, c.get(Counter.SNAPSHOTS_APPLIED), json);
            assertEquals(Map.of(), nonEmpty(actual.stats().blocksPerWorker()), "nothing of it is kept " + json);
            assertEquals("engine " + engine.endpoint() + " unsynced", stats.notReady(true), json);
            assertEquals(-1, stats.engine(engine.endpoint()).orElseThrow().lastSeq(), json);
        }
        Threads.assertNoneAlive("kvprefix-zmq-", 5_000);
    }

    private static <K> Map<K, Long> nonEmpty(Map<K, ? extends Number> perWorker) {
        java.util.LinkedHashMap<K, Long> out = new java.util.LinkedHashMap<>();
        perWorker.forEach((k, v) -> {
            if (v.longValue() != 0) {
                out.put(k, v.longValue());
            }
        });
        return out;
    }
}
