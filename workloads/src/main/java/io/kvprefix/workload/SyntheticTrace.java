package io.kvprefix.workload;

import it.unimi.dsi.fastutil.longs.Long2LongOpenHashMap;
import it.unimi.dsi.fastutil.longs.LongArrayList;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * The built-in workload, for when no trace file is given: a seeded generator of chat traffic in the
 * Mooncake trace model (512-token blocks named by hash ids), so everything downstream (transforms,
 * mock engines, op streams) is the same as for a real trace. The same {@code (requests, seed)} give the
 * same trace on every JDK ({@link Rng}, {@link StrictMath}). Its shape ({@value #SYSTEM_PROMPTS}
 * shared system prompts, multi-turn conversations of mean {@value #MEAN_TURNS} turns up to
 * {@value #MAX_INPUT_TOKENS} tokens, long-tailed lengths, think times), what the defaults give, and
 * how its block ids behave are this package's description, <em>The built-in workload</em>.
 *
 * <p>Thread-safety: stateless; {@link #generate} may be called from any thread.
 */
public final class SyntheticTrace {
    /** The default number of requests of {@code gen-ops} without a trace. */
    public static final int DEFAULT_REQUESTS = 10_000;

    static final int SYSTEM_PROMPTS = 8;
    static final int NO_PROMPT_PERCENT = 25;
    static final double MEAN_TURNS = 2.5;
    static final int MAX_TURNS = 16;
    static final int MAX_INPUT_TOKENS = 131_072;
    private static final int BLOCK = Trace.MOONCAKE_BLOCK_TOKENS;
    private static final long GENERATOR_STREAM = 0x7261636573L;

    private SyntheticTrace() {}

    private record Draft(long timestampMs, int input, int output, long[] keys) {}

    /**
     * {@code requests} requests of the workload described above, from {@code seed}.
     *
     * @throws IllegalArgumentException if {@code requests < 1}
     */
    public static Trace generate(int requests, long seed) {
        if (requests < 1) {
            throw new IllegalArgumentException("--requests must be >= 1, got " + requests);
        }
        Rng rng = Rng.forStream(seed, GENERATOR_STREAM);
        long[] nextKey = {0};
        long[][] prompts = new long[SYSTEM_PROMPTS][];
        double[] cumulative = new double[SYSTEM_PROMPTS];
        double sum = 0;
        for (int p = 0; p < SYSTEM_PROMPTS; p++) {
            int blocks = clamp((int) Math.round(rng.logNormal(4, 0.7)), 1, 24);
            prompts[p] = new long[blocks];
            for (int i = 0; i < blocks; i++) {
                prompts[p][i] = nextKey[0]++;
            }
            sum += 1.0 / StrictMath.pow(p + 1, 1.1);
            cumulative[p] = sum;
        }

        List<Draft> drafts = new ArrayList<>(requests + requests / 4);
        double start = 0;
        long cutoff = Long.MAX_VALUE;
        int late = 0;
        while (true) {
            start += rng.exponential(750.0);
            if (drafts.size() >= requests) {
                // The n-th earliest arrival so far only moves earlier as conversations are added, so a
                // cutoff computed a few conversations ago is a safe (late) bound.
                if (late++ % 16 == 0) {
                    cutoff = nthTimestamp(drafts, requests);
                }
                // a conversation starting after the n-th arrival adds only later arrivals
                if (start > cutoff) {
                    break;
                }
            }
            conversation(rng, start, prompts, cumulative, sum, nextKey, drafts);
        }
        drafts.sort(Comparator.comparingLong(Draft::timestampMs)); // stable: ties keep generation order
        Long2LongOpenHashMap dense = new Long2LongOpenHashMap();
        List<TraceRequest> out = new ArrayList<>(requests);
        for (int i = 0; i < requests; i++) {
            Draft d = drafts.get(i);
            long[] ids = new long[d.keys().length];
            for (int b = 0; b < ids.length; b++) {
                long key = d.keys()[b];
                long id = dense.getOrDefault(key, -1L);
                if (id < 0) {
                    id = dense.size();
                    dense.put(key, id);
                }
                ids[b] = id;
            }
            out.add(new TraceRequest(i, d.timestampMs(), d.input(), d.output(), ids, 0));
        }
        return new Trace("built-in generator (" + requests + " requests, seed " + seed + ")", BLOCK, out);
    }

    private static long nthTimestamp(List<Draft> drafts, int n) {
        long[] t = new long[drafts.size()];
        for (int i = 0; i < t.length; i++) {
            t[i] = drafts.get(i).timestampMs();
        }
        Arrays.sort(t);
        return t[n - 1];
    }

    private static void conversation(
            Rng rng,
            double startMs,
            long[][] prompts,
            double[] cumulative,
            double sum,
            long[] nextKey,
            List<Draft> out) {
        LongArrayList committed = new LongArrayList();
        if (rng.nextInt(100) >= NO_PROMPT_PERCENT) {
            double u = rng.nextDouble() * sum;
            int p = 0;
            while (p < cumulative.length - 1 && cumulative[p] <= u) {
                p++;
            }
            committed.addElements(0, prompts[p]);
        }
        int turns = 1;
        double continueP = 1.0 - 1.0 / MEAN_TURNS;
        while (turns < MAX_TURNS && rng.chance(continueP)) {
            turns++;
        }
        long context = (long) committed.size() * BLOCK;
        double time = startMs;
        for (int k = 0; k < turns; k++) {
            long input = context + userMessage(rng);
            if (input > MAX_INPUT_TOKENS) {
                break;
            }
            int full = (int) (input / BLOCK);
            boolean partial = input % BLOCK != 0;
            while (committed.size() < full) {
                committed.add(nextKey[0]++);
            }
            long[] keys = new long[full + (partial ? 1 : 0)];
            committed.getElements(0, keys, 0, full);
            if (partial) {
                keys[full] = nextKey[0]++;
            }
            int output = clamp((int) Math.round(rng.logNormal(250, 0.9)), 1, 2000);
            out.add(new Draft((long) time, (int) input, output, keys));
            context = input + output;
            time += output * 20.0 + rng.exponential(20_000.0);
        }
    }

    private static int userMessage(Rng rng) {
        if (rng.chance(0.15)) {
            double u = 1.0 - rng.nextDouble(); // (0, 1]
            return (int) Math.min(80_000, 4000.0 / StrictMath.pow(u, 1.0 / 1.2));
        }
        return clamp((int) Math.round(rng.logNormal(1000, 1.0)), 1, 16_000);
    }

    private static int clamp(int v, int lo, int hi) {
        return Math.max(lo, Math.min(hi, v));
    }
}
