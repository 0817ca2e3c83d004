package io.kvprefix.epp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kvprefix.epp.internal.Wire;
import io.kvprefix.service.EngineSpec;
import io.kvprefix.service.RouterService;
import io.kvprefix.standin.testing.StandinProcess;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The picker's refusals and its health as a kubelet and a gateway see them: readiness NOT_SERVING and
 * 503 while no engine is up, SERVING once one comes up (liveness serving throughout), and 429 when the
 * admission queue sheds.
 */
class EppRefusalTest {
    @Test
    void readinessFollowsTheEnginesAndNoEngineIs503() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // nothing listens here until the engine starts on it
        }
        try (RouterService service = RouterService.builder()
                        .engine(EngineSpec.parse("1=http://127.0.0.1:" + port))
                        .healthInterval(Duration.ofMillis(200))
                        .healthTimeout(Duration.ofSeconds(5))
                        .build();
                EppServer epp = EppServer.start(
                        service,
                        EppServer.options()
                                .host("127.0.0.1")
                                .port(0)
                                .healthPort(0)
                                .readinessInterval(50));
                Envoy envoy = new Envoy(epp.port())) {
            ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", epp.healthPort())
                    .usePlaintext()
                    .build();
            try {
                HealthGrpc.HealthBlockingStub health = HealthGrpc.newBlockingStub(ch);
                assertEquals(ServingStatus.SERVING, status(health, EppServer.LIVENESS));
                assertEquals(ServingStatus.NOT_SERVING, status(health, EppServer.READINESS));
                assertEquals(ServingStatus.NOT_SERVING, status(health, Wire.EXT_PROC_SERVICE));
                Envoy.Stream s = envoy.open()
                        .headers("POST", "/v1/completions", false, null)
                        .body(Picked.completion(1, 40));
                ProcessingResponse r = s.next();
                assertTrue(r.hasImmediateResponse(), "" + r);
                assertEquals(503, r.getImmediateResponse().getStatus().getCodeValue());
                assertTrue(r.getImmediateResponse().getBody().toStringUtf8().contains("no_engine_available"));
                s.end();
                try (StandinProcess engine =
                        StandinProcess.start("--engines", "1", "--worker-id", "1", "--port", "" + port)) {
                    assertEquals(port, engine.engine(0).http());
                    Picked.await(
                            "readiness turns SERVING",
                            60,
                            () -> status(health, EppServer.READINESS) == ServingStatus.SERVING);
                    assertEquals(ServingStatus.SERVING, status(health, Wire.EXT_PROC_SERVICE));
                    Envoy.Stream ok = envoy.open()
                            .headers("POST", "/v1/completions", false, null)
                            .body(Picked.completion(1, 40));
                    assertEquals("127.0.0.1:" + port, Envoy.destination(ok.next()));
                    ok.reset();
                }
            } finally {
                ch.shutdownNow().awaitTermination(30, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void aFullQueueSheds429() throws Exception {
        try (StandinProcess engines = StandinProcess.start("--engines", "1");
                RouterService service = RouterService.builder()
                        .engine(engines.engine(0).spec())
                        .maxInFlight(1)
                        .maxQueued(0)
                        .build();
                EppServer epp = EppServer.start(
                        service, EppServer.options().host("127.0.0.1").port(0).healthPort(0));
                Envoy envoy = new Envoy(epp.port())) {
            Envoy.Stream holding =
                    envoy.open().headers("POST", "/v1/completions", false, null).body(Picked.completion(1, 40));
            assertTrue(holding.next().hasRequestHeaders());
            Envoy.Stream shed =
                    envoy.open().headers("POST", "/v1/completions", false, null).body(Picked.completion(1, 40));
            ProcessingResponse r = shed.next();
            assertTrue(r.hasImmediateResponse(), "" + r);
            assertEquals(429, r.getImmediateResponse().getStatus().getCodeValue());
            shed.end();
            holding.reset();
            Picked.await("the slot is free again", 60, () -> service.stats().inFlight() == 0);
        }
    }

    private static ServingStatus status(HealthGrpc.HealthBlockingStub h, String service) {
        return h.check(HealthCheckRequest.newBuilder().setService(service).build())
                .getStatus();
    }
}
