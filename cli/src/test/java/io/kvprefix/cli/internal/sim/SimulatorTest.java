package io.kvprefix.cli.internal.sim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kvprefix.workload.LocalHashTable;
import io.kvprefix.workload.Trace;
import io.kvprefix.workload.TraceRequest;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The simulation's cost model, on requests small enough to work out by hand (512-token blocks). */
class SimulatorTest {
    private static SimSettings settings(int workers) {
        return new SimSettings(
                workers, 1000, 10_000, 50, 1, 1.0, 0, 0, false, Duration.ofSeconds(120), 1 << 20, 0, 400_000);
    }

    private static TraceRequest req(int index, long ms, int input, int output, long... ids) {
        return new TraceRequest(index, ms, input, output, ids, 0);
    }

    private static PolicyResult run(Trace t, int workers, Policy.Kind kind) {
        return Simulator.run(t, LocalHashTable.forTrace(t), settings(workers), kind, n -> {});
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
        PolicyResult r = run(t, 1, Policy.Kind.ROUND_ROBIN);
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
        PolicyResult r = run(t, 2, Policy.Kind.ROUND_ROBIN);
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
        for (Policy.Kind kind : List.of(Policy.Kind.KV_EVENTS, Policy.Kind.KV_PREDICTED)) {
            PolicyResult r = run(t, 2, kind);
            assertArrayEquals(new long[] {2, 1}, r.requestsPerWorker(), kind.key());
            assertEquals(2048, r.reusedTokens(), kind.key());
            assertEquals((204.8 + 204.8 + 0) / 3, r.ttftMeanMs(), 1e-6, kind.key());
        }
        // round-robin sends #2 to worker 0 as well (0, 1, 0), least-loaded too (both idle, lowest first)
        assertEquals(2048, run(t, 2, Policy.Kind.ROUND_ROBIN).reusedTokens());
        assertArrayEquals(new long[] {2, 1}, run(t, 2, Policy.Kind.LEAST_LOADED).requestsPerWorker());
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
     * same policy.
     */
    @Test
    void tierAwareRoutingKeepsHitsAfterGpuTurnover() {
        Trace t = io.kvprefix.workload.SyntheticTrace.generate(4000, 42);
        LocalHashTable hashes = LocalHashTable.forTrace(t);
        for (int cpu : new int[] {0, 8192}) {
            SimSettings s = new SimSettings(
                    16, 128, 10_000, 50, 42, 1.0, 0, 0, false, Duration.ofSeconds(120), 1 << 20, cpu, 400_000);
            PolicyResult tiers = Simulator.run(t, hashes, s, Policy.Kind.KV_EVENTS, n -> {});
            PolicyResult gpu = Simulator.run(t, hashes, s, Policy.Kind.KV_EVENTS_GPU, n -> {});
            if (cpu == 0) {
                assertEquals(gpu.reusedTokens(), tiers.reusedTokens(), "no CPU tier: the same policy");
                assertArrayEquals(gpu.requestsPerWorker(), tiers.requestsPerWorker());
            } else {
                org.junit.jupiter.api.Assertions.assertTrue(
                        tiers.hitRate() > gpu.hitRate() + 0.01,
                        "tier-aware " + tiers.hitRate() + " vs GPU only " + gpu.hitRate());
                org.junit.jupiter.api.Assertions.assertTrue(tiers.ttftMeanMs() < gpu.ttftMeanMs());
            }
        }
    }
}
