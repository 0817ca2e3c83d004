package io.kvprefix.zmq.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.BlockHasher;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.zmq.KvEventSubscriber;
import io.kvprefix.zmq.SubscriberStats;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * What the listener's end-to-end tests check: that a subscriber has caught up with what a publisher
 * published, and that the index it fed answers every query of the publishers' truth files exactly as
 * the oracle does (a second index fed from the truth by the rules a correct subscriber follows).
 *
 * <p>Thread-safety: stateless.
 */
public final class IndexCheck {
    private IndexCheck() {}

    /** Waits until {@code done} holds for the stats of {@code sub}; fails with them (and {@code context}) if it does not in time. */
    public static SubscriberStats await(
            KvEventSubscriber sub, Predicate<SubscriberStats> done, Duration timeout, Supplier<String> context)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            SubscriberStats s = sub.stats();
            if (done.test(s)) {
                return s;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not caught up within " + timeout + ": " + s.toJson() + "\n" + context.get());
            }
            Thread.sleep(20);
        }
    }

    /** True if the engine at {@code endpoint} has applied batch {@code last}, holds nothing back and is live. */
    public static boolean caughtUp(SubscriberStats s, String endpoint, long last) {
        return s.engine(endpoint)
                .map(e -> e.lastSeq() == last
                        && e.pendingBatches() == 0
                        && e.state().equals("live"))
                .orElse(false);
    }

    /**
     * Asserts that {@code actual} holds as many blocks per worker as {@code oracle} and answers every
     * query of {@code truths} the same; returns how many queries matched something.
     */
    public static int assertSameAnswers(List<Truth> truths, PrefixIndex actual, PrefixIndex oracle, String why) {
        assertEquals(oracle.stats().blocksPerWorker(), actual.stats().blocksPerWorker(), "blocks per worker " + why);
        Map<String, BlockHasher> hashers = new HashMap<>();
        int nonEmpty = 0;
        int n = 0;
        for (Truth truth : truths) {
            for (Truth.Query q : truth.queries()) {
                BlockHasher h = hashers.computeIfAbsent(
                        q.blockSize() + "/" + q.lora(),
                        k -> BlockHasher.builder()
                                .blockSize(q.blockSize())
                                .loraName(q.lora())
                                .build());
                MatchResult got = new MatchResult();
                MatchResult want = new MatchResult();
                actual.match(q.tokens(), 0, q.tokens().length, h, q.mm(), got);
                oracle.match(q.tokens(), 0, q.tokens().length, h, q.mm(), want);
                assertEquals(want.scores(), got.scores(), "query " + n + " of engine " + q.engine() + " " + why);
                nonEmpty += got.isEmpty() ? 0 : 1;
                n++;
            }
        }
        assertTrue(n > 0, "no queries " + why);
        return nonEmpty;
    }
}
