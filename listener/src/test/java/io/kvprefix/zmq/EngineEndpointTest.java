package io.kvprefix.zmq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.Worker;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/** The {@code ENDPOINT=WORKER[/RANK][,replay=ENDPOINT|,snapshot=ENDPOINT][,topic=TOPIC][,format=FORMAT]} form and the worker it names. */
class EngineEndpointTest {

    @Test
    void parsesEveryPart() {
        EngineEndpoint e = EngineEndpoint.parse(
                "tcp://10.0.0.5:5557=18446744073709551615/4294967295,replay=tcp://10.0.0.5:5558,topic=kv");
        assertEquals("tcp://10.0.0.5:5557", e.endpoint());
        assertEquals(-1L, e.workerId());
        assertEquals(OptionalInt.of(-1), e.dpRank());
        assertEquals(Optional.of("tcp://10.0.0.5:5558"), e.replayEndpoint());
        assertEquals("kv", e.topic());
        assertEquals(e, EngineEndpoint.parse(e.toSpec()));
        assertEquals(
                "tcp://10.0.0.5:5557=18446744073709551615/4294967295,replay=tcp://10.0.0.5:5558,topic=kv", e.toSpec());

        EngineEndpoint plain = EngineEndpoint.parse(" tcp://vllm-0.svc:5557=7 ");
        assertEquals(EngineEndpoint.of("tcp://vllm-0.svc:5557", 7), plain);
        assertEquals(EngineEndpoint.of("ipc:///tmp/kv.sock", 1), EngineEndpoint.parse("ipc:///tmp/kv.sock=1"));
        assertEquals(
                "tcp://[::1]:5557", EngineEndpoint.parse("tcp://[::1]:5557=1").endpoint());
    }

    @Test
    void theBatchRankNamesTheWorkerUnlessARankIsConfigured() {
        EngineEndpoint free = EngineEndpoint.of("tcp://h:1", 3);
        assertEquals(Worker.of(3, 2), free.worker(OptionalInt.of(2)));
        assertEquals(Worker.of(3, 0), free.worker(OptionalInt.empty()));
        EngineEndpoint pinned = free.withDpRank(5);
        assertEquals(Worker.of(3, 5), pinned.worker(OptionalInt.of(2)));
        assertEquals(Worker.of(3, 5), pinned.worker(OptionalInt.empty()));
    }

    @Test
    void badSpecsSayWhatIsWrong() {
        record Case(String spec, String message) {}
        for (Case c : List.of(
                new Case("", "expected ENDPOINT=WORKER"),
                new Case("tcp://h:1", "expected ENDPOINT=WORKER"),
                new Case("=1", "expected ENDPOINT=WORKER"),
                new Case("tcp://h:1=", "worker id '' is not an unsigned 64-bit integer"),
                new Case("tcp://h:1=-1", "worker id '-1'"),
                new Case("tcp://h:1=18446744073709551616", "worker id '18446744073709551616'"),
                new Case("tcp://h:1=1/x", "dp rank 'x'"),
                new Case("tcp://h:1=1/4294967296", "dp rank '4294967296'"),
                new Case("tcp://h:1=1,replay", "replay= needs an endpoint"),
                new Case("tcp://h:1=1,replay=udp://h:2", "replay endpoint 'udp://h:2' is not a ZMQ endpoint"),
                new Case("tcp://h:1=1,color=red", "unknown option 'color'"),
                new Case("tcp://h:1=1,snapshot", "snapshot= needs an endpoint"),
                new Case("tcp://h:1=1,snapshot=h:2", "snapshot endpoint 'h:2' is not a ZMQ endpoint"),
                new Case("tcp://h:1=1,replay=tcp://h:2,snapshot=tcp://h:3", "replay= and snapshot= exclude each other"),
                new Case(
                        "tcp://h:1=1,format=dynamo",
                        "unknown format 'dynamo' (known formats: vllm, sglang, trtllm, vllm-copies)"),
                new Case("tcp://h:1=1,format=VLLM", "unknown format 'VLLM'"),
                new Case("tcp://h:1=1,format=", "format= needs a format (vllm, sglang, trtllm, vllm-copies)"),
                new Case("tcp://h:1=1,format", "format= needs a format"),
                new Case("tcp://h=1", "'tcp://h' is not a ZMQ endpoint"),
                new Case("tcp://*:5557=1", "is not a ZMQ endpoint to connect to"),
                new Case("tcp://h:0=1", "port 0 is outside 1..65535"),
                new Case("h:5557=1", "is not a ZMQ endpoint"))) {
            IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, () -> EngineEndpoint.parse(c.spec()), c.spec());
            assertTrue(e.getMessage().contains(c.message()), c.spec() + " -> " + e.getMessage());
            assertTrue(e.getMessage().startsWith("engine '" + c.spec() + "'"), e.getMessage());
        }
    }

    @Test
    void theFormatPicksTheDecoderAndDefaultsToVllm() {
        EngineEndpoint plain = EngineEndpoint.parse("tcp://h:1=7");
        assertEquals("vllm", plain.format());
        assertEquals("tcp://h:1=7", plain.toSpec(), "the default format is not spelled out");
        EngineEndpoint named = EngineEndpoint.parse("tcp://h:1=7,format=vllm,replay=tcp://h:2");
        assertEquals(plain.withReplay("tcp://h:2"), named, "format=vllm is the default, in any position");
        assertEquals(named, EngineEndpoint.parse(named.toSpec()));
        assertEquals(named, named.withFormat("vllm"));
        assertInstanceOf(VllmEventDecoder.class, EngineEventDecoder.forEngine(named));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> plain.withFormat("TRTLLM"));
        assertEquals("unknown format 'TRTLLM' (known formats: vllm, sglang, trtllm, vllm-copies)", e.getMessage());
        assertEquals(List.of("vllm", "sglang", "trtllm", "vllm-copies"), EngineEventDecoder.FORMATS);
        assertInstanceOf(SglangEventDecoder.class, EngineEventDecoder.forEngine(plain.withFormat("sglang")));
        assertInstanceOf(TrtllmEventDecoder.class, EngineEventDecoder.forEngine(plain.withFormat("trtllm")));
    }

    @Test
    void aSnapshotEndpointIsTheOptInToTheSnapshotProtocol() {
        EngineEndpoint e = EngineEndpoint.parse("tcp://h:1=7,snapshot=tcp://h:3,format=vllm-copies");
        assertEquals(Optional.of("tcp://h:3"), e.snapshotEndpoint());
        assertEquals(Optional.empty(), e.replayEndpoint());
        assertEquals("vllm-copies", e.format(), "the payload format is independent of the protocol");
        assertEquals("tcp://h:1=7,snapshot=tcp://h:3,format=vllm-copies", e.toSpec());
        assertEquals(e, EngineEndpoint.parse(e.toSpec()));
        assertEquals(e, EngineEndpoint.parse("tcp://h:1=7,format=vllm-copies").withSnapshot("tcp://h:3"));
        assertEquals(
                e.withSnapshot("tcp://h:3"),
                EngineEndpoint.parse("tcp://h:1=7,replay=tcp://h:2,format=vllm-copies")
                        .withSnapshot("tcp://h:3"),
                "withSnapshot drops the replay endpoint it replaces");
        assertEquals(Optional.empty(), EngineEndpoint.parse("tcp://h:1=7").snapshotEndpoint());
    }
}
