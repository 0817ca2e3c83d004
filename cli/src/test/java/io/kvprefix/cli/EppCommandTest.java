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
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code kvprefix epp} as a child process, as a container runs it: one {@code READY} line with both
 * ports, the readiness service SERVING once its engine is up, a pick over the ext_proc port with the
 * engine named as the gateway knows it, and a clean stop on SIGTERM.
 */
class EppCommandTest {
    @Test
    void aChildProcessPrintsReadyPicksAndStopsOnSigterm() throws Exception {
        try (Standin engines =
                Standin.start(StandinSettings.builder().timeScale(0.05).build())) {
            Standin.BoundEngine e = engines.engines().get(0);
            Process p = new ProcessBuilder(List.of(
                            Path.of(System.getProperty("java.home"), "bin", "java")
                                    .toString(),
                            "--enable-native-access=ALL-UNNAMED",
                            "--sun-misc-unsafe-memory-access=allow",
                            "-cp",
                            System.getProperty("java.class.path"),
                            Main.class.getName(),
                            "epp",
                            "--port",
                            "0",
                            "--health-port",
                            "0",
                            "--host",
                            "127.0.0.1",
                            "--engine",
                            e.worker() + "=127.0.0.1:" + e.http() + ",events=tcp://127.0.0.1:" + e.events()
                                    + ",replay=tcp://127.0.0.1:" + e.replay()))
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
            try {
                BufferedReader out =
                        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                String ready = out.readLine();
                Matcher m = Pattern.compile(
                                "^READY \\{\"port\":(\\d+),\"health_port\":(\\d+),\"metrics_port\":null,\"engines\":1,\"engines_up\":1}$")
                        .matcher(String.valueOf(ready));
                assertTrue(m.matches(), ready);
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
                p.destroy(); // SIGTERM
                assertTrue(p.waitFor(60, TimeUnit.SECONDS), "epp stops on SIGTERM");
                assertEquals(143, p.exitValue(), "the JVM's status after SIGTERM, its shutdown hook done");
            } finally {
                p.destroyForcibly();
            }
        }
    }
}
