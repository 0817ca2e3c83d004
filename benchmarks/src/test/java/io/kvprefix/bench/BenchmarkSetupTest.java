package io.kvprefix.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.EventStatus;
import io.kvprefix.opstream.Implementations;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Runs every JMH state's setup for every parameter combination (with smaller fillers), so no
 * benchmark can measure a wrong answer: each setup checks its index's answers and throws otherwise.
 */
class BenchmarkSetupTest {
    private static int savedFiller;
    private static int savedPrefill;

    @BeforeAll
    static void shrink() {
        savedFiller = MatchBenchmark.FILLER;
        savedPrefill = EventsBenchmark.PREFILL;
        MatchBenchmark.FILLER = 64;
        EventsBenchmark.PREFILL = 256;
    }

    @AfterAll
    static void restore() {
        MatchBenchmark.FILLER = savedFiller;
        EventsBenchmark.PREFILL = savedPrefill;
    }

    @Test
    void matchSetups() {
        for (String impl : Implementations.names()) {
            for (int workers : new int[] {16, 256}) {
                for (int depth : new int[] {8, 64, 512}) {
                    for (String scenario : new String[] {"all-hit", "early-divergence", "holes"}) {
                        MatchBenchmark b = new MatchBenchmark();
                        b.impl = impl;
                        b.workers = workers;
                        b.depth = depth;
                        b.scenario = scenario;
                        b.setup();
                        b.match(new MatchBenchmark.Result());
                        b.tearDown();
                    }
                }
            }
        }
    }

    @Test
    void manyWorkersSetups() {
        int saved = ManyWorkersBenchmark.PAIRS;
        ManyWorkersBenchmark.PAIRS = 1 << 14;
        try {
            for (String impl : Implementations.names()) {
                for (int workers : new int[] {16, 1024, 10000}) {
                    for (int holders : new int[] {1, 4}) {
                        ManyWorkersBenchmark b = new ManyWorkersBenchmark();
                        b.impl = impl;
                        b.workers = workers;
                        b.holders = holders;
                        b.setup();
                        try {
                            b.match(new ManyWorkersBenchmark.Result());
                        } finally {
                            b.tearDown();
                        }
                    }
                }
            }
        } finally {
            ManyWorkersBenchmark.PAIRS = saved;
        }
    }

    @Test
    void hashAndMatchSetups() {
        for (String impl : Implementations.names()) {
            for (int tokens : new int[] {8192, 131072}) {
                for (String scenario : new String[] {"all-hit", "half"}) {
                    HashAndMatchBenchmark b = new HashAndMatchBenchmark();
                    b.impl = impl;
                    b.tokens = tokens;
                    b.workers = 16;
                    b.scenario = scenario;
                    b.setup();
                    b.hashAndMatch(new HashAndMatchBenchmark.Result());
                    b.tearDown();
                }
            }
        }
    }

    @Test
    void eventSetups() {
        for (String impl : Implementations.names()) {
            for (int batch : new int[] {1, 16, 64}) {
                EventsBenchmark b = new EventsBenchmark();
                b.impl = impl;
                b.batch = batch;
                b.setup();
                b.storeRemove();
                b.storeClear();
                b.tearDown();
            }
        }
    }

    @Test
    void budgetSetups() {
        int saved = BudgetBenchmark.BUDGET_MIB;
        BudgetBenchmark.BUDGET_MIB = 4;
        try {
            for (String impl : new String[] {"offheap-java", "offheap-native"}) {
                BudgetBenchmark b = new BudgetBenchmark();
                b.impl = impl;
                b.setup(); // checks that the full index refuses every store of the cycle and changes nothing
                assertEquals(EventStatus.CAPACITY_EXCEEDED, b.refusedStore());
                assertEquals(EventStatus.OK, b.acceptedStoreRemove());
                assertTrue(b.blocksHeld() > 50_000, "4 MiB hold more than this: " + b.blocksHeld());
                b.tearDown();
            }
        } finally {
            BudgetBenchmark.BUDGET_MIB = saved;
        }
    }

    @Test
    void hashingSetups() {
        for (int bs : new int[] {16, 64, 512}) {
            for (int blocks : new int[] {1, 32, 512}) {
                HashingBenchmark b = new HashingBenchmark();
                b.blockSize = bs;
                b.blocks = blocks;
                b.setup();
                b.nativeBatch();
                b.portable();
                b.callOverhead();
            }
        }
    }

    @Test
    void jumpSizeSetups() throws Exception {
        for (String impl : new String[] {"offheap-java", "offheap-native"}) {
            JumpSizeBenchmark b = new JumpSizeBenchmark();
            b.impl = impl;
            b.jump = 16;
            b.workload = "synthetic";
            b.setup(); // checks that the answers equal the jump-size-1 answers
            b.matchAll();
            b.tearDown();
        }
    }

    @Test
    void routerSetups() {
        for (String impl : new String[] {"offheap-native", "offheap-java", "heap"}) {
            for (int workers : new int[] {16, 1024, 10_000}) {
                for (String policy : new String[] {"dynamo-cost", "kvprefix-ttft"}) {
                    // the busy fleet's state does not depend on the index, and its setup at 10,000 workers is
                    // O(workers^2) (each miss on an idle fleet ties every idle worker): once per policy
                    boolean busyToo = impl.equals("offheap-java");
                    for (String fleet : busyToo ? new String[] {"idle", "busy"} : new String[] {"idle"}) {
                        // in-flight counting changes the decision's path, not the fleet: at 16 workers only
                        for (String inflight : workers == 16 ? new String[] {"off", "on"} : new String[] {"off"}) {
                            RouterBenchmark b = new RouterBenchmark();
                            b.impl = impl;
                            b.tokens = 8192;
                            b.workers = workers;
                            b.policy = policy;
                            b.fleet = fleet;
                            b.inflight = inflight;
                            b.setup(); // checks the decision, on the busy fleet too
                            b.routeAndFinish();
                            b.tearDown();
                        }
                    }
                }
            }
        }
    }

    @Test
    void aWrongSetupIsRefused() {
        MatchBenchmark b = new MatchBenchmark();
        b.impl = "no-such-index";
        b.workers = 16;
        b.depth = 8;
        b.scenario = "all-hit";
        assertThrows(IllegalArgumentException.class, b::setup);
    }

    @Test
    void metricsOverheadSetups() {
        for (String metrics : new String[] {"bare", "timed", "observed", "both"}) {
            for (String impl : new String[] {"offheap-native", "offheap-java"}) {
                MetricsOverheadBenchmark b = new MetricsOverheadBenchmark();
                b.metrics = metrics;
                b.impl = impl;
                b.tokens = 8192;
                b.setup();
                b.hashAndMatch();
                b.routeAndFinish();
                b.explainHashes();
                b.tearDown();
            }
        }
    }
}
