package io.kvprefix.nats.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.BlockHasher;
import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.nats.ReplicaStats;
import io.kvprefix.testing.OracleIndex;
import io.kvprefix.zmq.EngineEndpoint;
import io.kvprefix.zmq.SubscriberStats.EventKind;
import io.kvprefix.zmq.testing.Truth;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * The test oracle ({@link OracleIndex}, docs/SPEC.md sections 3 and 4) fed the engines' full event
 * history from the publisher's truth file, and the comparison every fault test ends with: each
 * replica's index answers every query of the truth file exactly as the oracle does (and, for each
 * query, the depth the publisher's own simulated cache holds), and holds as many blocks per worker.
 *
 * <p>Thread-safety: not thread-safe.
 */
public final class FleetOracle implements AutoCloseable {
    private final Truth truth;
    private final Map<String, Long> workerIds;
    private final OracleIndex oracle = new OracleIndex(IndexConfig.defaults());
    /** Per engine, the events of each kind that got each status when the oracle applied them. */
    private final Map<String, long[][]> counts = new HashMap<>();

    /** @param workerIds the worker id each engine of the truth file was configured with */
    public FleetOracle(Path truthFile, Map<String, Long> workerIds) throws IOException {
        this.truth = Truth.read(truthFile);
        this.workerIds = Map.copyOf(workerIds);
        for (var e : workerIds.entrySet()) {
            long id = e.getValue();
            counts.put(e.getKey(), truth.feed(oracle, e.getKey(), rank -> Worker.of(id, rank.orElse(0)), -1, -1));
        }
    }

    /** Batches the publisher published for {@code engine}, dropped ones included. */
    public int batches(String engine) {
        return truth.batches(engine).size();
    }

    /** Asserts that {@code replica} answers every query as the oracle does; {@code what} names it in failures. */
    public void assertSame(PrefixIndex replica, String what) {
        assertEquals(oracle.stats().blocksPerWorker(), replica.stats().blocksPerWorker(), what + ": blocks per worker");
        Map<String, BlockHasher> hashers = new HashMap<>();
        MatchResult got = new MatchResult();
        MatchResult want = new MatchResult();
        int nonEmpty = 0;
        for (Truth.Query q : truth.queries()) {
            BlockHasher h = hashers.computeIfAbsent(
                    q.blockSize() + "/" + q.lora(),
                    k -> BlockHasher.builder()
                            .blockSize(q.blockSize())
                            .loraName(q.lora())
                            .build());
            replica.match(q.tokens(), 0, q.tokens().length, h, q.mm(), got);
            oracle.match(q.tokens(), 0, q.tokens().length, h, q.mm(), want);
            assertEquals(want.scores(), got.scores(), what + ": query of engine " + q.engine());
            assertEquals(
                    q.depth(),
                    got.depthOf(Worker.of(workerIds.get(q.engine()), q.rank())),
                    what + ": depth the publisher's cache holds, engine " + q.engine() + " rank " + q.rank());
            nonEmpty += got.isEmpty() ? 0 : 1;
        }
        assertTrue(nonEmpty > 20, what + ": too few queries matched anything (" + nonEmpty + ")");
    }

    /**
     * Asserts that {@code replica} applied each engine's events with the statuses the oracle gave them,
     * kind by kind: a replica that skipped or repeated part of the history differs here even where the
     * engines' later clears hide it from the final state.
     */
    public void assertSameCounts(ReplicaStats replica, Map<String, EngineEndpoint> engines, String what) {
        for (var e : engines.entrySet()) {
            ReplicaStats.EngineStats got = replica.engines().stream()
                    .filter(s -> s.engine().endpoint().equals(e.getValue().endpoint()))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError(what + ": no engine " + e.getKey()));
            long[][] want = counts.get(e.getKey());
            for (EventKind k : EventKind.values()) {
                for (EventStatus st : EventStatus.values()) {
                    assertEquals(
                            want[k.ordinal()][st.ordinal()],
                            got.events(k, st),
                            what + ": engine " + e.getKey() + " " + k + "/" + st);
                }
            }
        }
    }

    @Override
    public void close() {
        oracle.close();
    }
}
