package io.kvprefix.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kvprefix.standin.Standin;
import io.kvprefix.standin.StandinSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kvprefix epp} as a child process, as a container runs it: one {@code READY} line with both
 * ports, the readiness service SERVING once its engine is up, a pick over the ext_proc port with the
 * engine named as the gateway knows it, and a clean stop on SIGTERM.
 */
class EppCommandTest {
    @TempDir
    Path dir;

    @Test
    void aChildProcessPrintsReadyPicksAndStopsOnSigterm() throws Exception {
        try (Standin engines =
                Standin.start(StandinSettings.builder().timeScale(0.05).build())) {
            Standin.BoundEngine e = engines.engines().get(0);
            try (LiveProcess p = LiveProcess.start(
                    "epp",
                    null,
                    List.of(
                            "epp",
                            "--port",
                            "0",
                            "--health-port",
                            "0",
                            "--host",
                            "127.0.0.1",
                            "--engine",
                            e.worker() + "=127.0.0.1:" + e.http() + ",events=tcp://127.0.0.1:" + e.events()
                                    + ",replay=tcp://127.0.0.1:" + e.replay()),
                    dir.resolve("epp.log"))) {
                assertEquals(List.of(), p.linesBeforeReady(), "the READY line is the first of standard output");
                Matcher m = Pattern.compile(
                                "^READY"
                                        + " \\{\"port\":(\\d+),\"health_port\":(\\d+),\"metrics_port\":null,\"engines\":1,\"engines_up\":1}$")
                        .matcher(p.readyLine());
                assertTrue(m.matches(), p.readyLine());
                ManagedChannel health = NettyChannelBuilder.forAddress("127.0.0.1", Integer.parseInt(m.group(2)))
                        .usePlaintext()
                        .build();
                try {
                    var stub = HealthGrpc.newBlockingStub(health);
                    long end = System.nanoTime() + 60_000_000_000L;
                    ServingStatus s;
                    while ((s = stub.check(HealthCheckRequest.newBuilder()
                                            .setService("readiness")
                                            .build())
                                    .getStatus())
                            != ServingStatus.SERVING) {
                        assertTrue(System.nanoTime() < end, "readiness is " + s);
                        Thread.sleep(50);
                    }
                } finally {
                    health.shutdownNow().awaitTermination(30, TimeUnit.SECONDS);
                }
                try (EppBenchClient client = new EppBenchClient(Integer.parseInt(m.group(1)))) {
                    byte[] body = EppBenchCommand.body(0, 0, 64);
                    assertEquals(
                            "127.0.0.1:" + e.http(), client.request(body, 10).destination());
                }
                assertEquals(
                        143,
                        p.stop(Duration.ofSeconds(60)),
                        "epp stops on SIGTERM, the JVM's status after its shutdown hook: " + LiveProcess.tail(p.log()));
            }
        }
    }
}
