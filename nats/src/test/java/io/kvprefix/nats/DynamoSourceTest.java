package io.kvprefix.nats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.Medium;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.nats.testing.DynamoWorker;
import io.kvprefix.nats.testing.NatsServer;
import io.kvprefix.testing.OracleIndex;
import io.nats.client.Connection;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;
import java.util.Random;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link DynamoSource} against a real nats-server fed by stand-in Dynamo workers
 * ({@link DynamoWorker}, Dynamo's exact messages): on both transports the index ends up answering
 * every query as the oracle fed the same events does; Dynamo's own hash vectors match kvprefix's
 * hashing; a gap and a restart clear the worker; a missing stream is an error, not an empty index.
 */
class DynamoSourceTest {
    private static final String NS = "dynamo";
    private static final String COMP = "backend";
    /** Two workers, one with an id above 2^63 (a Rust u64), two dp ranks each. */
    private static final long[] WORKERS = {7, 0x9000_0000_0000_0001L};

    @TempDir
    Path dir;

    @Test
    void dynamosOwnHashVectorsMatchKvprefixsHashingOverTheEventPlane() throws Exception {
        // lib/tokens/src/lib.rs tests: tokens 1..12, block size 4, seed 1337: local and chain hashes
        long[] local = {
            Long.parseUnsignedLong("14643705804678351452"),
            Long.parseUnsignedLong("16777012769546811212"),
            Long.parseUnsignedLong("483935686894639516")
        };
        long[] chain = {
            local[0], Long.parseUnsignedLong("4945711292740353085"), Long.parseUnsignedLong("12583592247330656132")
        };
        try (NatsServer server = new NatsServer(Files.createDirectories(dir.resolve("nats")));
                PrefixIndex index =
                        PrefixIndex.create(IndexConfig.builder().blockSize(4).build())) {
            Connection c = FleetConnection.open(server.url(), "test");
            try (DynamoSource source = DynamoSource.builder(index, c, NS, COMP).build()) {
                DynamoWorker w = new DynamoWorker(c, NS, COMP, 5, false);
                w.stored(0, "device", OptionalLong.empty(), chain, local, false);
                await(() -> source.stats().counter("events") == 1, "the store");
                MatchResult r = index.match(new int[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
                assertEquals(3, r.depthOf(Worker.of(5)), "kvprefix's hashes of the tokens are Dynamo's tokens_hash");
                assertEquals(1, index.match(new int[] {1, 2, 3, 4, 9, 9, 9, 9}).depthOf(Worker.of(5)));
            } finally {
                c.close();
            }
        }
    }

    @Test
    void theEventPlaneFeedsTheIndexAsTheOracleIsFed() throws Exception {
        runHistory(false, 11);
    }

    @Test
    void theDurableStreamReadFromItsStartFeedsTheIndexAsTheOracleIsFed() throws Exception {
        runHistory(true, 12);
    }

    private void runHistory(boolean durable, long seed) throws Exception {
        try (NatsServer server = new NatsServer(Files.createDirectories(dir.resolve("nats")));
                PrefixIndex index = PrefixIndex.create(IndexConfig.defaults());
                OracleIndex oracle = new OracleIndex(IndexConfig.defaults())) {
            Connection c = FleetConnection.open(server.url(), "test");
            try {
                History h = new History(c, durable, oracle, new Random(seed));
                DynamoSource source = null;
                if (!durable) {
                    source = DynamoSource.builder(index, c, NS, COMP).build();
                } else {
                    h.workers.get(0).createStream();
                }
                h.run(600);
                if (durable) { // a late joiner: every message is in the stream already
                    source = DynamoSource.builder(index, c, NS, COMP)
                            .mode(DynamoSource.Mode.DURABLE)
                            .build();
                    assertEquals(DynamoSource.streamName(NS, COMP), source.source());
                }
                DynamoSource s = source;
                try {
                    await(() -> s.stats().counter("messages") == h.published, "every message, seed " + seed);
                    DynamoStats st = s.stats();
                    assertEquals(0, st.counter("decode_errors"), st.toJson());
                    assertEquals(h.skippedTier, st.counter("skipped_tier"), st.toJson());
                    assertEquals(h.multimodal, st.counter("multimodal_blocks"), st.toJson());
                    assertEquals(0, st.counter("sequence_gaps") + st.counter("restarts"), st.toJson());
                    assertEquals(durable ? "stream-start" : "live", st.bootstrap());
                    for (EventStatus status : EventStatus.values()) {
                        assertEquals(oracle.eventCount(status), st.applied(status), status + ", seed " + seed);
                    }
                    h.assertSame(index, "seed " + seed);
                } finally {
                    s.close();
                }
                if (durable) { // read-only: the stream holds what the workers put there, nothing more
                    long msgs = c.jetStreamManagement()
                            .getStreamInfo(DynamoSource.streamName(NS, COMP))
                            .getStreamState()
                            .getMsgCount();
                    assertEquals(h.published, msgs);
                }
            } finally {
                c.close();
            }
        }
    }

    @Test
    void aSequenceGapAndARestartClearTheWorker() throws Exception {
        try (NatsServer server = new NatsServer(Files.createDirectories(dir.resolve("nats")));
                PrefixIndex index = PrefixIndex.create(IndexConfig.defaults())) {
            Connection c = FleetConnection.open(server.url(), "test");
            try (DynamoSource source = DynamoSource.builder(index, c, NS, COMP).build()) {
                DynamoWorker w = new DynamoWorker(c, NS, COMP, 3, false);
                DynamoWorker other = new DynamoWorker(c, NS, COMP, 4, false);
                w.stored(0, "device", OptionalLong.empty(), new long[] {101, 102}, new long[] {1, 2}, false);
                other.stored(0, "device", OptionalLong.empty(), new long[] {201}, new long[] {1}, false);
                await(() -> index.blockCount(Worker.of(3)) == 2 && index.blockCount(Worker.of(4)) == 1, "stores");
                w.drop(); // a message the core subscription never got: the index may lack a removal
                w.stored(0, "device", OptionalLong.empty(), new long[] {103}, new long[] {3}, false);
                await(() -> source.stats().counter("sequence_gaps") == 1, "the gap");
                assertEquals(1, index.blockCount(Worker.of(3)), "cleared, then the new store applied");
                assertEquals(1, index.blockCount(Worker.of(4)), "another publisher's worker is untouched");
                w.restart(); // a new publisher_id for worker 3
                w.stored(0, "device", OptionalLong.empty(), new long[] {104}, new long[] {4}, false);
                await(() -> source.stats().counter("restarts") == 1, "the restart");
                assertEquals(1, index.blockCount(Worker.of(3)));
                assertEquals(0, index.match(new long[] {3}).depthOf(Worker.of(3)), "the old incarnation's block");
                assertEquals(1, index.match(new long[] {4}).depthOf(Worker.of(3)));
                DynamoStats st = source.stats();
                assertEquals(2, st.counter("workers_cleared"), st.toJson());
                assertEquals(2, st.publishers(), st.toJson());
            } finally {
                c.close();
            }
        }
    }

    @Test
    void aMissingDurableStreamIsAClearError() throws Exception {
        try (NatsServer server = new NatsServer(Files.createDirectories(dir.resolve("nats")));
                PrefixIndex index = PrefixIndex.create(IndexConfig.defaults())) {
            Connection c = FleetConnection.open(server.url(), "test");
            try {
                IOException e = assertThrows(
                        IOException.class,
                        () -> DynamoSource.builder(index, c, NS, COMP)
                                .mode(DynamoSource.Mode.DURABLE)
                                .build());
                assertTrue(e.getMessage().contains("namespace-dynamo-component-backend-kv-events"), e.getMessage());
            } finally {
                c.close();
            }
        }
    }

    @Test
    void namesAreDynamosSlugAndSubject() {
        assertEquals("namespace-my-ns-component-back-end-kv-events", DynamoSource.streamName("My_NS", "back.end"));
        assertEquals("namespace.a%2Eb.component.c%20d.kv-events", DynamoSource.subject("a.b", "c d", "kv-events"));
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + 120_000_000_000L; // generous: the machine is shared
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(20);
        }
    }

    /**
     * A seeded random history of stores (forks included), removals, clears and tiers over two
     * workers and two ranks, published by the stand-ins and applied to the oracle in the same order.
     */
    private static final class History {
        final List<DynamoWorker> workers = new ArrayList<>();
        final OracleIndex oracle;
        final Random rnd;
        /** Per (worker, rank): each held block's engine hash and its local-hash prefix from the root. */
        final List<List<long[][]>> held = new ArrayList<>();

        final List<long[]> queries = new ArrayList<>();
        long published;
        long skippedTier;
        long multimodal;

        History(Connection c, boolean durable, OracleIndex oracle, Random rnd) {
            this.oracle = oracle;
            this.rnd = rnd;
            for (long w : WORKERS) {
                workers.add(new DynamoWorker(c, NS, COMP, w, durable));
                held.add(new ArrayList<>());
                held.add(new ArrayList<>());
            }
        }

        void run(int events) throws IOException {
            for (int i = 0; i < events; i++) {
                int slot = rnd.nextInt(held.size());
                int rank = slot % 2;
                DynamoWorker w = workers.get(slot / 2);
                Worker worker = Worker.of(WORKERS[slot / 2], rank);
                int dice = rnd.nextInt(100);
                if (dice < 60 || held.get(slot).isEmpty()) {
                    store(slot, w, worker);
                } else if (dice < 95) {
                    long[][] b =
                            held.get(slot).remove(rnd.nextInt(held.get(slot).size()));
                    w.removed(rank, "device", new long[] {b[0][0]});
                    oracle.apply(new KvEvent.Removed(worker, new long[] {b[0][0]}));
                } else {
                    w.cleared(rank);
                    oracle.apply(new KvEvent.Cleared(worker));
                    held.get(slot).clear();
                }
                published++;
            }
        }

        private void store(int slot, DynamoWorker w, Worker worker) throws IOException {
            List<long[][]> mine = held.get(slot);
            long[][] parent = mine.isEmpty() || rnd.nextInt(4) == 0 ? null : mine.get(rnd.nextInt(mine.size()));
            int n = 1 + rnd.nextInt(4);
            long[] engine = new long[n];
            long[] local = new long[n];
            long[] prefix = parent == null ? new long[0] : parent[1];
            int tierDice = rnd.nextInt(20);
            String tier = tierDice == 0 ? "external" : tierDice < 3 ? "host_pinned" : "device";
            List<long[][]> added = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                engine[i] = rnd.nextLong(); // opaque engine names, half of them above 2^63
                local[i] = rnd.nextInt(6); // few contents: workers share prefixes
                prefix = Arrays.copyOf(prefix, prefix.length + 1);
                prefix[prefix.length - 1] = local[i];
                added.add(new long[][] {{engine[i]}, prefix});
                queries.add(prefix);
            }
            boolean mm = rnd.nextInt(10) == 0;
            OptionalLong p = parent == null ? OptionalLong.empty() : OptionalLong.of(parent[0][0]);
            w.stored(worker.dpRank(), tier, p, engine, local, mm);
            multimodal += mm ? n : 0;
            if (tier.equals("external")) {
                skippedTier++;
                return;
            }
            Medium medium = tier.equals("device") ? Medium.GPU : Medium.CPU;
            if (oracle.apply(new KvEvent.Stored(worker, p, engine, local, medium)) == EventStatus.OK
                    && medium == Medium.GPU) {
                mine.addAll(added);
            }
        }

        void assertSame(PrefixIndex index, String what) {
            assertEquals(oracle.stats().blocksPerWorker(), index.stats().blocksPerWorker(), what + ": blocks");
            MatchResult got = new MatchResult();
            MatchResult want = new MatchResult();
            int nonEmpty = 0;
            for (long[] q : queries) {
                index.match(q, 0, q.length, got);
                oracle.match(q, 0, q.length, want);
                assertEquals(want.scores(), got.scores(), what + ": query " + Arrays.toString(q));
                nonEmpty += got.isEmpty() ? 0 : 1;
            }
            assertTrue(nonEmpty > 50, what + ": too few queries matched anything (" + nonEmpty + ")");
        }
    }
}
