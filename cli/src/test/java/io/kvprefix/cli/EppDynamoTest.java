package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.BlockHasher;
import io.kvprefix.nats.FleetConnection;
import io.kvprefix.nats.testing.DynamoWorker;
import io.kvprefix.nats.testing.NatsServer;
import io.kvprefix.standin.Standin;
import io.kvprefix.standin.StandinSettings;
import io.nats.client.Connection;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kvprefix epp --dynamo} (docs/OPERATING.md sections 10 and 11) as a child process: the
 * engines' KV events come from a Dynamo deployment's durable stream on a real nats-server, filled
 * by a stand-in Dynamo worker with Dynamo's messages for the second of two stand-in engines, and the
 * picker names that engine first for a prompt whose blocks it holds.
 */
class EppDynamoTest {
    @TempDir
    Path dir;

    @Test
    void dynamosEventsNameTheEngineThatHoldsThePrefix() throws Exception {
        int[] tokens = IntStream.range(60_000, 60_064).toArray(); // 4 full blocks of 16
        long[] local = BlockHasher.builder().blockSize(16).build().localHashes(tokens);
        try (NatsServer nats = new NatsServer(Files.createDirectories(dir.resolve("nats")));
                Standin engines = Standin.start(
                        StandinSettings.builder().engines(2).timeScale(0.05).build())) {
            Standin.BoundEngine target = engines.engines().get(1);
            Connection c = FleetConnection.open(nats.url(), "kvprefix-test-dynamo-worker");
            try {
                DynamoWorker w = new DynamoWorker(c, "dynamo", "backend", target.worker(), true);
                w.createStream();
                w.stored(0, "device", OptionalLong.empty(), new long[] {71, 72, 73, 74}, local, false);
            } finally {
                c.close();
            }
            List<String> args = new java.util.ArrayList<>(List.of(
                    "epp",
                    "--port",
                    "0",
                    "--health-port",
                    "0",
                    "--metrics-port",
                    "0",
                    "--host",
                    "127.0.0.1",
                    "--dynamo",
                    nats.url(),
                    "--namespace",
                    "dynamo",
                    "--component",
                    "backend",
                    "--dynamo-mode",
                    "durable"));
            for (Standin.BoundEngine e : engines.engines()) {
                args.addAll(List.of("--engine", e.worker() + "=127.0.0.1:" + e.http()));
            }
            try (LiveProcess p = LiveProcess.start("epp", null, args, dir.resolve("epp.log"))) {
                Matcher m = Pattern.compile("^READY"
                                + " \\{\"port\":(\\d+),\"health_port\":\\d+,\"metrics_port\":(\\d+),\"engines\":2,.*")
                        .matcher(p.readyLine());
                assertTrue(m.matches(), p.readyLine());
                awaitIndexBlocks(Integer.parseInt(m.group(2)), 4);
                String body = "{\"model\":\"kvprefix-standin\",\"max_tokens\":1,\"prompt\":["
                        + IntStream.of(tokens).mapToObj(Integer::toString).collect(Collectors.joining(","))
                        + "]}";
                try (EppBenchClient client = new EppBenchClient(Integer.parseInt(m.group(1)))) {
                    String destination = client.request(body.getBytes(StandardCharsets.UTF_8), 64)
                            .destination();
                    assertEquals(
                            "127.0.0.1:" + target.http(),
                            String.valueOf(destination).split(",")[0],
                            destination);
                }
                assertTrue(
                        p.stop(Duration.ofSeconds(60)) != io.kvprefix.standin.ChildProcess.KILLED,
                        "epp stops on SIGTERM: " + LiveProcess.tail(p.log()));
            }
        }
    }

    /** Scrapes the picker's /metrics until its index holds {@code want} (worker, block) pairs. */
    private static void awaitIndexBlocks(int metricsPort, double want) throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String text = "";
        while (System.nanoTime() < deadline) {
            text = http.send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metricsPort + "/metrics"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .body();
            for (String l : text.lines().toList()) {
                if (l.startsWith("kvprefix_index_blocks")
                        && Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)) >= want) {
                    return;
                }
            }
            Thread.sleep(100);
        }
        throw new AssertionError("the index never held " + want + " blocks from Dynamo's stream:\n" + text);
    }
}
