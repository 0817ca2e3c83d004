package io.kvprefix.cli;

import io.kvprefix.cli.internal.sim.Policy;
import io.kvprefix.cli.internal.sim.PolicyResult;
import io.kvprefix.cli.internal.sim.SimSettings;
import io.kvprefix.cli.internal.sim.SimulationReport;
import io.kvprefix.cli.internal.sim.Simulator;
import io.kvprefix.workload.LocalHashTable;
import io.kvprefix.workload.Trace;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code kvprefix simulate}: replays a request trace (a Mooncake file, or the built-in workload)
 * against mock engines with each routing policy in the loop, side by side, and reports cache reuse,
 * prefill work, simulated TTFT, the spread of requests and the router's own cost per decision: a table
 * on standard output, and {@code report.json} and {@code index.html} in {@code --out}. The last line
 * of standard output is {@code report: PATH-TO-index.html}.
 *
 * <p>Thread-safety: a command object, used once by one thread.
 */
@Command(
        name = "simulate",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Compare routing policies on a request trace replayed against mock engines.",
            "The trace (a Mooncake file, or the built-in workload) is replayed against N mock engines (LRU prefix"
                    + " caches) with a router in the loop, for several routing policies side by side: kv-aware"
                    + " (events), kv-aware (predicted), round-robin, random, least-loaded.",
            "Cost model: one prefill at a time per worker, first come first served, at --prefill-rate uncached"
                    + " tokens/s; TTFT = queueing + own prefill; decode beside it at --decode-rate tokens/s per"
                    + " request.",
            "Writes a table, report.json and index.html (charts; opens without a server)."
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
        List<Policy.Kind> policies = router.policies();
        Check.outputDir("--out", router.out);
        Trace trace = workload.load(Memory.HEAP_BYTES_PER_BLOCK_STREAMED);
        return run(trace, settings, policies, router.out, System.out, System.err);
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
                description =
                        "policies to compare, comma-separated (default: kv-events,kv-predicted,round-robin,random,least-loaded)")
        List<String> policies = List.of("kv-events", "kv-predicted", "round-robin", "random", "least-loaded");

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

        SimSettings settings(WorkloadOptions w) {
            Check.positive("--prefill-rate", prefillRate);
            Check.positive("--decode-rate", decodeRate);
            if (!(predictedTtlSeconds > 0) || predictedTtlSeconds > 1e9) {
                throw new IllegalArgumentException(
                        "--predicted-ttl must be a positive number of seconds, got " + predictedTtlSeconds);
            }
            if (predictedMaxBlocks < 1) {
                throw new IllegalArgumentException("--predicted-max-blocks must be >= 1, got " + predictedMaxBlocks);
            }
            if (!(overlapWeight >= 0) || Double.isInfinite(overlapWeight)) {
                throw new IllegalArgumentException(
                        "--overlap-weight must be a finite number >= 0, got " + overlapWeight);
            }
            if (!(temperature >= 0) || Double.isInfinite(temperature)) {
                throw new IllegalArgumentException("--temperature must be a finite number >= 0, got " + temperature);
            }
            if (minMatchBlocks < 0) {
                throw new IllegalArgumentException("--min-match-blocks must be >= 0, got " + minMatchBlocks);
            }
            return new SimSettings(
                    w.workers(),
                    w.cacheBlocks(),
                    prefillRate,
                    decodeRate,
                    w.seed,
                    overlapWeight,
                    temperature,
                    minMatchBlocks,
                    spreadMisses,
                    Duration.ofNanos(Math.round(predictedTtlSeconds * 1e9)),
                    predictedMaxBlocks,
                    cpuBlocks,
                    onloadRate);
        }

        List<Policy.Kind> policies() {
            LinkedHashSet<Policy.Kind> kinds = new LinkedHashSet<>();
            for (String p : policies) {
                try {
                    kinds.add(Policy.Kind.of(p));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("--policies: " + e.getMessage(), e);
                }
            }
            if (kinds.isEmpty()) {
                throw new IllegalArgumentException("--policies names no policy");
            }
            return List.copyOf(kinds);
        }
    }

    /**
     * Simulates every policy on {@code trace}, prints the table and the report's path to {@code out}
     * (progress on {@code err}), writes the files into {@code dir}, and returns the exit status.
     */
    static int run(
            Trace trace, SimSettings settings, List<Policy.Kind> kinds, Path dir, PrintStream out, PrintStream err)
            throws IOException {
        if (trace.size() == 0) {
            throw new IllegalArgumentException("the trace has no requests");
        }
        Files.createDirectories(dir);
        LocalHashTable hashes = LocalHashTable.forTrace(trace);
        // Warm the JIT on the routers' code so their measured decision cost is not the interpreter's.
        Trace warm = trace.truncate(Math.min(trace.size(), 1_000));
        for (Policy.Kind k : kinds) {
            if (k == Policy.Kind.KV_EVENTS || k == Policy.Kind.KV_PREDICTED) {
                Simulator.run(warm, hashes, settings, k, n -> {});
            }
        }
        Progress progress = new Progress("simulate", (long) trace.size() * kinds.size(), err);
        AtomicLong done = new AtomicLong();
        List<PolicyResult> results = new ArrayList<>();
        for (Policy.Kind k : kinds) {
            results.add(Simulator.run(trace, hashes, settings, k, n -> progress.update(done.addAndGet(n))));
        }
        progress.finish();
        SimulationReport report = new SimulationReport(
                new SimulationReport.TraceInfo(
                        trace.source(),
                        trace.size(),
                        trace.tokensPerBlock(),
                        Simulator.inputTokens(trace),
                        Simulator.infiniteCacheHitTokens(trace)),
                settings,
                results);
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
