package io.kvprefix.zmq.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.zmq.SubscriberStats.Counter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The gap / replay / resync rules of {@link EngineSync}, driven without sockets. */
class EngineSyncTest {
    private static final long TIMEOUT = 1_000_000_000L;

    /** Records what the state machine asked for, as a readable script. */
    static final class FakePort implements EngineSync.Port {
        final List<String> actions = new ArrayList<>();
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

        @Override
        public void clearWorkers() {
            actions.add("clear");
        }

        @Override
        public void log(boolean warning, String message) {}
    }

    final FakePort port = new FakePort();
    final EngineCounters counters = new EngineCounters();

    EngineSync sync(boolean replay, int maxPending) {
        return new EngineSync(port, counters, replay, true, TIMEOUT, maxPending);
    }

    static byte[] p(long seq) {
        return new byte[] {(byte) seq};
    }

    void live(EngineSync s, long... seqs) {
        for (long q : seqs) {
            s.onLive(q, p(q), 0);
        }
    }

    void replayed(EngineSync s, long... seqs) {
        for (long q : seqs) {
            s.onReplayBatch(q, p(q), 0);
        }
    }

    @Test
    void inOrderBatchesAreApplied() {
        EngineSync s = sync(true, 100);
        assertEquals("waiting", s.state());
        live(s, 0, 1, 2, 3);
        assertEquals(List.of(0L, 1L, 2L, 3L), port.applied);
        assertEquals("live", s.state());
        assertEquals(3, s.lastApplied());
        assertEquals(4, counters.get(Counter.BATCHES));
        assertEquals(0, counters.get(Counter.GAPS));
    }

    @Test
    void gapIsFilledByReplayAndLiveDuplicatesAreDropped() {
        EngineSync s = sync(true, 100);
        live(s, 0, 1, 2, 6); // 3..5 lost
        assertEquals("replaying", s.state());
        live(s, 7); // held back
        assertEquals(2, s.pending());
        replayed(s, 3, 4, 5, 6, 7);
        s.onReplayEnd(0);
        live(s, 8);
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L), port.applied);
        assertEquals(
                List.of(
                        "apply 0",
                        "apply 1",
                        "apply 2",
                        "replay 3",
                        "apply 3",
                        "apply 4",
                        "apply 5",
                        "apply 6",
                        "apply 7",
                        "apply 8"),
                port.actions);
        assertEquals(1, counters.get(Counter.GAPS));
        assertEquals(3, counters.get(Counter.MISSED_BATCHES));
        assertEquals(1, counters.get(Counter.REPLAYS));
        assertEquals(5, counters.get(Counter.REPLAYED_BATCHES));
        assertEquals(2, counters.get(Counter.DUPLICATES)); // the held-back 6 and 7
        assertEquals(0, counters.get(Counter.RESYNCS));
        assertEquals(0, s.pending());
    }

    @Test
    void liveCopiesStillInFlightAfterTheReplayAreDuplicatesNotRestarts() {
        EngineSync s = sync(true, 100);
        live(s, 0, 3);
        replayed(s, 1, 2, 3, 4, 5);
        s.onReplayEnd(0);
        live(s, 4, 5, 6); // 4 and 5 were published before the replay was served
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L, 6L), port.applied);
        assertEquals(3, counters.get(Counter.DUPLICATES));
        assertEquals(0, counters.get(Counter.RESTARTS));
        live(s, 2); // after an in-order live batch, going back is a restart
        assertEquals(1, counters.get(Counter.RESTARTS));
    }

    @Test
    void evictedRangeClearsTheWorkerAndResumesFromTheBuffer() {
        EngineSync s = sync(true, 100);
        live(s, 0, 1, 9);
        replayed(s, 6, 7, 8, 9); // the buffer no longer holds 2..5
        s.onReplayEnd(0);
        live(s, 10);
        assertEquals(
                List.of(
                        "apply 0",
                        "apply 1",
                        "replay 2",
                        "clear",
                        "apply 6",
                        "apply 7",
                        "apply 8",
                        "apply 9",
                        "apply 10"),
                port.actions);
        assertEquals(1, counters.get(Counter.RESYNCS));
        assertEquals(1, counters.get(Counter.REPLAY_FAILURES));
        assertEquals(1, counters.get(Counter.DUPLICATES));
    }

    @Test
    void withoutReplayEndpointAGapIsAResync() {
        EngineSync s = sync(false, 100);
        live(s, 0, 1, 5, 6);
        assertEquals(List.of("apply 0", "apply 1", "clear", "apply 5", "apply 6"), port.actions);
        assertEquals(1, counters.get(Counter.GAPS));
        assertEquals(3, counters.get(Counter.MISSED_BATCHES));
        assertEquals(1, counters.get(Counter.RESYNCS));
        assertEquals(0, counters.get(Counter.REPLAYS));
    }

    @Test
    void replayTimeoutGivesUpAndAppliesHeldBackBatches() {
        EngineSync s = sync(true, 100);
        live(s, 0, 4, 5);
        s.onTick(TIMEOUT / 2);
        assertEquals("replaying", s.state());
        s.onTick(TIMEOUT + 1);
        assertEquals(List.of("apply 0", "replay 1", "abandon", "clear", "apply 4", "apply 5"), port.actions);
        assertEquals(1, counters.get(Counter.REPLAY_FAILURES));
        assertEquals(1, counters.get(Counter.RESYNCS));
        s.onReplayBatch(1, p(1), TIMEOUT + 2); // a late answer of the abandoned replay
        s.onReplayEnd(TIMEOUT + 2);
        assertEquals(2, counters.get(Counter.STALE_REPLAY_ANSWERS));
        assertEquals(List.of(0L, 4L, 5L), port.applied);
    }

    @Test
    void replayThatCannotBeSentIsGivenUpAtTheNextTick() {
        port.replaySendWorks = false;
        EngineSync s = sync(true, 100);
        live(s, 0, 2);
        s.onTick(1);
        assertEquals(List.of("apply 0", "replay 1", "abandon", "clear", "apply 2"), port.actions);
    }

    @Test
    void emptyReplayMeansTheRangeIsLost() {
        EngineSync s = sync(true, 100);
        live(s, 0, 3);
        s.onReplayEnd(0);
        assertEquals(List.of("apply 0", "replay 1", "clear", "apply 3"), port.actions);
        assertEquals(1, counters.get(Counter.RESYNCS));
    }

    @Test
    void holesInAReplayAreAskedForAgainThenGivenUp() {
        EngineSync s = sync(true, 100);
        live(s, 0, 5);
        replayed(s, 1, 2, 4, 5); // 3 dropped by the publisher's ROUTER
        s.onReplayEnd(0);
        replayed(s, 3, 4, 5);
        s.onReplayEnd(0);
        assertEquals(
                List.of("apply 0", "replay 1", "apply 1", "apply 2", "replay 3", "apply 3", "apply 4", "apply 5"),
                port.actions);
        assertEquals(2, counters.get(Counter.REPLAYS));
        assertEquals(0, counters.get(Counter.RESYNCS));

        port.actions.clear();
        live(s, 9);
        for (int attempt = 0; attempt < EngineSync.MAX_REPLAY_ATTEMPTS; attempt++) {
            replayed(s, 6, 8, 9);
            s.onReplayEnd(0);
        }
        assertEquals(List.of("replay 6", "apply 6", "replay 7", "replay 7", "clear", "apply 9"), port.actions);
        assertEquals(1, counters.get(Counter.RESYNCS));
    }

    @Test
    void pendingOverflowGivesUpTheReplay() {
        EngineSync s = sync(true, 3);
        live(s, 0, 2, 3, 4);
        assertEquals("replaying", s.state());
        live(s, 5);
        assertEquals(
                List.of("apply 0", "replay 1", "abandon", "clear", "apply 2", "apply 3", "apply 4", "apply 5"),
                port.actions);
        assertEquals("live", s.state());
    }

    @Test
    void restartClearsAndStartsOver() {
        EngineSync s = sync(false, 100);
        live(s, 0, 1, 2, 3, 0, 1);
        assertEquals(List.of("apply 0", "apply 1", "apply 2", "apply 3", "clear", "apply 0", "apply 1"), port.actions);
        assertEquals(1, counters.get(Counter.RESTARTS));
        assertEquals(0, counters.get(Counter.RESYNCS));
    }

    @Test
    void firstBatchLaterThanZeroBootstrapsFromZero() {
        EngineSync s = sync(true, 100);
        live(s, 3, 4);
        replayed(s, 0, 1, 2, 3, 4);
        s.onReplayEnd(0);
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L), port.applied);
        assertEquals(List.of("replay 0", "apply 0", "apply 1", "apply 2", "apply 3", "apply 4"), port.actions);
        assertEquals(0, counters.get(Counter.GAPS));
        assertEquals(0, counters.get(Counter.LATE_JOINS));
        assertEquals(2, counters.get(Counter.DUPLICATES));
    }

    @Test
    void bootstrapFromATruncatedBufferIsALateJoinNotAResync() {
        EngineSync s = sync(true, 100);
        live(s, 50);
        replayed(s, 48, 49, 50); // the buffer starts at 48
        s.onReplayEnd(0);
        live(s, 51);
        assertEquals(List.of("replay 0", "apply 48", "apply 49", "apply 50", "apply 51"), port.actions);
        assertEquals(1, counters.get(Counter.LATE_JOINS));
        assertEquals(0, counters.get(Counter.RESYNCS));
        assertEquals(0, counters.get(Counter.REPLAY_FAILURES));
        assertEquals(0, counters.get(Counter.GAPS));
        assertEquals(1, counters.get(Counter.DUPLICATES));
    }

    @Test
    void lateJoinWithoutReplayStartsWhereItIs() {
        EngineSync s = sync(false, 100);
        live(s, 7, 8);
        assertEquals(List.of(7L, 8L), port.applied);
        assertEquals(1, counters.get(Counter.LATE_JOINS));
        assertTrue(port.actions.stream().noneMatch(a -> a.equals("clear")));
    }

    // ------------------------------------------------------------------ resuming after a restore

    @Test
    void aResumeAsksForWhatFollowsTheSnapshotAtOnce() {
        EngineSync s = sync(true, 100);
        s.resume(99, 0);
        assertEquals(List.of("replay 100"), port.actions);
        assertEquals("replaying", s.state());
        live(s, 103); // a live batch during the replay waits
        replayed(s, 100, 101, 102, 103);
        s.onReplayEnd(0);
        live(s, 104);
        assertEquals(List.of(100L, 101L, 102L, 103L, 104L), port.applied);
        assertEquals(0, counters.get(Counter.RESYNCS));
        assertEquals(0, counters.get(Counter.LATE_JOINS));
        assertEquals(1, counters.get(Counter.DUPLICATES)); // 103, live and replayed
        assertEquals(104, s.lastApplied());
    }

    @Test
    void aResumeWithNothingNewIsNoLoss() {
        EngineSync s = sync(true, 100);
        s.resume(41, 0);
        s.onReplayEnd(0); // the engine's buffer holds nothing after 41
        assertEquals("live", s.state());
        live(s, 42, 43);
        assertEquals(List.of("replay 42", "apply 42", "apply 43"), port.actions);
        assertEquals(0, counters.get(Counter.RESYNCS));
        assertEquals(0, counters.get(Counter.REPLAY_FAILURES));
    }

    @Test
    void aResumeTheBufferNoLongerReachesIsAResync() {
        EngineSync s = sync(true, 100);
        s.resume(99, 0);
        replayed(s, 130, 131); // the buffer starts at 130: 100..129 are lost
        s.onReplayEnd(0);
        assertEquals(List.of("replay 100", "clear", "apply 130", "apply 131"), port.actions);
        assertEquals(1, counters.get(Counter.RESYNCS));
        assertEquals(1, counters.get(Counter.REPLAY_FAILURES));
        assertEquals(0, counters.get(Counter.LATE_JOINS));
    }

    @Test
    void aResumeThatTimesOutIsAResync() {
        EngineSync s = sync(true, 100);
        s.resume(9, 0);
        s.onTick(TIMEOUT + 1);
        live(s, 12);
        assertEquals(List.of("replay 10", "abandon", "clear", "apply 12"), port.actions);
        assertEquals(1, counters.get(Counter.RESYNCS));
    }

    @Test
    void aResumeWithoutReplayWaitsForTheNextLiveBatch() {
        EngineSync s = sync(false, 100);
        s.resume(5, 0);
        assertEquals(List.of(), port.actions);
        live(s, 6, 7);
        assertEquals(List.of(6L, 7L), port.applied);
        live(s, 9); // a gap, no replay: lost
        assertEquals(List.of("apply 6", "apply 7", "clear", "apply 9"), port.actions);
        assertEquals(1, counters.get(Counter.RESYNCS));
    }

    @Test
    void aResumeWhoseEngineRestartedClearsItsWorkers() {
        EngineSync s = sync(false, 100);
        s.resume(500, 0);
        live(s, 0, 1); // numbered from 0 again: a new engine process, whose cache started empty
        assertEquals(List.of("clear", "apply 0", "apply 1"), port.actions);
        assertEquals(1, counters.get(Counter.RESTARTS));
    }
}
