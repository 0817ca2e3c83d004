package io.kvprefix.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.Worker;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/** {@code --engine WORKER[/RANK]=http://HOST:PORT[,events=...][,replay=...]}: what it reads, and what it refuses with which words. */
class EngineSpecTest {
    @Test
    void readsTheUrlTheEventsAndTheReplaySocket() {
        EngineSpec e = EngineSpec.parse("7=http://10.0.0.5:8000,events=tcp://10.0.0.5:5557,replay=tcp://10.0.0.5:6557");
        assertEquals(Worker.of(7), e.worker());
        assertEquals("http://10.0.0.5:8000", e.baseUrl().toString());
        assertEquals("10.0.0.5", e.host());
        assertEquals(8000, e.port());
        assertEquals("", e.pathPrefix());
        assertEquals("tcp://10.0.0.5:5557", e.events().orElseThrow().endpoint());
        assertEquals(
                "tcp://10.0.0.5:6557", e.events().orElseThrow().replayEndpoint().orElseThrow());
        assertEquals(7, e.events().orElseThrow().workerId());
        assertEquals(OptionalInt.empty(), e.events().orElseThrow().dpRank(), "without /RANK the batches name the rank");
        assertEquals(e, EngineSpec.parse(e.toSpec()), e.toSpec());
    }

    @Test
    void aRankAPathPrefixAndNoEvents() {
        EngineSpec e = EngineSpec.parse("18446744073709551615/3=http://[::1]:9000/vllm/");
        assertEquals(Worker.of(-1L, 3), e.worker());
        assertEquals("http://[::1]:9000/vllm", e.baseUrl().toString(), "the trailing slash is dropped");
        assertEquals("::1", e.host());
        assertEquals("/vllm", e.pathPrefix());
        assertTrue(e.events().isEmpty());
        assertEquals(e, EngineSpec.parse(e.toSpec()));
        EngineSpec r = EngineSpec.parse("4/1=http://h:1,events=tcp://h:5558,format=sglang,topic=kv");
        assertEquals(Worker.of(4, 1), r.worker());
        assertEquals(OptionalInt.of(1), r.events().orElseThrow().dpRank());
        assertEquals("sglang", r.events().orElseThrow().format());
        assertEquals(r, EngineSpec.parse(r.toSpec()), r.toSpec());
        assertEquals(80, EngineSpec.parse("1=http://h").port());
    }

    @Test
    void badSpecsSayWhatIsWrong() {
        assertBad("http://h:1", "expected WORKER[/RANK]=http://HOST:PORT");
        assertBad("x=http://h:1", "worker id 'x' is not an unsigned 64-bit integer");
        assertBad("1/y=http://h:1", "dp rank 'y'");
        assertBad("1=https://h:1", "must start with http://");
        assertBad("1=h:1", "must start with http://");
        assertBad("1=http://h:1?a=b", "without user, query or fragment");
        assertBad("1=http://h:99999", "outside 1..65535");
        assertBad("1=http://h:1,replay=tcp://h:2", "belong to an events= publisher");
        assertBad("1=http://h:1,events=", "events= needs a ZMQ endpoint");
        assertBad("1=http://h:1,events=tcp://*:5557", "is not a ZMQ endpoint to connect to");
        assertBad("1=http://h:1,nosuch=1", "unknown option 'nosuch'");
        assertBad("1=http://h:1,events=tcp://h:2,format=trt", "unknown format 'trt'");
    }

    private static void assertBad(String spec, String fragment) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> EngineSpec.parse(spec), spec);
        assertTrue(e.getMessage().contains(fragment), spec + ": " + e.getMessage());
        assertTrue(e.getMessage().startsWith("engine '" + spec + "'"), e.getMessage());
    }
}
