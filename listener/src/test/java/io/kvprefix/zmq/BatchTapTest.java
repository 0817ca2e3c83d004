package io.kvprefix.zmq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.zmq.SubscriberStats.Counter;
import io.kvprefix.zmq.testing.PythonPublisher;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A subscriber without an index hands a {@link BatchTap} every batch in order (a dropped range
 * filled by replay) and the clears it would apply; {@link ResumePoint} takes a quiet engine's stream
 * up after a given batch, and clears when the engine's buffer no longer reaches it.
 */
class BatchTapTest {
    private static final String SPEC = """
            {"seed": 5, "engines": [
             {"name": "A", "encoding": "array", "replay": "plain", "batches": 60, "drop": [[20, 24]]},
             {"name": "B", "encoding": "map", "replay": "plain", "ranks": [0], "batches": 60, "buffer": 8}]}""";

    @TempDir
    Path dir;

    /** What a tap was handed, in order: batch sequence numbers, and -1 for a clear. */
    private static final class Recorder implements BatchTap {
        final List<Long> seen = new ArrayList<>();

        @Override
        public synchronized void batch(EngineEndpoint engine, long seq, byte[] payload) {
            assertTrue(payload.length > 0);
            seen.add(seq);
        }

        @Override
        public synchronized void cleared(EngineEndpoint engine) {
            seen.add(-1L);
        }

        synchronized List<Long> seen() {
            return List.copyOf(seen);
        }
    }

    @Test
    void aTapSeesEveryBatchInOrderAndAResumeTakesUpTheRest() throws Exception {
        try (PythonPublisher pub = new PythonPublisher(dir, SPEC)) {
            EngineEndpoint a = EngineEndpoint.of(pub.ports("A").pubEndpoint(), 1)
                    .withReplay(pub.ports("A").replayEndpoint());
            EngineEndpoint b = EngineEndpoint.of(pub.ports("B").pubEndpoint(), 2)
                    .withReplay(pub.ports("B").replayEndpoint());
            Recorder ra = new Recorder();
            Recorder rb = new Recorder();
            try (KvEventSubscriber sa = KvEventSubscriber.builder(ra)
                            .replayTimeout(Duration.ofSeconds(5))
                            .build();
                    KvEventSubscriber sb = KvEventSubscriber.builder(rb).build()) {
                sa.addEngine(a);
                sb.addEngine(b);
                Map<String, Long> last = pub.awaitDone(30);
                assertEquals(59L, last.get("A"));
                await(() -> ra.seen().size() == 60 && rb.seen().size() == 60, () -> ra.seen() + " " + rb.seen());
                assertEquals(LongStream.range(0, 60).boxed().toList(), ra.seen());
                assertEquals(LongStream.range(0, 60).boxed().toList(), rb.seen());
                SubscriberStats.Counts c = sa.stats().total();
                assertTrue(c.get(Counter.REPLAYED_BATCHES) >= 5, sa.stats().toJson());
                assertEquals(
                        0, c.events(), "a tap applies no event: " + sa.stats().toJson());
            }

            // The engines are quiet now. A resumed subscription asks for the rest at once.
            Recorder resumed = new Recorder();
            Recorder lost = new Recorder();
            try (KvEventSubscriber s = KvEventSubscriber.builder(resumed).build();
                    KvEventSubscriber t = KvEventSubscriber.builder(lost).build()) {
                s.addEngine(a, ResumePoint.after(39));
                t.addEngine(b, ResumePoint.after(10)); // B's buffer holds 52..59: 11..51 are lost
                await(
                        () -> resumed.seen().size() == 20 && lost.seen().size() == 9,
                        () -> resumed.seen() + " " + lost.seen() + " "
                                + t.stats().toJson());
                assertEquals(LongStream.range(40, 60).boxed().toList(), resumed.seen());
                List<Long> want = new ArrayList<>(List.of(-1L));
                LongStream.range(52, 60).forEach(want::add);
                assertEquals(want, lost.seen());
                assertEquals(
                        1, t.stats().total().get(Counter.RESYNCS), t.stats().toJson());
                assertEquals(
                        0, s.stats().total().get(Counter.RESYNCS), s.stats().toJson());
                assertEquals(59, s.stats().engines().get(0).lastSeq());
            }
        }
    }

    /** A resume point is the last batch held: at least 0. */
    @Test
    void aResumePointIsChecked() {
        assertEquals(8, ResumePoint.after(7).nextSeq());
        try {
            ResumePoint.after(-1);
            throw new AssertionError("accepted -1");
        } catch (IllegalArgumentException expected) {
            assertTrue(expected.getMessage().contains("lastSeq must be >= 0"));
        }
    }

    private static void await(BooleanSupplier done, java.util.function.Supplier<String> what)
            throws InterruptedException {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out: " + what.get());
            }
            Thread.sleep(20);
        }
        Thread.sleep(200); // nothing more arrives
        if (!done.getAsBoolean()) {
            throw new AssertionError("more arrived: " + what.get());
        }
    }
}
