package io.kvprefix.zmq.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.zmq.SubscriberStats.Counter;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/** The start / gap / replay / restart / resync rules of {@link EngineSync}, driven without sockets. */
class EngineSyncTest {
    private static final long MS = 1_000_000L;
    private static final long TIMEOUT = 1_000 * MS;
    /** A tenth of the timeout: how long answers may pause. */
    private static final long STALL = 100 * MS;

    /** Records what the state machine asked for, as a readable script. */
    static final class ScriptPort extends ScriptedPort implements EngineSync.Port {
        final List<Long> applied = new ArrayList<>();
        boolean replaySendWorks = true;

        @Override
        public void apply(long seq, byte[] payload) {
            applied.add(seq);
            actions.add("apply " + seq);
        }

        @Override
        public boolean requestReplay(long fromSeq) {
            actions.add("replay " + fromSeq);
            return replaySendWorks;
        }

        @Override
        public void abandonReplay() {
            actions.add("abandon");
        }
    }

    final ScriptPort port = new ScriptPort();
    final EngineCounters counters = new EngineCounters();

    EngineSync sync(boolean replay, int maxPending) {
        return new EngineSync(port, counters, replay, 0, null, TIMEOUT, maxPending);
    }

    /** A started engine with a replay endpoint whose start-up request found nothing; the script cleared. */
    EngineSync started() {
        return started(100);
    }

    EngineSync started(int maxPending) {
        EngineSync s = sync(true, maxPending);
        s.start(0);
        s.onReplayEnd(0);
        port.actions.clear();
        counters.add(Counter.REPLAYS, -counters.get(Counter.REPLAYS));
        return s;
    }

    /** The bytes the engine published as batch {@code seq}. */
    static byte[] p(long seq) {
        return new byte[] {(byte) seq, (byte) (seq >> 8)};
    }

    /** The bytes another process published as batch {@code seq}. */
    static byte[] other(long seq) {
        return new byte[] {(byte) seq, (byte) (seq >> 8), 7};
    }

    void live(EngineSync s, long... seqs) {
        for (long q : seqs) {
            s.onLive(q, null, p(q), 0);
        }
    }

    void replayed(EngineSync s, long... seqs) {
        for (long q : seqs) {
            s.onReplayBatch(q, p(q), 0);
        }
    }

    static long[] range(long from, long toInclusive) {
        return LongStream.rangeClosed(from, toInclusive).toArray();
    }

    static List<String> script(String... lines) {
        return List.of(lines);
    }

    @Test
    void withoutReplayInOrderBatchesAreApplied() {
        EngineSync s = sync(false, 100);
        s.start(0);
        assertEquals("waiting", s.state());
        live(s, 0, 1, 2, 3);
        assertEquals(List.of(0L, 1L, 2L, 3L), port.applied);
        assertEquals("live", s.state());
        assertEquals(3, s.lastApplied());
        assertEquals(4, counters.get(Counter.BATCHES));
        assertEquals(0, counters.get(Counter.REPLAYS));
    }

    @Test
    void anEngineWithAReplayEndpointIsAskedAtOnceWithoutWaitingForALiveBatch() {
        EngineSync s = sync(true, 100);
        s.start(0);
        assertEquals("replaying", s.state());
        replayed(s, 0, 1, 2);
        s.onReplayEnd(0);
        assertEquals(script("replay 0", "apply 0", "apply 1", "apply 2"), port.actions);
        assertEquals("live", s.state());
        live(s, 3);
        assertEquals(3, s.lastApplied());
        assertEquals(0, counters.get(Counter.LATE_JOINS));
    }

    @Test
    void anIdleEngineIsSyncedOnceItsStartUpReplayAnsweredWithNothing() {
        EngineSync s = sync(true, 100);
        s.start(0);
        assertEquals("replaying", s.state());
        s.onReplayEnd(0); // vLLM's end marker alone: its buffer is empty, it has published nothing
        // before: "waiting" for good, and an engine with a replay socket that is waiting is not ready
        assertEquals("live", s.state());
        assertEquals(List.of(), port.applied);
        assertEquals(-1, s.lastApplied());
        live(s, 0);
        assertEquals(List.of(0L), port.applied);
        assertEquals("live", s.state());
    }

    @Test
    void liveBatchesArrivingDuringTheStartUpReplayWaitAndTheReplayEndsOnceCaughtUp() {
        EngineSync s = sync(true, 100);
        s.start(0);
        live(s, 3, 4);
        assertEquals(2, s.pending());
        replayed(s, 0, 1, 2, 3, 4);
        // caught up with the live stream: the rest of the answer is not needed
        assertEquals(
                script("replay 0", "apply 0", "apply 1", "apply 2", "apply 3", "apply 4", "abandon"), port.actions);
        assertEquals(2, counters.get(Counter.DUPLICATES));
        s.onReplayEnd(0); // its end marker, if it still comes, is stale
        assertEquals(1, counters.get(Counter.STALE_REPLAY_ANSWERS));
        live(s, 5);
        assertEquals(5, s.lastApplied());
    }

    @Test
    void aGapIsAskedForFromTheLastBatchAppliedWhoseBytesMustComeBack() {
        EngineSync s = started();
        live(s, 0, 1, 2, 6); // 3..5 lost
        assertEquals("replaying", s.state());
        live(s, 7);
        replayed(s, 2, 3, 4, 5, 6, 7);
        live(s, 8);
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L), port.applied);
        assertEquals(
                script(
                        "apply 0",
                        "apply 1",
                        "apply 2",
                        "replay 2",
                        "apply 3",
                        "apply 4",
                        "apply 5",
                        "apply 6",
                        "apply 7",
                        "abandon",
                        "apply 8"),
                port.actions);
        assertEquals(1, counters.get(Counter.GAPS));
        assertEquals(3, counters.get(Counter.MISSED_BATCHES));
        assertEquals(5, counters.get(Counter.REPLAYED_BATCHES));
        assertEquals(2, counters.get(Counter.DUPLICATES)); // the held-back 6 and 7
        assertEquals(0, counters.get(Counter.RESTARTS));
    }

    @Test
    void theLastBatchReplayedWithOtherBytesIsARestartAndTheNewStreamIsFetchedFromZero() {
        EngineSync s = started();
        live(s, 0, 1, 2, 3, 40); // a new process has published up to 40 meanwhile
        s.onReplayBatch(3, other(3), 0);
        assertEquals(1, counters.get(Counter.RESTARTS));
        for (long q = 0; q <= 41; q++) {
            s.onReplayBatch(q, other(q), 0);
        }
        s.onReplayEnd(0);
        List<String> want = new ArrayList<>(List.of("apply 0", "apply 1", "apply 2", "apply 3"));
        want.addAll(List.of("replay 3", "abandon", "clear", "replay 0"));
        for (long q = 0; q <= 41; q++) {
            want.add("apply " + q);
        }
        assertEquals(want, port.actions);
        assertEquals(0, counters.get(Counter.RESYNCS));
        assertEquals(41, s.lastApplied());
    }

    @Test
    void nothingAtOrAfterTheLastBatchAppliedIsARestart() {
        EngineSync s = started();
        live(s, 0, 1, 2, 3, 9);
        s.onReplayEnd(0); // the new process has not reached 3
        assertEquals(script("apply 0", "apply 1", "apply 2", "apply 3", "replay 3", "clear", "replay 0"), port.actions);
        assertEquals(1, counters.get(Counter.RESTARTS));
    }

    @Test
    void aReconnectionChecksTheLastBatchSoARestartPastTheOldNumbersIsFound() {
        EngineSync s = started();
        live(s, 0, 1, 2);
        s.onConnected(true, 0); // same process: the check passes and nothing changes
        s.onReplayBatch(2, p(2), 0);
        s.onReplayEnd(0);
        assertEquals(0, counters.get(Counter.RESTARTS));
        s.onConnected(true, 0); // a new process that published exactly up to 2 and then nothing
        s.onReplayBatch(2, other(2), 0);
        assertEquals(1, counters.get(Counter.RESTARTS));
        assertEquals(2, counters.get(Counter.RECONNECTS));
        assertEquals(
                script("apply 0", "apply 1", "apply 2", "replay 2", "replay 2", "abandon", "clear", "replay 0"),
                port.actions);
        s.onConnected(false, 0); // a first connection asks nothing
        assertEquals(3, counters.get(Counter.REPLAYS));
    }

    @Test
    void aLongReplayIsAskedAgainFromTheNextMissingNumberAndKeepsWhatCamePastAHole() {
        EngineSync s = started(10_000); // what is kept past a hole is bounded like the batches held back
        live(s, 0, 10_000);
        // the ROUTER passes 1..1,000, drops 1,001..1,499, passes 1,500..2,000, drops the rest and the marker
        replayed(s, range(0, 1_000));
        replayed(s, range(1_500, 2_000));
        assertEquals(1_000, s.lastApplied());
        s.onTick(STALL / 2);
        assertEquals(1, counters.get(Counter.REPLAYS));
        s.onTick(STALL + 1); // the answers stopped: asked again at once (the attempt made progress)
        assertEquals(2, counters.get(Counter.REPLAYS));
        assertTrue(port.actions.contains("replay 1000"), port.actions.toString());
        replayed(s, range(1_000, 1_499)); // fills the hole; 1,500..2,000 come from what was kept
        assertEquals(2_000, s.lastApplied());
        replayed(s, range(1_500, 9_000)); // the old answers again, then new ones up to 9,000
        s.onReplayEnd(STALL + 2);
        assertEquals(3, counters.get(Counter.REPLAYS));
        assertTrue(port.actions.get(port.actions.size() - 1).equals("replay 9000"), port.actions.toString());
        replayed(s, range(9_000, 10_000));
        assertEquals(10_000, s.lastApplied());
        assertEquals("live", s.state());
        assertEquals(0, counters.get(Counter.RESYNCS));
        assertEquals(0, counters.get(Counter.REPLAY_FAILURES));
        assertEquals(10_000, counters.get(Counter.REPLAYED_BATCHES));
        assertEquals(LongStream.rangeClosed(0, 10_000).boxed().toList(), port.applied);
    }

    @Test
    void answersBelowTheNumberAskedForAreFutileBackedOffAndBoundedThenTheRangeIsLost() {
        EngineSync s = started();
        live(s, 0, 1, 2, 9);
        long now = 0;
        for (int attempt = 1; attempt <= EngineSync.MAX_FUTILE_ATTEMPTS; attempt++) {
            assertEquals(attempt, counters.get(Counter.REPLAYS), "attempt " + attempt);
            s.onReplayBatch(0, p(0), now); // below the 2 asked for
            s.onReplayBatch(1, p(1), now);
            s.onReplayEnd(now);
            if (attempt < EngineSync.MAX_FUTILE_ATTEMPTS) {
                long backoff = EngineSync.FIRST_BACKOFF_NANOS << (attempt - 1);
                s.onTick(now + backoff - 1);
                assertEquals(attempt, counters.get(Counter.REPLAYS), "backed off " + attempt);
                now += backoff;
                s.onTick(now);
            }
        }
        assertEquals(EngineSync.MAX_FUTILE_ATTEMPTS, counters.get(Counter.REPLAYS));
        assertEquals(2L * EngineSync.MAX_FUTILE_ATTEMPTS, counters.get(Counter.REPLAY_CONTRADICTIONS));
        assertEquals(1, counters.get(Counter.RESYNCS));
        assertEquals(List.of(0L, 1L, 2L, 9L), port.applied);
        assertEquals("clear", port.actions.get(port.actions.size() - 2));
        live(s, 10);
        assertEquals(10, s.lastApplied());
    }

    @Test
    void aBufferThatStartsPastALiveBatchHeldBackIsAContradictionAndTheLiveStreamGoesOn() {
        EngineSync s = started();
        live(s, 0, 1, 2, 5, 6);
        replayed(s, 1_002, 1_003); // numbered past what the live stream has shown
        live(s, 7);
        assertEquals(List.of(0L, 1L, 2L, 5L, 6L, 7L), port.applied);
        assertEquals(1, counters.get(Counter.REPLAY_CONTRADICTIONS));
        assertEquals(1, counters.get(Counter.RESYNCS));
        assertTrue(port.actions.containsAll(List.of("abandon", "clear")));
    }

    @Test
    void aLiveBatchOlderThanTheStartAReplayClaimedRefutesIt() {
        EngineSync s = sync(true, 100);
        s.start(0);
        replayed(s, 1_000, 1_001); // a buffer "starting" at 1,000
        s.onReplayEnd(0);
        live(s, 5, 6);
        assertEquals(List.of(1_000L, 1_001L, 5L, 6L), port.applied);
        assertEquals(1, counters.get(Counter.LATE_JOINS));
        assertEquals(1, counters.get(Counter.REPLAY_CONTRADICTIONS));
        assertEquals(1, counters.get(Counter.RESYNCS)); // what the replay fed is cleared
        assertEquals(0, counters.get(Counter.DUPLICATES));
    }

    @Test
    void aReplayedBatchWithOtherBytesThanItsLiveCopyIsAContradiction() {
        EngineSync s = started();
        live(s, 0, 3);
        replayed(s, 0, 1, 2);
        s.onReplayBatch(3, other(3), 0);
        assertEquals(List.of(0L, 1L, 2L, 3L), port.applied);
        assertEquals(1, counters.get(Counter.REPLAY_CONTRADICTIONS));
        assertEquals(1, counters.get(Counter.RESYNCS));
    }

    @Test
    void anEvictedRangeClearsTheWorkerAndResumesFromTheBuffer() {
        EngineSync s = started();
        live(s, 0, 1, 9);
        replayed(s, 6, 7, 8, 9); // the buffer no longer holds 1..5
        live(s, 10);
        assertEquals(
                script(
                        "apply 0",
                        "apply 1",
                        "replay 1",
                        "clear",
                        "apply 6",
                        "apply 7",
                        "apply 8",
                        "apply 9",
                        "abandon",
                        "apply 10"),
                port.actions);
        assertEquals(1, counters.get(Counter.RESYNCS));
        assertEquals(1, counters.get(Counter.REPLAY_FAILURES));
        assertEquals(0, counters.get(Counter.REPLAY_CONTRADICTIONS));
    }

    @Test
    void withoutReplayEndpointAGapIsAResync() {
        EngineSync s = sync(false, 100);
        live(s, 0, 1, 5, 6);
        assertEquals(script("apply 0", "apply 1", "clear", "apply 5", "apply 6"), port.actions);
        assertEquals(1, counters.get(Counter.GAPS));
        assertEquals(3, counters.get(Counter.MISSED_BATCHES));
        assertEquals(1, counters.get(Counter.RESYNCS));
    }

    @Test
    void aReplayThatNeverAnswersIsAskedAgainWithBackoffThenGivenUp() {
        EngineSync s = started();
        live(s, 0, 4, 5);
        long now = 0;
        for (int attempt = 1; attempt <= EngineSync.MAX_FUTILE_ATTEMPTS; attempt++) {
            now += TIMEOUT + 1;
            s.onTick(now); // overdue
            if (attempt < EngineSync.MAX_FUTILE_ATTEMPTS) {
                now += EngineSync.FIRST_BACKOFF_NANOS << (attempt - 1);
                s.onTick(now);
            }
        }
        assertEquals(EngineSync.MAX_FUTILE_ATTEMPTS, counters.get(Counter.REPLAYS));
        assertEquals(List.of(0L, 4L, 5L), port.applied);
        assertEquals(1, counters.get(Counter.RESYNCS));
        assertEquals(1, counters.get(Counter.REPLAY_FAILURES));
        s.onReplayBatch(1, p(1), now); // a late answer of an abandoned request
        assertEquals(1, counters.get(Counter.STALE_REPLAY_ANSWERS));
    }

    @Test
    void aStartUpRequestNobodyAnswersWaitsForTheEngineToShowUp() {
        EngineSync s = sync(true, 100);
        s.start(0);
        long now = 0;
        for (int attempt = 1; attempt <= EngineSync.MAX_FUTILE_ATTEMPTS; attempt++) {
            now += TIMEOUT + 1;
            s.onTick(now);
            now += EngineSync.FIRST_BACKOFF_NANOS << (attempt - 1);
            s.onTick(now);
        }
        // before: "waiting", and no failure counted, so /health/ready said ready with nothing applied
        assertEquals("absent", s.state());
        assertEquals(1, counters.get(Counter.REPLAY_FAILURES));
        assertEquals(EngineSync.MAX_FUTILE_ATTEMPTS, counters.get(Counter.REPLAYS));
        s.onConnected(false, now); // the engine is up now
        assertEquals(EngineSync.MAX_FUTILE_ATTEMPTS + 1, counters.get(Counter.REPLAYS));
        replayed(s, 0, 1);
        s.onReplayEnd(now);
        assertEquals(List.of(0L, 1L), port.applied);
        assertEquals(0, counters.get(Counter.LATE_JOINS));
    }

    @Test
    void aStartUpRequestNobodyAnswersIsSentAgainAfterALongPause() {
        EngineSync s = sync(true, 100);
        s.start(0);
        long now = 0;
        for (int attempt = 1; attempt <= EngineSync.MAX_FUTILE_ATTEMPTS; attempt++) {
            now += TIMEOUT + 1;
            s.onTick(now); // the last one gives up: the request waits
            if (attempt < EngineSync.MAX_FUTILE_ATTEMPTS) {
                now += EngineSync.FIRST_BACKOFF_NANOS << (attempt - 1);
                s.onTick(now);
            }
        }
        assertEquals(EngineSync.MAX_FUTILE_ATTEMPTS, counters.get(Counter.REPLAYS));
        s.onTick(now + EngineSync.DEFERRED_NANOS - 1);
        assertEquals(EngineSync.MAX_FUTILE_ATTEMPTS, counters.get(Counter.REPLAYS));
        s.onTick(now + EngineSync.DEFERRED_NANOS); // only the replay socket was down: asked again anyway
        assertEquals(EngineSync.MAX_FUTILE_ATTEMPTS + 1, counters.get(Counter.REPLAYS));
        replayed(s, 0, 1, 2);
        s.onReplayEnd(now + EngineSync.DEFERRED_NANOS);
        assertEquals(List.of(0L, 1L, 2L), port.applied);
        assertEquals("live", s.state());
    }

    @Test
    void pendingOverflowGivesUpTheReplay() {
        EngineSync s = started(3);
        live(s, 0, 2, 3, 4);
        assertEquals("replaying", s.state());
        live(s, 5);
        assertEquals(
                script("apply 0", "replay 0", "abandon", "clear", "apply 2", "apply 3", "apply 4", "apply 5"),
                port.actions.subList(0, 8));
        assertEquals("live", s.state());
    }

    @Test
    void aSequenceThatGoesBackIsARestart() {
        EngineSync s = sync(false, 100);
        live(s, 0, 1, 2, 3, 0, 1);
        assertEquals(script("apply 0", "apply 1", "apply 2", "apply 3", "clear", "apply 0", "apply 1"), port.actions);
        assertEquals(1, counters.get(Counter.RESTARTS));
        assertEquals(0, counters.get(Counter.RESYNCS));
    }

    @Test
    void aNewPublisherIdentityIsARestartEvenWhenTheNumbersGoOn() {
        EngineSync s = sync(false, 100);
        s.onLive(0, "publisher a", p(0), 0);
        s.onLive(1, "publisher a", p(1), 0);
        s.onLive(2, "publisher b", other(2), 0); // exactly the next number, from another process
        assertEquals(1, counters.get(Counter.RESTARTS));
        assertEquals(1, counters.get(Counter.LATE_JOINS)); // 0 and 1 of the new process were never seen
        assertEquals(script("apply 0", "apply 1", "clear", "apply 2"), port.actions);
    }

    @Test
    void aLateJoinWithoutReplayStartsWhereItIs() {
        EngineSync s = sync(false, 100);
        live(s, 7, 8);
        assertEquals(List.of(7L, 8L), port.applied);
        assertEquals(1, counters.get(Counter.LATE_JOINS));
        assertTrue(port.actions.stream().noneMatch(a -> a.equals("clear")));
    }

    @Test
    void aStartUpReplayFromATruncatedBufferIsALateJoinNotAResync() {
        EngineSync s = sync(true, 100);
        s.start(0);
        live(s, 50);
        replayed(s, 48, 49, 50);
        live(s, 51);
        assertEquals(script("replay 0", "apply 48", "apply 49", "apply 50", "abandon", "apply 51"), port.actions);
        assertEquals(1, counters.get(Counter.LATE_JOINS));
        assertEquals(0, counters.get(Counter.RESYNCS));
        assertEquals(0, counters.get(Counter.REPLAY_FAILURES));
    }

    @Test
    void aResumeWithTheLastBatchHashAsksFromThatBatchAndChecksIt() {
        EngineSync s = new EngineSync(port, counters, true, 200, EngineSync.hash(p(199)), TIMEOUT, 100);
        assertEquals(199, s.lastApplied());
        assertEquals("live", s.state());
        s.start(0);
        replayed(s, 199, 200, 201);
        s.onReplayEnd(0);
        assertEquals(script("replay 199", "apply 200", "apply 201"), port.actions);
        assertEquals(0, counters.get(Counter.RESTARTS));
    }

    @Test
    void aResumeWithoutTheHashAsksAfterThePoint() {
        EngineSync s = new EngineSync(port, counters, true, 200, null, TIMEOUT, 100);
        s.start(0);
        replayed(s, 200);
        s.onReplayEnd(0);
        assertEquals(script("replay 200", "apply 200"), port.actions);
    }

    @Test
    void aResumeWhoseEngineNoLongerHasTheRangeIsAResync() {
        EngineSync s = new EngineSync(port, counters, true, 200, null, TIMEOUT, 100);
        s.start(0);
        replayed(s, 500, 501);
        s.onReplayEnd(0);
        assertEquals(script("replay 200", "clear", "apply 500", "apply 501"), port.actions);
        assertEquals(1, counters.get(Counter.RESYNCS));
    }

    @Test
    void aRequestThatCannotBeSentIsEndedAtTheNextTick() {
        EngineSync s = started();
        port.replaySendWorks = false;
        live(s, 0, 2);
        s.onTick(1);
        assertEquals(script("apply 0", "replay 0", "abandon"), port.actions.subList(0, 3));
        assertEquals("replaying", s.state()); // asked again after the backoff
    }
}
