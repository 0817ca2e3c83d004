package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.BlockHasher;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.Medium;
import io.kvprefix.Worker;
import io.kvprefix.nats.FleetConnection;
import io.kvprefix.nats.testing.DynamoWorker;
import io.kvprefix.nats.testing.NatsServer;
import io.kvprefix.opstream.Op;
import io.kvprefix.opstream.OpStreamWriter;
import io.kvprefix.testing.OracleIndex;
import io.nats.client.Connection;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kvprefix listen --dynamo} (docs/OPERATING.md section 10) against a real nats-server holding
 * a Dynamo durable stream that stand-in workers filled: the queries, given as tokens, are answered as
 * the oracle fed the same events answers them (Dynamo's local hashes are kvprefix's), the stats
 * object says where the index started; a missing stream is one line, exit 1.
 */
class DynamoListenTest {
    @TempDir
    Path dir;

    @Test
    void aDurableStreamIsReadFromItsStartAndTheQueriesAnsweredAsTheOracle() throws Exception {
        int[] tokens = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
        BlockHasher hasher = BlockHasher.builder().blockSize(4).build();
        long[] local = hasher.localHashes(tokens);
        long[] forkLocal = hasher.localHashes(new int[] {1, 2, 3, 4, 9, 9, 9, 9});
        try (NatsServer server = new NatsServer(Files.createDirectories(dir.resolve("nats")));
                OracleIndex oracle = new OracleIndex(IndexConfig.defaults())) {
            Connection c = FleetConnection.open(server.url(), "test");
            try {
                DynamoWorker w5 = new DynamoWorker(c, "dynamo", "backend", 5, true);
                DynamoWorker w6 = new DynamoWorker(c, "dynamo", "backend", 6, true);
                w5.createStream();
                long[] e5 = {11, 12, 13};
                w5.stored(0, "device", OptionalLong.empty(), e5, local, false);
                oracle.apply(new KvEvent.Stored(Worker.of(5), OptionalLong.empty(), e5, local, Medium.GPU));
                w6.stored(1, "device", OptionalLong.empty(), new long[] {21}, new long[] {forkLocal[0]}, false);
                oracle.apply(new KvEvent.Stored(
                        Worker.of(6, 1), OptionalLong.empty(), new long[] {21}, new long[] {forkLocal[0]}, Medium.GPU));
                w6.stored(1, "device", OptionalLong.of(21), new long[] {22}, new long[] {forkLocal[1]}, false);
                oracle.apply(new KvEvent.Stored(
                        Worker.of(6, 1), OptionalLong.of(21), new long[] {22}, new long[] {forkLocal[1]}, Medium.GPU));
                w5.removed(0, "device", new long[] {13});
                oracle.apply(new KvEvent.Removed(Worker.of(5), new long[] {13}));
            } finally {
                c.close();
            }
            List<int[]> queries = List.of(tokens, new int[] {1, 2, 3, 4, 9, 9, 9, 9}, new int[] {7, 7, 7, 7});
            ByteArrayOutputStream q = new ByteArrayOutputStream();
            ByteArrayOutputStream want = new ByteArrayOutputStream();
            OpStreamWriter qw = new OpStreamWriter(q);
            OpStreamWriter ww = new OpStreamWriter(want);
            MatchResult m = new MatchResult();
            for (int[] t : queries) {
                qw.op(new Op.TokenMatch(t, 4, null, null));
                oracle.match(t, 0, t.length, hasher, m);
                ww.scores(m);
            }
            qw.flush();
            ww.flush();
            Path queryFile = dir.resolve("q.jsonl");
            Files.write(queryFile, q.toByteArray());
            CliRunner.Result r = CliRunner.run(
                    "listen",
                    "--dynamo",
                    server.url(),
                    "--namespace",
                    "dynamo",
                    "--component",
                    "backend",
                    "--dynamo-mode",
                    "durable",
                    "--duration",
                    "3",
                    "--stats-interval",
                    "0.5",
                    "--queries",
                    queryFile.toString());
            assertEquals(0, r.exit(), r.err());
            List<String> out = r.out().lines().toList();
            List<String> expected =
                    want.toString(StandardCharsets.UTF_8).lines().toList();
            assertEquals(expected, out.subList(0, out.size() - 1), r.err());
            assertTrue(expected.get(0).contains("["), "the first query matches something: " + expected);
            String stats = out.get(out.size() - 1);
            assertTrue(
                    stats.startsWith(
                            "{\"mode\":\"durable\",\"source\":\"namespace-dynamo-component-backend-kv-events\","
                                    + "\"bootstrap\":\"stream-start\""),
                    stats);
            assertTrue(stats.contains("\"messages\":4,\"events\":4,\"decode_errors\":0"), stats);
            assertTrue(r.err().contains("dynamo durable namespace-dynamo-component-backend-kv-events: "), r.err());

            CliRunner.Result missing = CliRunner.run(
                    "listen",
                    "--dynamo",
                    server.url(),
                    "--namespace",
                    "other",
                    "--component",
                    "backend",
                    "--dynamo-mode",
                    "durable",
                    "--duration",
                    "1");
            assertEquals(1, missing.exit(), missing.err());
            assertTrue(
                    missing.err().contains("no JetStream stream namespace-other-component-backend-kv-events"),
                    missing.err());
            assertFalse(missing.err().contains("\tat "), missing.err());
            assertEquals("", missing.out());
        }
    }

    /**
     * {@code listen --dynamo --metrics-port} (before: refused as not served): the first time
     * {@code /health/ready} says 200 the whole durable stream has been applied, and the meters equal
     * the final JSON stats.
     */
    @Test
    void theMetricsEndpointServesTheSourceAndIsReadyOnceTheStreamIsApplied() throws Exception {
        BlockHasher hasher = BlockHasher.builder().blockSize(4).build();
        try (NatsServer server = new NatsServer(Files.createDirectories(dir.resolve("nats")))) {
            Connection c = FleetConnection.open(server.url(), "test");
            try {
                DynamoWorker w = new DynamoWorker(c, "dynamo", "backend", 7, true);
                w.createStream();
                for (int i = 0; i < 50; i++) {
                    long[] local = hasher.localHashes(new int[] {i, i + 1, i + 2, i + 3});
                    w.stored(0, "device", OptionalLong.empty(), new long[] {1000 + i}, local, false);
                }
            } finally {
                c.close();
            }
            int port;
            try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
                port = s.getLocalPort();
            }
            java.util.concurrent.CompletableFuture<CliRunner.Result> run =
                    java.util.concurrent.CompletableFuture.supplyAsync(() -> CliRunner.run(
                            "listen",
                            "--dynamo",
                            server.url(),
                            "--namespace",
                            "dynamo",
                            "--component",
                            "backend",
                            "--dynamo-mode",
                            "durable",
                            "--duration",
                            "6",
                            "--metrics-port",
                            String.valueOf(port),
                            "--metrics-host",
                            "127.0.0.1",
                            "-q"));
            java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
            String base = "http://127.0.0.1:" + port;
            String metrics = null;
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
            while (metrics == null && System.nanoTime() < deadline && !run.isDone()) {
                try {
                    var ready = http.send(
                            java.net.http.HttpRequest.newBuilder(java.net.URI.create(base + "/health/ready"))
                                    .build(),
                            java.net.http.HttpResponse.BodyHandlers.ofString());
                    if (ready.statusCode() == 200) {
                        metrics = http.send(
                                        java.net.http.HttpRequest.newBuilder(java.net.URI.create(base + "/metrics"))
                                                .build(),
                                        java.net.http.HttpResponse.BodyHandlers.ofString())
                                .body();
                    } else {
                        assertTrue(ready.body().startsWith("not ready: "), ready.body());
                    }
                } catch (java.io.IOException notYetBound) {
                    // the endpoint is not up yet
                }
                Thread.sleep(20);
            }
            CliRunner.Result r = run.get(60, java.util.concurrent.TimeUnit.SECONDS);
            assertEquals(0, r.exit(), r.err());
            assertTrue(metrics != null, "never ready: " + r.err());
            String src = "{source=\"namespace-dynamo-component-backend-kv-events\"}";
            assertTrue(metrics.contains("kvprefix_dynamo_messages_total" + src + " 50.0"), "ready early: " + metrics);
            assertTrue(metrics.contains("kvprefix_dynamo_stream_seq" + src + " 50.0"), metrics);
            assertTrue(metrics.contains("kvprefix_index_blocks 50.0"), metrics);
            String stats = r.out().lines().reduce((a, b) -> b).orElse("");
            assertTrue(stats.contains("\"messages\":50,\"events\":50,"), stats);
        }
    }
}
