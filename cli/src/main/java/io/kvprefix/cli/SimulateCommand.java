package io.kvprefix.cli;

import io.kvprefix.simulator.EngineModel;
import io.kvprefix.simulator.PolicyKind;
import io.kvprefix.simulator.PolicyResult;
import io.kvprefix.simulator.RateSweep;
import io.kvprefix.simulator.SimSettings;
import io.kvprefix.simulator.SimulationReport;
import io.kvprefix.simulator.Simulator;
import io.kvprefix.workload.LocalHashTable;
import io.kvprefix.workload.Trace;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code kvprefix simulate}: replays a request trace (a Mooncake file, or the built-in workload)
 * against simulated engines with each routing policy in the loop, side by side, and reports cache
 * reuse, prefill work, simulated TTFT, the spread of requests and the router's own cost per decision,
 * then the same at several request rates (docs/BENCHMARKS.md section 5): tables on standard output,
 * and {@code report.json} and {@code index.html} in {@code --out}. The last line of standard output is
 * {@code report: PATH-TO-index.html}.
 *
 * <p>Thread-safety: a command object, used once by one thread.
 */
@Command(
        name = "simulate",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Compare routing policies on a request trace replayed against simulated engines.",
            "The trace (a Mooncake file, or the built-in workload) is replayed against N simulated engines (LRU"
                    + " prefix caches, vLLM V1 chunked prefill) with every routing policy side by side: kvprefix-ttft,"
                    + " the peers' (dynamo-cost, sglang-cache-aware, llm-d-scorers, each with and without KV events)"
                    + " and round-robin, random, least-loaded; then the same at each --sweep-rates request rate.",
            "Model and sources: docs/BENCHMARKS.md section 5. Writes a table, report.json and index.html (charts,"
                    + " TTFT against rate; opens without a server)."
        })
public final class SimulateCommand implements Callable<Integer> {
    @Mixin
    WorkloadOptions workload = new WorkloadOptions();

    @Mixin
    RouterOptions router = new RouterOptions();

    @Override
    public Integer call() throws Exception {
        workload.check(Memory.HEAP_BYTES_PER_BLOCK_STREAMED);
        SimSettings settings = router.settings(workload);
        List<PolicyKind> policies = router.policies();
        List<Double> sweepRates = router.sweepRates();
        int sweepRequests = router.sweepRequests();
        int threads = router.threads();
        Check.outputDir("--out", router.out);
        Trace trace = workload.load(Memory.HEAP_BYTES_PER_BLOCK_STREAMED);
        return run(trace, settings, policies, sweepRates, sweepRequests, threads, router.out, System.out, System.err);
    }

    /**
     * The router, policy, cost-model and output options shared by {@code simulate} and {@code demo}
     * (a picocli mixin).
     *
     * <p>Thread-safety: filled by picocli, then read by one command thread.
     */
    public static final class RouterOptions {
        @Option(
                names = "--policies",
                split = ",",
                paramLabel = "NAMES",
                description = "policies to compare, comma-separated names, or all (every one but the diagnostic "
                        + "dynamo-cost-gpu-only) (default: all)")
        List<String> policies = List.of("all");

        @Option(
                names = "--prefill-rate",
                paramLabel = "TOKENS_PER_S",
                defaultValue = "10000",
                description = "prefill speed of one worker, uncached tokens per second (default: ${DEFAULT-VALUE})")
        double prefillRate;

        @Option(
                names = "--cpu-blocks",
                paramLabel = "N",
                defaultValue = "0",
                description = {
                    "blocks of each mock engine's CPU tier (default: ${DEFAULT-VALUE}, none): blocks the GPU",
                    "evicts go there and are loaded back instead of computed (docs/SPEC.md section 3.1)"
                })
        int cpuBlocks;

        @Option(
                names = "--onload-rate",
                paramLabel = "TOKENS_PER_S",
                defaultValue = "400000",
                description = "how fast a worker loads tokens back from its CPU tier (default: ${DEFAULT-VALUE})")
        double onloadRate;

        @Option(
                names = "--decode-rate",
                paramLabel = "TOKENS_PER_S",
                defaultValue = "50",
                description = "decode speed of one request, tokens per second (default: ${DEFAULT-VALUE})")
        double decodeRate;

        @Option(
                names = "--overlap-weight",
                paramLabel = "W",
                defaultValue = "1.0",
                description = "the router's overlap weight (default: ${DEFAULT-VALUE})")
        double overlapWeight;

        @Option(
                names = "--temperature",
                paramLabel = "T",
                defaultValue = "0",
                description = "the router's softmax temperature; 0 picks the lowest cost (default: ${DEFAULT-VALUE})")
        double temperature;

        @Option(
                names = "--min-match-blocks",
                paramLabel = "N",
                defaultValue = "0",
                description =
                        "the router's minimum match in blocks; shorter matches route by load alone (default: ${DEFAULT-VALUE})")
        int minMatchBlocks;

        @Option(
                names = "--spread-misses",
                description =
                        "the router spreads requests that match nothing round-robin over the least-loaded workers")
        boolean spreadMisses;

        @Option(
                names = "--predicted-ttl",
                paramLabel = "SECONDS",
                defaultValue = "120",
                description =
                        "predicted mode: how long a block stays predicted after it was routed, simulated seconds (default: ${DEFAULT-VALUE})")
        double predictedTtlSeconds;

        @Option(
                names = "--predicted-max-blocks",
                paramLabel = "N",
                defaultValue = "1048576",
                description = "predicted mode: the most predicted blocks (default: ${DEFAULT-VALUE})")
        long predictedMaxBlocks;

        @Option(
                names = "--out",
                paramLabel = "DIR",
                defaultValue = "kvprefix-report",
                description =
                        "where report.json and index.html go (default: ${DEFAULT-VALUE}, in the current directory)")
        Path out;

        @Option(
                names = "--engine",
                paramLabel = "MODEL",
                defaultValue = "vllm-chunked",
                description = "engine model: vllm-chunked (vLLM V1 steps with a token budget) or one-at-a-time "
                        + "(one prefill at a time, decode beside it) (default: ${DEFAULT-VALUE})")
        String engine;

        @Option(
                names = "--max-batched-tokens",
                paramLabel = "N",
                defaultValue = "" + SimSettings.DEFAULT_MAX_BATCHED_TOKENS,
                description = "vllm-chunked: token budget of one engine step (default: ${DEFAULT-VALUE})")
        int maxBatchedTokens;

        @Option(
                names = "--max-num-seqs",
                paramLabel = "N",
                defaultValue = "" + SimSettings.DEFAULT_MAX_NUM_SEQS,
                description = "vllm-chunked: most running requests per engine (default: ${DEFAULT-VALUE})")
        int maxNumSeqs;

        @Option(
                names = "--event-delay-ms",
                paramLabel = "MS",
                defaultValue = "10",
                description =
                        "KV events reach the index this long after the engine publishes them (default: ${DEFAULT-VALUE})")
        double eventDelayMs;

        @Option(
                names = "--rate",
                paramLabel = "X",
                defaultValue = "1",
                description = "request-rate multiplier: arrival times are divided by X (default: ${DEFAULT-VALUE})")
        double rate;

        @Option(
                names = "--slow-factor",
                paramLabel = "F",
                defaultValue = "1",
                description = "worker 0 runs F times slower than the others (default: ${DEFAULT-VALUE})")
        double slowFactor;

        @Option(
                names = "--join-at",
                paramLabel = "FRACTION",
                defaultValue = "0",
                description =
                        "the last worker joins at this fraction of the trace (0: from the start; default: ${DEFAULT-VALUE})")
        double joinAt;

        @Option(
                names = "--sweep-rates",
                split = ",",
                paramLabel = "X",
                description = "request-rate multipliers of the rate sweep in the report, or none " + "(default: "
                        + DEFAULT_SWEEP + ")")
        List<String> sweepRates = List.of(DEFAULT_SWEEP.split(","));

        @Option(
                names = "--sweep-requests",
                paramLabel = "N",
                description = "run the rate sweep on the first N requests only (default: all)")
        Integer sweepRequests;

        @Option(
                names = "--threads",
                paramLabel = "N",
                description = "threads for the rate sweep's runs (default: the available processors)")
        Integer threads;

        static final String DEFAULT_SWEEP = "1,2,3,4,5,6,8";

        /** The default sweep's rates. */
        static List<Double> defaultSweep() {
            return List.of(DEFAULT_SWEEP.split(",")).stream()
                    .map(Double::valueOf)
                    .toList();
        }

        List<Double> sweepRates() {
            if (sweepRates.size() == 1 && sweepRates.get(0).strip().equalsIgnoreCase("none")) {
                return List.of();
            }
            java.util.TreeSet<Double> rates = new java.util.TreeSet<>();
            for (String r : sweepRates) {
                double v;
                try {
                    v = Double.parseDouble(r.strip());
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("--sweep-rates: '" + r + "' is not a number (or give none)");
                }
                if (!(v > 0) || v > 1e6) {
                    throw new IllegalArgumentException("--sweep-rates must be positive numbers, got " + r);
                }
                rates.add(v);
            }
            return List.copyOf(rates);
        }

        int sweepRequests() {
            if (sweepRequests != null && sweepRequests < 1) {
                throw new IllegalArgumentException("--sweep-requests must be >= 1, got " + sweepRequests);
            }
            return sweepRequests != null ? sweepRequests : Integer.MAX_VALUE;
        }

        int threads() {
            if (threads != null && threads < 1) {
                throw new IllegalArgumentException("--threads must be >= 1, got " + threads);
            }
            return threads != null ? threads : Runtime.getRuntime().availableProcessors();
        }

        SimSettings settings(WorkloadOptions w) {
            Check.positive("--prefill-rate", prefillRate);
            Check.positive("--decode-rate", decodeRate);
            if (!(predictedTtlSeconds > 0) || predictedTtlSeconds > 1e9) {
                throw new IllegalArgumentException(
                        "--predicted-ttl must be a positive number of seconds, got " + predictedTtlSeconds);
            }
            if (!(eventDelayMs >= 0) || eventDelayMs > 3.6e6) {
                throw new IllegalArgumentException(
                        "--event-delay-ms must be between 0 and 3,600,000, got " + eventDelayMs);
            }
            return SimSettings.builder()
                    .workers(w.workers())
                    .cacheBlocks(w.cacheBlocks())
                    .cpuBlocks(cpuBlocks)
                    .onloadTokensPerS(onloadRate)
                    .seed(w.seed)
                    .prefillTokensPerS(prefillRate)
                    .decodeTokensPerS(decodeRate)
                    .engine(EngineModel.of(engine))
                    .maxBatchedTokens(maxBatchedTokens)
                    .maxNumSeqs(maxNumSeqs)
                    .eventDelay(Duration.ofNanos(Math.round(eventDelayMs * 1e6)))
                    .rate(rate)
                    .slowFactor(slowFactor)
                    .joinAt(joinAt)
                    .overlapWeight(overlapWeight)
                    .temperature(temperature)
                    .minMatchBlocks(minMatchBlocks)
                    .spreadMisses(spreadMisses)
                    .predictedTtl(Duration.ofNanos(Math.round(predictedTtlSeconds * 1e9)))
                    .predictedMaxBlocks(predictedMaxBlocks)
                    .build();
        }

        List<PolicyKind> policies() {
            try {
                return PolicyKind.parse(policies);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        e.getMessage().startsWith("--policies") ? e.getMessage() : "--policies: " + e.getMessage(), e);
            }
        }
    }

    /**
     * Simulates every policy on {@code trace}, then the rate sweep, prints the tables and the report's
     * path to {@code out} (progress on {@code err}), writes the files into {@code dir}, and returns the
     * exit status.
     */
    static int run(
            Trace trace,
            SimSettings settings,
            List<PolicyKind> kinds,
            List<Double> sweepRates,
            int sweepRequests,
            int threads,
            Path dir,
            PrintStream out,
            PrintStream err)
            throws IOException {
        if (trace.size() == 0) {
            throw new IllegalArgumentException("the trace has no requests");
        }
        Files.createDirectories(dir);
        LocalHashTable hashes = LocalHashTable.forTrace(trace);
        // Warm the JIT on the routers' code so their measured decision cost is not the interpreter's.
        Trace warm = trace.truncate(Math.min(trace.size(), 1_000));
        for (PolicyKind k : kinds) {
            if (k.cacheAware()) {
                Simulator.run(warm, hashes, settings, k, n -> {});
            }
        }
        Trace sweepTrace = trace.truncate(Math.min(trace.size(), sweepRequests));
        long total = (long) kinds.size() * (trace.size() + (long) sweepTrace.size() * sweepRates.size());
        Progress progress = new Progress("simulate", total, err);
        AtomicLong done = new AtomicLong();
        List<PolicyResult> results = new ArrayList<>();
        for (PolicyKind k : kinds) {
            results.add(Simulator.run(trace, hashes, settings, k, n -> progress.update(done.addAndGet(n))));
        }
        List<RateSweep.Point> sweep = RateSweep.run(
                sweepTrace, hashes, settings, kinds, sweepRates, threads, n -> progress.update(done.addAndGet(n)));
        progress.finish();
        SimulationReport report = new SimulationReport(
                SimulationReport.TraceInfo.of(trace, settings),
                settings,
                kinds,
                results,
                sweep,
                SimulationReport.TraceInfo.of(sweepTrace, settings));
        Path json = dir.resolve("report.json");
        Path html = dir.resolve("index.html");
        report.writeJson(json);
        report.writeHtml(html);
        out.print(report.table());
        out.println();
        out.println("json: " + json.toAbsolutePath().normalize());
        out.println("report: " + html.toAbsolutePath().normalize());
        out.flush();
        return 0;
    }
}
