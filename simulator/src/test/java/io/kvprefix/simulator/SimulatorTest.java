package io.kvprefix.simulator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.workload.LocalHashTable;
import io.kvprefix.workload.Trace;
import io.kvprefix.workload.TraceRequest;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The simulation's engine models, on requests small enough to work out by hand (512-token blocks). */
class SimulatorTest {
    private static SimSettings settings(int workers) {
        return SimSettings.builder()
                .workers(workers)
                .cacheBlocks(1000)
                .seed(1)
                .engine(EngineModel.ONE_AT_A_TIME)
                .eventDelay(Duration.ZERO)
                .build();
    }

    private static TraceRequest req(int index, long ms, int input, int output, long... ids) {
        return new TraceRequest(index, ms, input, output, ids, 0);
    }

    private static PolicyResult run(Trace t, int workers, PolicyKind kind) {
        return Simulator.run(t, LocalHashTable.forTrace(t), settings(workers), kind, n -> {});
    }

    private static PolicyResult run(Trace t, SimSettings s, PolicyKind kind) {
        return Simulator.run(t, LocalHashTable.forTrace(t), s, kind, n -> {});
    }

    /** vllm-chunked with 2,048 tokens per step: a step lasts 20 ms + its tokens at 10,000 per second. */
    private static SimSettings chunked(int workers) {
        return SimSettings.builder()
                .workers(workers)
                .cacheBlocks(1000)
                .seed(1)
                .eventDelay(Duration.ZERO)
                .build();
    }

    @Test
    void chunkedStepsShareTheBudgetRunningRequestsFirst() {
        Trace t = new Trace(
                "hand-made", 512, List.of(req(0, 0, 4096, 3, 1, 2, 3, 4, 5, 6, 7, 8), req(1, 0, 1024, 1, 11, 12)));
        PolicyResult r = run(t, chunked(1), PolicyKind.ROUND_ROBIN);
        // steps 1-2: #0's 2 x 2,048 tokens (224.8 ms each; #1 waits: no budget left): #0's first token at
        // 449.6 ms. Step 3: #0 decodes 1 token, #1 prefills its 1,024: 20 + 102.5 = 122.5 ms, so #1's
        // first (and only) token at 572.1 ms. Step 4: #0's last token, 20.1 ms later.
        assertEquals((449.6 + 572.1) / 2, r.ttftMeanMs(), 1e-6);
        assertEquals(572.1, r.ttftMs(0.99), 1e-6);
        assertEquals(0.5922, r.simulatedSeconds(), 1e-9);
        assertEquals(0, r.reusedTokens());
    }

    @Test
    void eventsArriveAfterTheStepAndTheDelay() {
        // #0 (4 blocks) prefills in one 224.8 ms step on worker 0; its stored event is published then.
        // #1, the same prompt, arrives at 300 ms: with no delay the index knows worker 0 holds it, and
        // kvprefix-ttft sends it there (0 uncached against 2,048); 200 ms later, the index does not know
        // yet, both workers look empty and the tie goes to worker 1, which has had fewer requests.
        Trace t = new Trace(
                "hand-made", 512, List.of(req(0, 0, 2048, 50, 1, 2, 3, 4), req(1, 300, 2048, 50, 1, 2, 3, 4)));
        PolicyResult now = run(t, chunked(2), PolicyKind.KVPREFIX_TTFT);
        assertEquals(2048, now.reusedTokens());
        assertArrayEquals(new long[] {2, 0}, now.requestsPerWorker());
        PolicyResult late =
                run(t, chunked(2).toBuilder().eventDelay(Duration.ofMillis(200)).build(), PolicyKind.KVPREFIX_TTFT);
        assertEquals(0, late.reusedTokens());
        assertArrayEquals(new long[] {1, 1}, late.requestsPerWorker());
    }

    @Test
    void theRateDividesArrivalTimesAndSlownessMultipliesWork() {
        Trace t = new Trace("hand-made", 512, List.of(req(0, 0, 1024, 1, 1, 2), req(1, 200, 1024, 1, 3, 4)));
        assertEquals(102.4, run(t, 1, PolicyKind.ROUND_ROBIN).ttftMs(0.99), 1e-6); // #0 is done when #1 comes
        SimSettings fast = settings(1).toBuilder().rate(4).build(); // #1 at 50 ms waits for #0 until 102.4
        assertEquals(102.4 - 50 + 102.4, run(t, fast, PolicyKind.ROUND_ROBIN).ttftMs(0.99), 1e-6);
        SimSettings slow = settings(1).toBuilder().slowFactor(2).build(); // worker 0 at half speed
        assertEquals(204.8, run(t, slow, PolicyKind.ROUND_ROBIN).ttftMs(0.5), 1e-6);
    }

    @Test
    void aLateWorkerGetsNothingBeforeItJoins() {
        Trace t = new Trace(
                "hand-made",
                512,
                List.of(req(0, 0, 512, 1, 1), req(1, 100, 512, 1, 2), req(2, 200, 512, 1, 3), req(3, 300, 512, 1, 4)));
        assertArrayEquals(new long[] {2, 2}, run(t, 2, PolicyKind.ROUND_ROBIN).requestsPerWorker());
        // worker 1 joins at 150 ms: #0 and #1 go to worker 0, then round-robin over both
        SimSettings late = settings(2).toBuilder().joinAt(0.5).build();
        assertArrayEquals(
                new long[] {3, 1}, run(t, late, PolicyKind.ROUND_ROBIN).requestsPerWorker());
    }

    @Test
    void theTtftFloorIsEachRequestsOwnPrefillOfWhatNoCacheHeld() {
        Trace t =
                new Trace("hand-made", 512, List.of(req(0, 0, 2048, 1, 1, 2, 3, 4), req(1, 0, 2300, 1, 1, 2, 3, 4, 5)));
        long[] serial = Simulator.ttftFloorNs(t, settings(1));
        assertEquals(204_800_000L, serial[0]); // 2,048 tokens at 10,000/s
        assertEquals(25_200_000L, serial[1]); // 4 blocks seen before: 252 tokens left
        long[] steps = Simulator.ttftFloorNs(t, chunked(1));
        assertEquals(224_800_000L, steps[0]); // one 2,048-token step: 20 ms + 204.8 ms
        assertEquals(45_200_000L, steps[1]);
    }

    @Test
    void runsOfDecodeStepsChangeNothing() {
        Trace t = io.kvprefix.workload.SyntheticTrace.generate(1_500, 3);
        LocalHashTable hashes = LocalHashTable.forTrace(t);
        SimSettings s = chunked(4).toBuilder().eventDelay(Duration.ofMillis(10)).build();
        for (PolicyKind k : PolicyKind.values()) {
            PolicyResult with = Simulator.run(t, hashes, s, k, n -> {});
            PolicyResult without =
                    Simulator.run(t, hashes, s.toBuilder().decodeRuns(false).build(), k, n -> {});
            String what = k.key();
            assertEquals(without.reusedTokens(), with.reusedTokens(), what);
            assertArrayEquals(without.requestsPerWorker(), with.requestsPerWorker(), what);
            assertEquals(without.ttftMeanMs(), with.ttftMeanMs(), 1e-9, what);
            assertEquals(without.ttftMs(0.99), with.ttftMs(0.99), 1e-9, what);
            assertEquals(without.simulatedSeconds(), with.simulatedSeconds(), 1e-9, what);
        }
    }

    @Test
    void prefillsQueueFirstComeFirstServedAndCachedPrefixesAreFree() {
        Trace t = new Trace(
                "hand-made",
                512,
                List.of(
                        req(0, 0, 1024, 10, 1, 2), // 1,024 tokens at 10k/s: TTFT 102.4 ms
                        req(1, 0, 1024, 10, 3, 4), // waits for #0: 102.4 + 102.4 = 204.8 ms
                        req(2, 1000, 1300, 10, 1, 2, 9))); // #0's two blocks cached: 276 tokens, 27.6 ms
        PolicyResult r = run(t, 1, PolicyKind.ROUND_ROBIN);
        assertEquals(3348, r.inputTokens());
        assertEquals(1024, r.reusedTokens());
        assertEquals(2324, r.prefillTokens());
        assertEquals(1024.0 / 3348, r.hitRate(), 1e-12);
        assertEquals((102.4 + 204.8 + 27.6) / 3, r.ttftMeanMs(), 1e-6);
        assertEquals(102.4, r.ttftMs(0.5), 1e-6);
        assertEquals(204.8, r.ttftMs(0.99), 1e-6);
        assertArrayEquals(new long[] {3}, r.requestsPerWorker());
        // the last request finishes 10 tokens / 50 per s = 200 ms after its prefill ends at 1,027.6 ms
        assertEquals(1.2276, r.simulatedSeconds(), 1e-9);
    }

    @Test
    void workersPrefillInParallelAndRoundRobinAlternates() {
        Trace t = new Trace("hand-made", 512, List.of(req(0, 0, 1024, 1, 1, 2), req(1, 0, 1024, 1, 3, 4)));
        PolicyResult r = run(t, 2, PolicyKind.ROUND_ROBIN);
        assertEquals(102.4, r.ttftMs(0.99), 1e-6); // no queueing: one request per worker
        assertArrayEquals(new long[] {1, 1}, r.requestsPerWorker());
    }

    @Test
    void theRoutersFollowTheCacheAndTheLoad() {
        // #1 arrives while #0 (same 4 blocks) is in prefill on worker 0. With events, the index does not
        // know #0's blocks yet: cost 8 + 8 (its load) on worker 0 against 8 on idle worker 1. The
        // predicted router knows them (depth 4) but worker 0's active prefill of the same 4 blocks cancels
        // the saving: (2048 - 2048 + 2048)/512 + 4 + 4 = 12 against 8. Both send #1 to worker 1, where it
        // misses. #2 arrives when everything is done and both workers hold the blocks: a tie at 4, both
        // hold 4 blocks, the lower worker wins, and it hits.
        Trace t = new Trace(
                "hand-made",
                512,
                List.of(
                        req(0, 0, 2048, 1, 1, 2, 3, 4),
                        req(1, 100, 2048, 1, 1, 2, 3, 4),
                        req(2, 5000, 2048, 1, 1, 2, 3, 4)));
        for (PolicyKind kind : List.of(PolicyKind.DYNAMO_COST, PolicyKind.DYNAMO_COST_APPROX)) {
            PolicyResult r = run(t, 2, kind);
            assertArrayEquals(new long[] {2, 1}, r.requestsPerWorker(), kind.key());
            assertEquals(2048, r.reusedTokens(), kind.key());
            assertEquals((204.8 + 204.8 + 0) / 3, r.ttftMeanMs(), 1e-6, kind.key());
        }
        // round-robin sends #2 to worker 0 as well (0, 1, 0), least-loaded too (both idle, lowest first)
        assertEquals(2048, run(t, 2, PolicyKind.ROUND_ROBIN).reusedTokens());
        assertArrayEquals(new long[] {2, 1}, run(t, 2, PolicyKind.LEAST_LOADED).requestsPerWorker());
    }

    @Test
    void theInfiniteCacheBoundCountsFullBlocksWhosePrefixWasSeen() {
        Trace t = new Trace(
                "hand-made",
                512,
                List.of(
                        req(0, 0, 1100, 1, 1, 2, 3), // 2 full blocks + a partial one
                        req(1, 0, 1536, 1, 1, 2, 3), // blocks 1, 2 seen; block 3 (full now) was only partial
                        req(2, 0, 1024, 1, 2, 1))); // 2 at position 0 is new: nothing counts
        assertEquals(1024, Simulator.infiniteCacheHitTokens(t));
        assertEquals(3660, Simulator.inputTokens(t));
    }
    /**
     * Engines that offload to a CPU tier (docs/SPEC.md section 3.1), on the built-in chat workload with
     * GPU caches far too small for it (128 blocks), so conversations come back after their GPU blocks
     * were evicted. The router fed every tier's events finds the worker that still holds a prefix on
     * its CPU; fed the GPU's alone it cannot, and recomputes more. Without a CPU tier the two are the
     * same policy. Both engine models.
     */
    @Test
    void tierAwareRoutingKeepsHitsAfterGpuTurnover() {
        Trace t = io.kvprefix.workload.SyntheticTrace.generate(4000, 42);
        LocalHashTable hashes = LocalHashTable.forTrace(t);
        for (EngineModel engine : EngineModel.values()) {
            for (int cpu : new int[] {0, 8192}) {
                SimSettings s = SimSettings.builder()
                        .cacheBlocks(128)
                        .cpuBlocks(cpu)
                        .engine(engine)
                        .build();
                PolicyResult tiers = Simulator.run(t, hashes, s, PolicyKind.DYNAMO_COST, n -> {});
                PolicyResult gpu = Simulator.run(t, hashes, s, PolicyKind.DYNAMO_COST_GPU_ONLY, n -> {});
                String what = engine.key() + ", " + cpu + " CPU blocks";
                if (cpu == 0) {
                    assertEquals(gpu.reusedTokens(), tiers.reusedTokens(), what + ": the same policy");
                    assertArrayEquals(gpu.requestsPerWorker(), tiers.requestsPerWorker(), what);
                } else {
                    assertTrue(
                            tiers.hitRate() > gpu.hitRate() + 0.01,
                            what + ": tier-aware " + tiers.hitRate() + " vs GPU only " + gpu.hitRate());
                    assertTrue(tiers.ttftMeanMs() < gpu.ttftMeanMs(), what);
                }
            }
        }
    }
}
