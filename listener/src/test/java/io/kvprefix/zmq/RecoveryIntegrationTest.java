package io.kvprefix.zmq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.IndexConfig;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.testing.TestScale;
import io.kvprefix.zmq.SubscriberStats.Counter;
import io.kvprefix.zmq.internal.EngineSync;
import io.kvprefix.zmq.testing.IndexCheck;
import io.kvprefix.zmq.testing.PythonPublisher;
import io.kvprefix.zmq.testing.Threads;
import io.kvprefix.zmq.testing.Truth;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The recovery faults of issue 20, each against real publishers in other processes speaking vLLM's
 * wire format (listener/src/test/python/vllm_publisher.py, modelled on vLLM's
 * vllm/distributed/kv_events.py at 0181ea3173e53eea8cf04a86891488e3dc89bb34): replays longer than the
 * replay ROUTER's send high-water mark, engines that restart and publish past the old numbers (or
 * publish nothing after), engines that are idle when the subscription starts, replay sockets that
 * answer the wrong numbers, and a subscription resumed from a {@link ResumePoint}. Each ends with the
 * subscriber's index answering every query as the oracle fed from the publishers' truth does (the
 * engine's own state, or where a range is truly gone, a resync that says so).
 */
class RecoveryIntegrationTest {
    private static final Duration CATCH_UP = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    /** One engine of a publisher process: its endpoint as the subscriber sees it. */
    private static EngineEndpoint endpoint(PythonPublisher pub, String name, long worker) {
        PythonPublisher.Ports p = pub.ports(name);
        EngineEndpoint e = EngineEndpoint.of(p.pubEndpoint(), worker).withDpRank(0);
        if (p.replayEndpoint() != null) {
            e = e.withReplay(p.replayEndpoint());
        }
        return p.topic().isEmpty() ? e : e.withTopic(p.topic());
    }

    private Path sub(String name) throws java.io.IOException {
        return Files.createDirectories(dir.resolve(name));
    }

    /**
     * BOOT: 4,000 batches published before anyone subscribed, then nothing (a start-up replay of
     * 4,000 through a ROUTER with libzmq's default high-water mark of 1,000). GAP: 2,500 batches not
     * sent live (a gap replay of 2,500, the publisher waits for the request). HWM: 2,500 batches
     * before the subscription through a ROUTER whose high-water mark is 100, so the answer must come
     * in many chunks. No range may be given up.
     */
    @Test
    void replaysLongerThanTheRouterHighWaterMarkArriveWhole() throws Exception {
        long seed = TestScale.seed();
        String why = TestScale.replay(seed);
        String spec = """
                {"seed": %d, "interval": 0.0002, "engines": [
                 {"name": "BOOT", "encoding": "array", "replay": "plain", "ranks": [0], "batches": 4000, "early": 4000},
                 {"name": "GAP", "encoding": "map", "replay": "topic", "topic": "kv@G", "ranks": [0], "batches": 2700,
                  "drop": [[100, 2599]], "pause_after_drop": true},
                 {"name": "HWM", "encoding": "array", "replay": "plain", "ranks": [0], "batches": 2500, "early": 2500,
                  "replay_hwm": 100}
                ]}""".formatted(seed & Long.MAX_VALUE);
        Map<String, Long> workers = Map.of("BOOT", 1L, "GAP", 2L, "HWM", 3L);
        try (PrefixIndex actual = PrefixIndex.create(IndexConfig.defaults());
                PrefixIndex oracle = PrefixIndex.heap(IndexConfig.defaults());
                PythonPublisher pub = new PythonPublisher(dir, spec);
                KvEventSubscriber sub = KvEventSubscriber.builder(actual).build()) {
            Map<String, EngineEndpoint> engines = new LinkedHashMap<>();
            for (String n : workers.keySet()) {
                engines.put(n, endpoint(pub, n, workers.get(n)));
                sub.addEngine(engines.get(n));
            }
            Map<String, Long> last = pub.awaitDone(60);
            SubscriberStats stats = IndexCheck.await(
                    sub,
                    s -> engines.entrySet().stream()
                            .allMatch(e -> IndexCheck.caughtUp(s, e.getValue().endpoint(), last.get(e.getKey()))),
                    CATCH_UP,
                    () -> why + "\n" + pub.stderr());
            String json = stats.toJson() + " " + why;
            for (String n : engines.keySet()) {
                SubscriberStats.Counts c =
                        stats.engine(engines.get(n).endpoint()).orElseThrow().counts();
                assertEquals(0, c.get(Counter.RESYNCS), n + " " + json);
                assertEquals(0, c.get(Counter.LATE_JOINS), n + " " + json);
                assertEquals(0, c.get(Counter.REPLAY_FAILURES), n + " " + json);
                assertEquals(0, c.get(Counter.RESTARTS), n + " " + json);
                assertEquals(0, c.get(Counter.REPLAY_CONTRADICTIONS), n + " " + json);
            }
            SubscriberStats.Counts gap =
                    stats.engine(engines.get("GAP").endpoint()).orElseThrow().counts();
            assertTrue(gap.get(Counter.GAPS) >= 1 && gap.get(Counter.MISSED_BATCHES) >= 2500, json);
            SubscriberStats.Counts hwm =
                    stats.engine(engines.get("HWM").endpoint()).orElseThrow().counts();
            // 2,500 answers through a high-water mark of 100: the ROUTER must have dropped some
            assertTrue(hwm.get(Counter.REPLAYS) >= 3, "the long answer came in chunks: " + json);
            Truth truth = Truth.read(pub.truth());
            for (String n : engines.keySet()) {
                long w = workers.get(n);
                truth.feed(oracle, n, r -> Worker.of(w, 0), -1, -1);
            }
            int matched = IndexCheck.assertSameAnswers(List.of(truth), actual, oracle, json);
            assertTrue(matched > 20, "too few queries matched (" + matched + ") " + json);
            assertDepthsAreTheEngines(truth, actual, workers, json);
        }
        Threads.assertNoneAlive("kvprefix-zmq-", 5_000);
    }

    /** Each query's depth is the one the publisher's own simulated cache holds (independent of both indexes). */
    private static void assertDepthsAreTheEngines(
            Truth truth, PrefixIndex actual, Map<String, Long> workers, String why) {
        for (Truth.Query q : truth.queries()) {
            io.kvprefix.MatchResult got = new io.kvprefix.MatchResult();
            actual.match(
                    q.tokens(),
                    0,
                    q.tokens().length,
                    io.kvprefix.BlockHasher.builder()
                            .blockSize(q.blockSize())
                            .loraName(q.lora())
                            .build(),
                    q.mm(),
                    got);
            assertEquals(q.depth(), got.depthOf(Worker.of(workers.get(q.engine()), q.rank())), q.engine() + " " + why);
        }
    }

    /**
     * An engine restarts (a new process on the same ports, other blocks) and publishes, while its
     * subscriber is away, past the old numbers and then on ({@code past}), exactly up to the number the
     * subscriber expects next ({@code exact}: without a check its first live batch would simply be
     * applied), or past them and then nothing ({@code idle}: no live batch ever shows the restart).
     * The subscriber must clear what the old process held and fetch the new one's whole stream.
     */
    @ParameterizedTest
    @ValueSource(strings = {"past", "exact", "idle"})
    void anEngineThatRestartsPastTheOldNumbersIsDetected(String how) throws Exception {
        long seed = TestScale.seed();
        String why = how + " " + TestScale.replay(seed);
        String first = """
                {"seed": %d, "engines": [{"name": "E", "encoding": "array", "replay": "plain", "ranks": [0],
                 "batches": 150}]}""".formatted(seed & Long.MAX_VALUE);
        try (PrefixIndex actual = PrefixIndex.create(IndexConfig.defaults());
                PrefixIndex oracle = PrefixIndex.heap(IndexConfig.defaults());
                KvEventSubscriber sub = KvEventSubscriber.builder(actual).build()) {
            EngineEndpoint engine;
            Truth before;
            PythonPublisher.Ports ports;
            try (PythonPublisher pub = new PythonPublisher(sub("first"), first)) {
                engine = endpoint(pub, "E", 9);
                ports = pub.ports("E");
                sub.addEngine(engine);
                long last = pub.awaitDone(30).get("E");
                IndexCheck.await(sub, s -> IndexCheck.caughtUp(s, engine.endpoint(), last), CATCH_UP, pub::stderr);
                before = Truth.read(pub.truth());
            } // the first process exits
            int early = how.equals("exact") ? 150 : 400;
            int batches = how.equals("idle") ? early : early + 60;
            String second = """
                    {"seed": %d, "engines": [{"name": "E", "encoding": "array", "replay": "plain", "ranks": [0],
                     "batches": %d, "early": %d, "bind_late": true, "ports": {"pub": %d, "replay": %d}}]}""".formatted((seed + 1) & Long.MAX_VALUE, batches, early, ports.pub(), ports.replay());
            try (PythonPublisher pub = new PythonPublisher(sub("second"), second)) {
                long last = pub.awaitDone(30).get("E");
                SubscriberStats stats = IndexCheck.await(
                        sub,
                        s -> IndexCheck.caughtUp(s, engine.endpoint(), last)
                                && s.engine(engine.endpoint())
                                                .orElseThrow()
                                                .counts()
                                                .get(Counter.RESTARTS)
                                        >= 1,
                        CATCH_UP,
                        () -> why + "\n" + pub.stderr());
                String json = stats.toJson() + " " + why;
                SubscriberStats.Counts c =
                        stats.engine(engine.endpoint()).orElseThrow().counts();
                assertEquals(1, c.get(Counter.RESTARTS), json);
                assertTrue(c.get(Counter.RECONNECTS) >= 1, json);
                assertEquals(0, c.get(Counter.RESYNCS), json);
                Truth after = Truth.read(pub.truth());
                after.feed(oracle, "E", r -> Worker.of(9, 0), -1, -1); // the old process's blocks are gone
                IndexCheck.assertSameAnswers(List.of(before, after), actual, oracle, json);
            }
        }
        Threads.assertNoneAlive("kvprefix-zmq-", 5_000);
    }

    /**
     * Engines without a replay endpoint that name themselves: vLLM's 24-byte sequence frames (PR
     * #57789) or SGLang's epoch in the topic. The restarted process publishes exactly up to the number
     * the subscriber expects next while it is away, so only the identity can show the restart.
     */
    @ParameterizedTest
    @ValueSource(strings = {"uuid", "epoch"})
    void aPublisherIdentityShowsARestartWithoutReplay(String identity) throws Exception {
        long seed = TestScale.seed();
        String why = identity + " " + TestScale.replay(seed);
        String first = """
                {"seed": %d, "engines": [{"name": "E", "encoding": "map", "replay": "none", "ranks": [0],
                 "topic": "kv", "identity": "%s", "batches": 100}]}""".formatted(seed & Long.MAX_VALUE, identity);
        try (PrefixIndex actual = PrefixIndex.create(IndexConfig.defaults());
                PrefixIndex oracle = PrefixIndex.heap(IndexConfig.defaults());
                KvEventSubscriber sub = KvEventSubscriber.builder(actual).build()) {
            EngineEndpoint engine;
            Truth before;
            int port;
            try (PythonPublisher pub = new PythonPublisher(sub("first"), first)) {
                engine = endpoint(pub, "E", 5);
                port = pub.ports("E").pub();
                sub.addEngine(engine);
                long last = pub.awaitDone(30).get("E");
                IndexCheck.await(sub, s -> IndexCheck.caughtUp(s, engine.endpoint(), last), CATCH_UP, pub::stderr);
                before = Truth.read(pub.truth());
            }
            String second = """
                    {"seed": %d, "engines": [{"name": "E", "encoding": "map", "replay": "none", "ranks": [0],
                     "topic": "kv", "identity": "%s", "batches": 160, "early": 100, "bind_late": true,
                     "ports": {"pub": %d}}]}""".formatted((seed + 1) & Long.MAX_VALUE, identity, port);
            try (PythonPublisher pub = new PythonPublisher(sub("second"), second)) {
                long last = pub.awaitDone(30).get("E");
                SubscriberStats stats = IndexCheck.await(
                        sub, s -> IndexCheck.caughtUp(s, engine.endpoint(), last), CATCH_UP, () -> why);
                String json = stats.toJson() + " " + why;
                SubscriberStats.Counts c =
                        stats.engine(engine.endpoint()).orElseThrow().counts();
                assertEquals(1, c.get(Counter.RESTARTS), json);
                assertEquals(1, c.get(Counter.LATE_JOINS), "batches 0..99 of the new process were never seen " + json);
                Truth after = Truth.read(pub.truth());
                after.feed(oracle, "E", r -> Worker.of(5, 0), List.of(new long[] {0, 100}));
                IndexCheck.assertSameAnswers(List.of(before, after), actual, oracle, json);
            }
        }
        Threads.assertNoneAlive("kvprefix-zmq-", 5_000);
    }

    /**
     * Engines that published before the subscription started and then nothing: the subscriber must
     * fill the index from their replay sockets alone, at once, and a second subscriber started later
     * (a restarted {@code listen}) the same.
     */
    @Test
    void idleEnginesAreAskedAtOnce() throws Exception {
        long seed = TestScale.seed();
        String why = TestScale.replay(seed);
        String spec = """
                {"seed": %d, "engines": [
                 {"name": "I1", "encoding": "array", "replay": "plain", "ranks": [0], "batches": 300, "early": 300},
                 {"name": "I2", "encoding": "map", "replay": "topic", "topic": "kv@I2", "ranks": [0], "batches": 200,
                  "early": 200}
                ]}""".formatted(seed & Long.MAX_VALUE);
        Map<String, Long> workers = Map.of("I1", 11L, "I2", 12L);
        try (PythonPublisher pub = new PythonPublisher(dir, spec)) {
            Truth truth = null;
            for (int run = 0; run < 2; run++) {
                try (PrefixIndex actual = PrefixIndex.create(IndexConfig.defaults());
                        PrefixIndex oracle = PrefixIndex.heap(IndexConfig.defaults());
                        KvEventSubscriber sub =
                                KvEventSubscriber.builder(actual).build()) {
                    Map<String, EngineEndpoint> engines = new LinkedHashMap<>();
                    for (String n : List.of("I1", "I2")) {
                        engines.put(n, endpoint(pub, n, workers.get(n)));
                        sub.addEngine(engines.get(n));
                    }
                    if (truth == null) {
                        pub.awaitDone(30);
                        truth = Truth.read(pub.truth());
                    }
                    Map<String, Long> last = Map.of("I1", 299L, "I2", 199L);
                    SubscriberStats stats = IndexCheck.await(
                            sub,
                            s -> engines.entrySet().stream()
                                    .allMatch(e ->
                                            IndexCheck.caughtUp(s, e.getValue().endpoint(), last.get(e.getKey()))),
                            Duration.ofSeconds(20),
                            () -> why);
                    String json = stats.toJson() + " run " + run + " " + why;
                    assertEquals(0, stats.total().get(Counter.BATCHES), "no live batch was published " + json);
                    assertEquals(0, stats.total().get(Counter.LATE_JOINS), json);
                    for (String n : engines.keySet()) {
                        long w = workers.get(n);
                        truth.feed(oracle, n, r -> Worker.of(w, 0), -1, -1);
                    }
                    int matched = IndexCheck.assertSameAnswers(List.of(truth), actual, oracle, json);
                    assertTrue(matched > 20, json);
                    assertDepthsAreTheEngines(truth, actual, workers, json);
                }
            }
        }
        Threads.assertNoneAlive("kvprefix-zmq-", 5_000);
    }

    /**
     * Replay sockets that answer the wrong numbers. LOW answers a request from S with batches below
     * S only; HIGH and HIGHBOOT answer with the right batches numbered 10,000 higher (HIGHBOOT also
     * had 20 batches before the subscription, which its start-up replay answers that way). The ranges
     * they were asked for are lost (a resync that says so), within a bounded number of requests, and
     * every honest live batch is applied.
     */
    @Test
    void aLyingReplaySocketIsBoundedAndNeverBelieved() throws Exception {
        long seed = TestScale.seed();
        String why = TestScale.replay(seed);
        String spec = """
                {"seed": %d, "engines": [
                 {"name": "LOW", "encoding": "array", "replay": "plain", "ranks": [0], "batches": 150, "lie": "below",
                  "drop": [[40, 49], [90, 94]], "pause_after_drop": true},
                 {"name": "HIGH", "encoding": "map", "replay": "plain", "ranks": [0], "batches": 150, "lie": "above",
                  "drop": [[40, 49]], "pause_after_drop": true},
                 {"name": "HIGHBOOT", "encoding": "array", "replay": "topic", "topic": "t", "ranks": [0],
                  "batches": 150, "early": 20, "lie": "above", "drop": [[60, 69]], "pause_after_drop": true}
                ]}""".formatted(seed & Long.MAX_VALUE);
        Map<String, Long> workers = Map.of("LOW", 21L, "HIGH", 22L, "HIGHBOOT", 23L);
        Map<String, List<long[]>> lost = Map.of(
                "LOW", List.of(new long[] {40, 50}, new long[] {90, 95}),
                "HIGH", List.of(new long[] {40, 50}),
                "HIGHBOOT", List.of(new long[] {0, 20}, new long[] {60, 70}));
        try (PrefixIndex actual = PrefixIndex.create(IndexConfig.defaults());
                PrefixIndex oracle = PrefixIndex.heap(IndexConfig.defaults());
                PythonPublisher pub = new PythonPublisher(dir, spec);
                KvEventSubscriber sub = KvEventSubscriber.builder(actual)
                        .replayTimeout(Duration.ofSeconds(2))
                        .build()) {
            Map<String, EngineEndpoint> engines = new LinkedHashMap<>();
            for (String n : List.of("LOW", "HIGH", "HIGHBOOT")) {
                engines.put(n, endpoint(pub, n, workers.get(n)));
                sub.addEngine(engines.get(n));
            }
            Map<String, Long> last = pub.awaitDone(60);
            SubscriberStats stats = IndexCheck.await(
                    sub,
                    s -> engines.entrySet().stream()
                            .allMatch(e -> IndexCheck.caughtUp(s, e.getValue().endpoint(), last.get(e.getKey()))),
                    CATCH_UP,
                    () -> why + "\n" + pub.stderr());
            String json = stats.toJson() + " " + why;
            Truth truth = Truth.read(pub.truth());
            for (String n : engines.keySet()) {
                SubscriberStats.Counts c =
                        stats.engine(engines.get(n).endpoint()).orElseThrow().counts();
                assertTrue(c.get(Counter.REPLAY_CONTRADICTIONS) >= 1, n + " " + json);
                assertEquals(0, c.get(Counter.RESTARTS), n + " " + json);
                // the start-up request, then at most MAX_FUTILE_ATTEMPTS per gap (and one per reconnection)
                long bound = 1 + (long) lost.get(n).size() * EngineSync.MAX_FUTILE_ATTEMPTS + c.get(Counter.RECONNECTS);
                assertTrue(c.get(Counter.REPLAYS) <= bound, n + " asked " + c.get(Counter.REPLAYS) + " " + json);
                long w = workers.get(n);
                truth.feed(oracle, n, r -> Worker.of(w, 0), lost.get(n));
            }
            // LOW's two ranges are lost after its futile requests; HIGH's start-up answer may also be
            // believed until live batch 0 refutes it (a second resync), depending on which came first
            assertEquals(
                    2,
                    stats.engine(engines.get("LOW").endpoint())
                            .orElseThrow()
                            .counts()
                            .get(Counter.RESYNCS),
                    json);
            assertTrue(
                    stats.engine(engines.get("HIGH").endpoint())
                                    .orElseThrow()
                                    .counts()
                                    .get(Counter.RESYNCS)
                            >= 1,
                    json);
            IndexCheck.assertSameAnswers(List.of(truth), actual, oracle, json);
        }
        Threads.assertNoneAlive("kvprefix-zmq-", 5_000);
    }

    /**
     * A subscription resumed from a {@link ResumePoint} (as after a snapshot restore): with the right
     * hash the engine is asked at once and nothing is lost or cleared; with a wrong hash (the engine
     * is taken for another process) the worker is cleared and the stream fetched again from 0; with
     * no hash the request starts after the point.
     */
    @Test
    void aResumedSubscriptionChecksTheLastBatch() throws Exception {
        long seed = TestScale.seed();
        String why = TestScale.replay(seed);
        String spec = """
                {"seed": %d, "engines": [{"name": "R", "encoding": "array", "replay": "plain", "ranks": [0],
                 "batches": 200, "early": 200}]}""".formatted(seed & Long.MAX_VALUE);
        try (PrefixIndex actual = PrefixIndex.create(IndexConfig.defaults());
                PrefixIndex oracle = PrefixIndex.heap(IndexConfig.defaults());
                PythonPublisher pub = new PythonPublisher(dir, spec)) {
            EngineEndpoint engine = endpoint(pub, "R", 31);
            ResumePoint point;
            try (KvEventSubscriber sub = KvEventSubscriber.builder(actual).build()) {
                sub.addEngine(engine);
                pub.awaitDone(30);
                IndexCheck.await(sub, s -> IndexCheck.caughtUp(s, engine.endpoint(), 199), CATCH_UP, () -> why);
                point = sub.resumePoint(engine.endpoint()).orElseThrow();
            }
            assertEquals(199, point.lastSeq());
            assertTrue(point.batchHash().isPresent());
            Truth truth = Truth.read(pub.truth());
            truth.feed(oracle, "R", r -> Worker.of(31, 0), -1, -1);
            record Case(ResumePoint from, long restarts, long replayed) {}
            for (Case c : List.of(
                    new Case(point, 0, 0),
                    new Case(ResumePoint.after(199), 0, 0),
                    new Case(ResumePoint.after(199, point.batchHash().getAsLong() ^ 1), 1, 200))) {
                try (KvEventSubscriber sub = KvEventSubscriber.builder(actual).build()) {
                    sub.addEngine(engine, c.from());
                    SubscriberStats stats = IndexCheck.await(
                            sub,
                            s -> IndexCheck.caughtUp(s, engine.endpoint(), 199)
                                    && s.engine(engine.endpoint())
                                                    .orElseThrow()
                                                    .counts()
                                                    .get(Counter.REPLAYS)
                                            >= 1,
                            CATCH_UP,
                            () -> why);
                    String json = stats.toJson() + " " + c + " " + why;
                    SubscriberStats.Counts n =
                            stats.engine(engine.endpoint()).orElseThrow().counts();
                    assertEquals(c.restarts(), n.get(Counter.RESTARTS), json);
                    assertEquals(c.replayed(), n.get(Counter.REPLAYED_BATCHES), json);
                    assertEquals(0, n.get(Counter.RESYNCS), json);
                    ResumePoint now = sub.resumePoint(engine.endpoint()).orElseThrow();
                    // the hash is known again once the batch has been applied (after the restart)
                    assertEquals(c.restarts() > 0 ? point : c.from(), now, json);
                    IndexCheck.assertSameAnswers(List.of(truth), actual, oracle, json);
                }
            }
        }
        Threads.assertNoneAlive("kvprefix-zmq-", 5_000);
    }
}
