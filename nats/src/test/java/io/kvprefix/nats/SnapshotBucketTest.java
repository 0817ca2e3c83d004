package io.kvprefix.nats;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.Worker;
import io.kvprefix.nats.internal.EngineFeed;
import io.kvprefix.nats.internal.ReplicaImage;
import io.kvprefix.nats.internal.SnapshotBucket;
import io.kvprefix.nats.testing.NatsServer;
import io.kvprefix.zmq.EngineEndpoint;
import io.nats.client.Connection;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The object-store side of replica snapshots (issue 15 part b) against a real nats-server: uploads
 * named by the stream sequence they cover, the newest found by a starting replica, older ones pruned,
 * bytes back as they went in; and the replica's metadata strings that go with the index snapshot.
 */
class SnapshotBucketTest {
    @TempDir
    Path dir;

    @Test
    void theNewestSnapshotIsFoundAndReadBackWholeAndOlderOnesArePruned() throws Exception {
        try (NatsServer server = new NatsServer(Files.createDirectories(dir.resolve("nats")))) {
            Connection c = FleetConnection.open(server.url(), "test");
            try {
                SnapshotBucket b = SnapshotBucket.open(c, "KVPREFIX_TEST", 2);
                assertTrue(b.newest().isEmpty());
                Random rnd = new Random(1);
                byte[][] data = new byte[3][];
                long[] seqs = {120, 7, 3_000_000_000L}; // out of order: the newest is the highest sequence
                for (int i = 0; i < 3; i++) {
                    data[i] = new byte[300_000 + i]; // several object-store chunks
                    rnd.nextBytes(data[i]);
                    Path f = dir.resolve("snap-" + i);
                    Files.write(f, data[i]);
                    assertEquals(data[i].length, b.put(f, seqs[i]).bytes());
                }
                SnapshotBucket.Entry newest =
                        SnapshotBucket.open(c, "KVPREFIX_TEST", 2).newest().orElseThrow();
                assertEquals(3_000_000_000L, newest.streamSeq());
                assertEquals("index-00000000003000000000", newest.name());
                Path back = dir.resolve("back");
                b.download(newest, back);
                assertArrayEquals(data[2], Files.readAllBytes(back));
                // two kept: 120 and 3e9; 7 (the oldest name) is gone
                server.restart(); // and it all survives a server restart
                awaitReconnected(c);
                SnapshotBucket again = SnapshotBucket.open(c, "KVPREFIX_TEST", 2);
                assertEquals(3_000_000_000L, again.newest().orElseThrow().streamSeq());
                assertThrows(
                        java.io.IOException.class,
                        () -> again.download(
                                new SnapshotBucket.Entry(SnapshotBucket.nameOf(7), 7, 0), dir.resolve("gone")));
            } finally {
                c.close();
            }
        }
    }

    @Test
    void theReplicasMetadataRoundTripsAndABadOneIsRefused() {
        EngineEndpoint e = EngineEndpoint.parse("tcp://127.0.0.1:5557=7,replay=tcp://127.0.0.1:5558");
        EngineFeed f = new EngineFeed(e, "S.7.abc");
        f.restore(42, 41, Set.of(new Worker(7, 0), new Worker(7, 3)));
        EngineFeed g = new EngineFeed(EngineEndpoint.parse("tcp://127.0.0.1:6000=18446744073709551615/2"), "S.x.def");
        Map<String, String> m = ReplicaImage.metadata("S", 1234, List.of(f, g));
        ReplicaImage.State s = ReplicaImage.read(m, "S");
        assertEquals(1234, s.streamSeq());
        assertEquals(2, s.feeds().size());
        EngineFeed f2 = s.feeds().get(0);
        assertEquals("S.7.abc", f2.subject());
        assertEquals(42, f2.nextRec());
        assertEquals(41, f2.lastSeq());
        assertEquals(Set.of(new Worker(7, 0), new Worker(7, 3)), f2.workersFed());
        assertEquals(e, f2.engine());
        assertEquals(Set.of(new Worker(-1, 2)), s.feeds().get(1).workersFed());

        assertTrue(assertThrows(IllegalArgumentException.class, () -> ReplicaImage.read(m, "OTHER"))
                .getMessage()
                .contains("covers stream S, not OTHER"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ReplicaImage.read(Map.of(), "S"))
                .getMessage()
                .contains("not written by a stream replica"));
        Map<String, String> bad = new HashMap<>(m);
        bad.put("kvprefix.nats.engine.S.y", "rec=1;spec=tcp://127.0.0.1:1=1");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ReplicaImage.read(bad, "S"))
                .getMessage()
                .contains("bad engine entry for S.y"));
    }

    private static void awaitReconnected(Connection c) throws InterruptedException {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (c.getStatus() != Connection.Status.CONNECTED && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
    }
}
