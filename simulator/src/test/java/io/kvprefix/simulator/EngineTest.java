package io.kvprefix.simulator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.BlockHasher;
import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.workload.AdmitResult;
import io.kvprefix.workload.MockEngine;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.PriorityQueue;
import java.util.function.LongUnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * The engine model through its public API, driven as a stand-in engine drives it: prompts of real
 * token ids (blocks named by their local hashes), a host of its own with a timer queue, decode runs
 * off so each token is reported at the end of its step, and aborts. Times are worked out by hand:
 * 16-token blocks, prefill at 16,000 tokens/s (1 ms a block), decode 1,000 steps/s (1 ms a step).
 */
class EngineTest {
    private static final BlockHasher HASHER = BlockHasher.of(16);
    private static final Worker W = Worker.of(3);

    /** A host with simulated time and a log of what the engine told it. */
    static final class Host implements EngineHost {
        private record Timer(long at, long seq, Runnable action) {}

        private final PriorityQueue<Timer> timers =
                new PriorityQueue<>((a, b) -> a.at != b.at ? Long.compare(a.at, b.at) : Long.compare(a.seq, b.seq));
        private long now;
        private long seq;
        final List<String> log = new ArrayList<>();
        final List<KvEvent> events = new ArrayList<>();
        final List<int[]> storedTokens = new ArrayList<>();
        private final List<EngineRequest> requests = new ArrayList<>();
        private final List<int[]> prompts = new ArrayList<>();

        void prompt(EngineRequest r, int[] tokens) {
            requests.add(r);
            prompts.add(tokens);
        }

        void runUntilIdle() {
            while (!timers.isEmpty()) {
                Timer t = timers.poll();
                now = t.at;
                t.action.run();
            }
        }

        void runUntil(long at) {
            while (!timers.isEmpty() && timers.peek().at <= at) {
                Timer t = timers.poll();
                now = t.at;
                t.action.run();
            }
            now = at;
        }

        @Override
        public long now() {
            return now;
        }

        @Override
        public void schedule(long at, Runnable action) {
            timers.add(new Timer(Math.max(at, now), seq++, action));
        }

        @Override
        public void publish(EngineRequest source, int firstBlock, List<KvEvent> published) {
            for (KvEvent e : published) {
                events.add(e);
                if (e instanceof KvEvent.Stored s) {
                    // what a stand-in puts on the wire: the stored blocks' own tokens
                    int[] tokens = prompts.get(requests.indexOf(source));
                    storedTokens.add(
                            Arrays.copyOfRange(tokens, firstBlock * 16, (firstBlock + s.blockHashes().length) * 16));
                    log.add(at() + " stored #" + source.trace().index() + " from " + firstBlock + " x"
                            + s.blockHashes().length);
                } else {
                    log.add(at() + " " + e.getClass().getSimpleName() + " #"
                            + source.trace().index());
                }
            }
        }

        @Override
        public void admitted(EngineRequest r, AdmitResult a) {
            log.add(at() + " admitted #" + r.trace().index() + " cached " + r.cachedTokens());
        }

        @Override
        public void firstToken(EngineRequest r) {
            log.add(at() + " first #" + r.trace().index());
        }

        @Override
        public void decoded(EngineRequest r, int tokens) {
            log.add(at() + " decoded #" + r.trace().index() + " +" + tokens + " = " + r.outputSoFar());
        }

        @Override
        public void finished(EngineRequest r) {
            log.add(at() + " finished #" + r.trace().index());
        }

        private String at() {
            return String.format(java.util.Locale.ROOT, "%.4f", now / 1e6);
        }
    }

    private static EngineSettings settings(EngineModel model, int budget) {
        return EngineSettings.defaults()
                .withModel(model)
                .withSpeeds(16_000, 1_000)
                .withLimits(budget, 8)
                .withDecodeRuns(false);
    }

    private static MockEngine cache(int blocks) {
        return new MockEngine(W, blocks, 0, 16, LongUnaryOperator.identity());
    }

    private static int[] tokens(int n, int salt) {
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = salt * 1000 + i;
        }
        return t;
    }

    private static EngineRequest submit(Host h, Engine e, int id, int[] tokens, int output) {
        EngineRequest r = EngineRequest.ofTokens(id, tokens, output, HASHER);
        h.prompt(r, tokens);
        e.submit(r);
        return r;
    }

    @Test
    void aChunkedPrefillPublishesEachStepsBlocksAndStreamsItsTokens() {
        Host h = new Host();
        Engine e = Engine.create(settings(EngineModel.VLLM_CHUNKED, 32), cache(100), h);
        int[] prompt = tokens(84, 1); // 5 full blocks and 4 tokens
        EngineRequest r = submit(h, e, 0, prompt, 3);
        assertEquals(1, e.runningRequests());
        h.runUntilIdle();
        // steps of 32, 32 and 20 prompt tokens (1 ms + 2 ms, 1 ms + 2 ms, 1 ms + 1.25 ms), then two
        // decode steps of one token each (1 ms + 1/16 ms)
        assertEquals(
                List.of(
                        "0.0000 admitted #0 cached 0",
                        "3.0000 stored #0 from 0 x2",
                        "6.0000 stored #0 from 2 x2",
                        "8.2500 stored #0 from 4 x1",
                        "8.2500 first #0",
                        "9.3125 decoded #0 +1 = 2",
                        "10.3750 decoded #0 +1 = 3",
                        "10.3750 finished #0"),
                h.log);
        assertTrue(r.done());
        assertEquals(0, e.runningRequests());
        assertEquals(0, e.kvUsage());
        // the tokens of each stored slice are the prompt's, block by block
        assertArrayEquals(Arrays.copyOfRange(prompt, 0, 32), h.storedTokens.get(0));
        assertArrayEquals(Arrays.copyOfRange(prompt, 64, 80), h.storedTokens.get(2));

        // an index fed the events knows the engine holds the prompt's 5 blocks, as the engine does
        try (PrefixIndex index =
                PrefixIndex.create(IndexConfig.builder().blockSize(16).build())) {
            for (KvEvent ev : h.events) {
                assertEquals(EventStatus.OK, index.apply(ev));
            }
            assertEquals(5, index.match(prompt).depthOf(W));
        }
        h.log.clear();
        EngineRequest again = submit(h, e, 1, prompt, 1);
        h.runUntilIdle();
        assertEquals(80, again.cachedTokens());
        assertEquals(5, again.gpuCachedBlocks());
        // the 4 uncached tokens in one step, nothing new to store
        assertEquals(List.of("10.3750 admitted #1 cached 80", "11.6250 first #1", "11.6250 finished #1"), h.log);

        // a prompt sharing the first 3 blocks stores its own 2 after them, in one 32-token step
        int[] branch = Arrays.copyOf(prompt, 80);
        Arrays.fill(branch, 48, 80, 7);
        h.log.clear();
        submit(h, e, 2, branch, 1);
        h.runUntilIdle();
        assertEquals(
                List.of(
                        "11.6250 admitted #2 cached 48",
                        "14.6250 stored #2 from 3 x2",
                        "14.6250 first #2",
                        "14.6250 finished #2"),
                h.log);
        assertArrayEquals(Arrays.copyOfRange(branch, 48, 80), h.storedTokens.getLast());
    }

    @Test
    void abortingFreesTheRequestAndPublishesWhatItsAdmissionStored() {
        Host h = new Host();
        Engine e = Engine.create(settings(EngineModel.VLLM_CHUNKED, 32), cache(100), h);
        int[] prompt = tokens(96, 2); // 6 blocks: three steps of 32
        EngineRequest a = submit(h, e, 0, prompt, 50);
        h.runUntil(4_000_000); // one step done (blocks 0-1 published), the second in progress
        EngineRequest waiting = submit(h, e, 1, tokens(16, 3), 1);
        assertEquals(1, e.runningRequests());
        assertEquals(1, e.waitingRequests());
        assertTrue(e.abort(waiting));
        assertEquals(0, e.waitingRequests());
        assertTrue(e.abort(a));
        assertFalse(e.abort(a), "only once");
        assertEquals(0, e.runningRequests());
        assertEquals(0, e.cache().inUseBlocks());
        assertEquals(6, e.cache().blockCount(), "its blocks stay cached, free");
        h.runUntilIdle();
        assertEquals(
                List.of("0.0000 admitted #0 cached 0", "3.0000 stored #0 from 0 x2", "4.0000 stored #0 from 2 x4"),
                h.log,
                "no callback after the abort, and the waiting one never ran");
        assertTrue(a.done() && waiting.done());
        // the engine goes on: the same prompt finds all six blocks
        EngineRequest b = submit(h, e, 2, prompt, 1);
        h.runUntilIdle();
        assertEquals(96, b.cachedTokens());
        assertThrows(IllegalStateException.class, () -> e.submit(b), "a request is submitted once");
    }

    @Test
    void oneAtATimePrefillsInTurnAndReportsTheRestOfTheOutputAtTheEnd() {
        Host h = new Host();
        Engine e = Engine.create(settings(EngineModel.ONE_AT_A_TIME, 32), cache(100), h);
        submit(h, e, 0, tokens(32, 4), 4); // 2 ms of prefill, then 4 ms of decode
        submit(h, e, 1, tokens(48, 5), 1); // waits for the first prefill: 3 ms more
        assertEquals(1, e.waitingRequests());
        assertEquals(1, e.runningRequests());
        h.runUntilIdle();
        assertEquals(
                List.of(
                        "0.0000 admitted #0 cached 0",
                        "2.0000 stored #0 from 0 x2",
                        "2.0000 first #0",
                        "2.0000 admitted #1 cached 0",
                        "5.0000 stored #1 from 0 x3",
                        "5.0000 first #1",
                        "6.0000 decoded #0 +3 = 4",
                        "6.0000 finished #0",
                        "6.0000 finished #1"),
                h.log);
    }

    @Test
    void aPromptShorterThanABlockIsComputedAndStoresNothing() {
        Host h = new Host();
        Engine e = Engine.create(settings(EngineModel.VLLM_CHUNKED, 32), cache(100), h);
        EngineRequest r = submit(h, e, 0, tokens(10, 8), 1);
        h.runUntilIdle();
        assertEquals(0, r.trace().blocks());
        assertEquals(List.of("0.0000 admitted #0 cached 0", "1.6250 first #0", "1.6250 finished #0"), h.log);
        assertEquals(0, e.cache().blockCount());
    }

    @Test
    void decodeRunsGiveTheSameTimesAsSteppingOneByOne() {
        List<String> logs = new ArrayList<>();
        for (boolean runs : new boolean[] {false, true}) {
            Host h = new Host();
            EngineSettings s = settings(EngineModel.VLLM_CHUNKED, 64).withDecodeRuns(runs);
            Engine e = Engine.create(s, cache(100), h);
            submit(h, e, 0, tokens(32, 6), 5);
            submit(h, e, 1, tokens(16, 7), 3);
            h.runUntilIdle();
            logs.add(String.join(
                    "\n",
                    h.log.stream()
                            .filter(l -> l.contains("first") || l.contains("finished"))
                            .toList()));
        }
        assertEquals(logs.get(0), logs.get(1));
    }
}
