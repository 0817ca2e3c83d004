package io.kvprefix.internal.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvprefix.MatchResult;
import io.kvprefix.RoutingPolicy;
import io.kvprefix.Worker;
import io.kvprefix.internal.MatchResults;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.Test;

/**
 * The load order decides exactly as the scan of every worker (docs/SPEC.md section 6.5), for
 * dynamo-cost and kvprefix-ttft (whose workers with learned speeds or pending prefills are visited
 * and the rest kept in order): two tables,
 * one deciding through {@link LoadOrder} and one scanning, are driven through the same random
 * states (joins, leaves, weight changes, matches on one or two results, releases in any order,
 * requests at another block size) with random dynamo-cost options, and every decision must name the
 * same worker with the same cost, depth, charge and miss. Loads are small integers and block counts
 * few, so ties (and their block-count tie-breaks) are common.
 */
class LoadOrderDifferentialTest {
    private static final MatchResults ACCESS = MatchResults.access();
    private static final double[] OVERLAP_WEIGHTS = {1.0, 0.0, 0.5, 2.0, 1.0 / 3};
    private static final double[] WEIGHTS = {1.0, 2.0, 0.5, 1.0 / 3};

    @Test
    void theLoadOrderDecidesAsTheScanOnRandomStates() {
        int learned = 0;
        for (int trial = 0; trial < 200; trial++) {
            learned += runTrial(new SplittableRandom(trial), trial);
        }
        // kvprefix-ttft's workers with a fitted speed of their own (visited, not kept in order) were decided on
        assertTrue(learned > 100, learned + " decisions chose a worker with a speed of its own");
    }

    /** A fleet of 10,000 workers with different loads: a decision visits a handful of them, not all. */
    @Test
    void aDecisionVisitsTheMatchedAndTheCheapestNotTheFleet() {
        Selector.Options o = new Selector.Options(1.0, 0, 0, 0, false, 0, 0.75);
        LoadTable table = new LoadTable(RoutingPolicy.DYNAMO_COST, o, () -> 0L, 16);
        int n = 10_000;
        for (int w = 0; w < n; w++) {
            table.add(Worker.of(w), 1.0);
        }
        ToLongFunction<Worker> counts = w -> 0;
        LoadTable.Choice c = new LoadTable.Choice();
        MatchResult one = new MatchResult();
        for (int i = 0; i < n; i++) { // worker i holds 2 blocks of request i: each worker gets its own load
            ACCESS.reset(one, 64);
            ACCESS.add(one, Worker.of(i), 2);
            table.decide(one, null, true, 512 + 16 * i, 16, counts, c);
            assertEquals(Worker.of(i), c.load.worker());
        }
        MatchResult m = new MatchResult();
        ACCESS.reset(m, 32);
        for (int w = 0; w < 8; w++) {
            ACCESS.add(m, Worker.of(w * 1_000 + 3), 1 + w);
        }
        long before = table.orderVisits();
        table.decide(m, null, true, 512, 16, counts, c);
        long visited = table.orderVisits() - before;
        assertTrue(visited > 0 && visited < 200, "one decision visited " + visited + " of " + n + " workers");
    }

    /** Runs one trial; returns how many decisions chose a worker that has a fitted speed of its own. */
    private static int runTrial(SplittableRandom rnd, int trial) {
        int learned = 0;
        int bs = rnd.nextBoolean() ? 16 : 4;
        Selector.Options o = new Selector.Options(
                OVERLAP_WEIGHTS[rnd.nextInt(OVERLAP_WEIGHTS.length)],
                0,
                rnd.nextInt(4) == 0 ? 2 : 0,
                rnd.nextInt(4) == 0 ? 3 * bs : 0,
                rnd.nextInt(3) == 0,
                trial,
                rnd.nextInt(3) == 0 ? 0.0 : 0.75);
        long[] now = {0};
        RoutingPolicy policy = trial % 2 == 0 ? RoutingPolicy.DYNAMO_COST : RoutingPolicy.KVPREFIX_TTFT;
        LoadTable fast = new LoadTable(policy, o, () -> now[0], bs, true);
        LoadTable scan = new LoadTable(policy, o, () -> now[0], bs, false);
        HashMap<Worker, Long> blocks = new HashMap<>();
        ToLongFunction<Worker> counts = w -> blocks.getOrDefault(w, 0L);
        List<Worker> known = new ArrayList<>();
        int fleet = 1 + rnd.nextInt(rnd.nextBoolean() ? 8 : 120);
        boolean weighted = rnd.nextBoolean();
        for (int w = 0; w < fleet; w++) {
            join(fast, scan, known, blocks, rnd, Worker.of(rnd.nextInt(1_000), rnd.nextInt(2)), weighted);
        }
        List<LoadTable.Choice[]> open = new ArrayList<>();
        boolean queueing = rnd.nextBoolean(); // few releases: backlogs grow past a request (kvprefix-ttft's lambda)
        int releaseOps = queueing ? 4 : 8;
        MatchResult first = new MatchResult();
        MatchResult second = new MatchResult();
        for (int step = 0; step < 400; step++) {
            now[0] += rnd.nextInt(1, 20_000);
            int op = rnd.nextInt(20);
            if (op == 0) {
                join(fast, scan, known, blocks, rnd, Worker.of(rnd.nextInt(1_000), rnd.nextInt(2)), weighted);
            } else if (op == 1 && fast.size() > 1) {
                Worker gone = known.get(rnd.nextInt(known.size()));
                assertEquals(scan.remove(gone) == null, fast.remove(gone) == null);
            } else if (op == 2 && !known.isEmpty()) {
                Worker w = known.get(rnd.nextInt(known.size()));
                double weight = weighted ? WEIGHTS[rnd.nextInt(WEIGHTS.length)] : 1.0;
                assertEquals(scan.add(w, weight), fast.add(w, weight));
            } else if (op < releaseOps && !open.isEmpty()) {
                release(fast, scan, open, rnd);
            } else if (fast.size() > 0) {
                int requestBs = rnd.nextInt(10) == 0 ? 8 : bs;
                int isl = requestBs * rnd.nextInt(1, 40) + rnd.nextInt(requestBs);
                fill(first, known, rnd, isl / requestBs);
                boolean two = rnd.nextInt(4) == 0;
                if (two) {
                    fill(second, known, rnd, isl / requestBs);
                }
                LoadTable.Choice a = new LoadTable.Choice();
                LoadTable.Choice b = new LoadTable.Choice();
                fast.decide(first, two ? second : null, true, isl, requestBs, counts, a);
                scan.decide(first, two ? second : null, true, isl, requestBs, counts, b);
                String at = "trial " + trial + " step " + step + " " + policy + " " + o;
                assertEquals(b.load.worker(), a.load.worker(), at);
                assertEquals(b.cost, a.cost, 0.0, at);
                assertEquals(b.depth, a.depth, at);
                assertEquals(b.prefillTokens, a.prefillTokens, at);
                assertEquals(b.missed, a.missed, at);
                open.add(new LoadTable.Choice[] {a, b});
                if (policy == RoutingPolicy.KVPREFIX_TTFT && rnd.nextInt(4) < (queueing ? 1 : 3)) {
                    // the prefill ends after a time that grows with its tokens, at a speed per worker
                    now[0] += a.prefillTokens * (20 + 40 * (a.load.worker().workerId() % 3)) + rnd.nextInt(1, 500);
                    release(fast, scan, open, open.size() - 1, true, rnd.nextBoolean());
                }
                if (a.load.speed.samples() >= TtftEstimate.WORKER_SAMPLES && a.load.speed.tokensPerNano() > 0) {
                    learned++;
                }
            }
        }
        return learned;
    }

    private static void join(
            LoadTable fast,
            LoadTable scan,
            List<Worker> known,
            HashMap<Worker, Long> blocks,
            SplittableRandom rnd,
            Worker w,
            boolean weighted) {
        double weight = weighted ? WEIGHTS[rnd.nextInt(WEIGHTS.length)] : 1.0;
        assertEquals(scan.add(w, weight), fast.add(w, weight));
        if (!known.contains(w)) {
            known.add(w);
        }
        blocks.put(w, (long) rnd.nextInt(3));
    }

    /** Releases one open decision in both tables: its prefill, its request, or both. */
    private static void release(LoadTable fast, LoadTable scan, List<LoadTable.Choice[]> open, SplittableRandom rnd) {
        release(fast, scan, open, rnd.nextInt(open.size()), rnd.nextInt(4) != 0, rnd.nextBoolean());
    }

    private static void release(
            LoadTable fast, LoadTable scan, List<LoadTable.Choice[]> open, int i, boolean ended, boolean whole) {
        LoadTable.Choice[] pair = open.get(i);
        for (int t = 0; t < 2; t++) {
            LoadTable.Choice c = pair[t];
            (t == 0 ? fast : scan)
                    .release(c.load, c.prefillTokens, whole, whole ? c.decodeBlocks : 0, c.pending, ended, null);
            c.prefillTokens = 0;
        }
        if (whole) {
            open.remove(i);
        }
    }

    private static void fill(MatchResult r, List<Worker> known, SplittableRandom rnd, int blocks) {
        ACCESS.reset(r, blocks);
        if (blocks == 0 || known.isEmpty()) {
            return;
        }
        int k = rnd.nextInt(Math.min(known.size(), 6) + 1);
        int start = rnd.nextInt(known.size());
        for (int j = 0; j < k; j++) {
            Worker w = known.get((start + j * 7) % known.size());
            if (r.depthOf(w) > 0 || r.anyTierDepthOf(w) > 0) {
                continue;
            }
            int depth = rnd.nextInt(blocks + 1);
            int any = Math.max(1, Math.min(blocks, depth + (rnd.nextInt(3) == 0 ? rnd.nextInt(3) : 0)));
            ACCESS.add(r, w, depth, Math.max(depth, any));
        }
    }
}
