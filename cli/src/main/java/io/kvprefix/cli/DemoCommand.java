package io.kvprefix.cli;

import io.kvprefix.Implementation;
import io.kvprefix.simulator.PolicyKind;
import io.kvprefix.simulator.SimSettings;
import io.kvprefix.workload.SyntheticTrace;
import io.kvprefix.workload.Trace;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kvprefix demo}: the main job. {@code simulate} on the built-in chat workload with its defaults
 * (every policy side by side, 16 mock engines), needing no trace file, then the live leg on real HTTP
 * ({@link LiveLeg}, docs/OPERATING.md section 12); it ends by printing the path of the HTML report.
 *
 * <p>Thread-safety: a command object, used once by one thread.
 */
@Command(
        name = "demo",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Run the main job: the routing simulation on the built-in chat workload, with a report.",
            "This is kvprefix simulate on --requests requests of the built-in workload, every policy side by side,"
                    + " then a live leg: 8 stand-in engines and kvprefix serve on real HTTP, kvprefix-ttft against"
                    + " round-robin (--no-live skips it); it ends by printing where the HTML report is."
        })
final class DemoCommand implements Callable<Integer> {
    /** Requests of the demo: about four hours of the built-in chat traffic, simulated in seconds. */
    static final int DEMO_REQUESTS = 50_000;
    /** Requests of the demo's rate sweep (the first ones), to keep the demo to a minute or so. */
    static final int SWEEP_REQUESTS = 10_000;

    @Option(
            names = "--requests",
            paramLabel = "N",
            defaultValue = "" + DEMO_REQUESTS,
            description = "requests of the built-in workload (default: ${DEFAULT-VALUE})")
    int requests;

    @Option(
            names = "--out",
            paramLabel = "DIR",
            defaultValue = "kvprefix-report",
            description = "where report.json and index.html go (default: ${DEFAULT-VALUE}, in the current directory)")
    Path out;

    @Option(
            names = "--live-requests",
            paramLabel = "N",
            defaultValue = "" + LiveLeg.DEFAULT_REQUESTS,
            description =
                    "requests of the live leg, per policy (default: ${DEFAULT-VALUE}; docs/OPERATING.md section 12)")
    int liveRequests;

    @Option(
            names = "--no-live",
            description = "skip the live leg (stand-in engines and kvprefix serve on real HTTP): the simulation only")
    boolean noLive;

    @Override
    public Integer call() throws Exception {
        Check.atLeast("--requests", requests, 1);
        Memory.check(
                "--requests " + requests,
                requests * WorkloadOptions.BUILT_IN_BLOCKS_PER_REQUEST * Memory.HEAP_BYTES_PER_BLOCK_STREAMED,
                0);
        Check.outputDir("--out", out);
        Check.atLeast("--live-requests", liveRequests, 1);
        long t0 = System.nanoTime();
        SimSettings settings = SimSettings.defaults();
        Trace trace = SyntheticTrace.generate(requests, settings.seed());
        List<PolicyKind> all = PolicyKind.all();
        System.err.println(
                "kvprefix demo: " + trace.size() + " chat requests (built-in workload: shared system prompts, "
                        + "multi-turn conversations) on " + settings.workers()
                        + " simulated vLLM engines, " + all.size() + " routing policies side by side, then a rate sweep"
                        + " on the first " + SWEEP_REQUESTS + "; " + Implementation.nativeStatus());
        int status = SimulateCommand.run(
                trace,
                settings,
                all,
                SimulateCommand.RouterOptions.defaultSweep(),
                SWEEP_REQUESTS,
                Runtime.getRuntime().availableProcessors(),
                out,
                System.out,
                System.err);
        if (status == 0 && !noLive) {
            live(settings);
        }
        System.err.printf(Locale.ROOT, "kvprefix demo: done in %.0f s%n", (System.nanoTime() - t0) / 1e9);
        return status;
    }

    /** The live leg (docs/OPERATING.md section 12), its table printed and its results added to the report. */
    private void live(SimSettings settings) throws IOException, InterruptedException {
        Trace trace = LiveLeg.scaled(SyntheticTrace.generate(liveRequests, settings.seed()), LiveLeg.TOKENS_PER_ID);
        long t0 = System.nanoTime();
        List<LiveLeg.Measured> ms = LiveLeg.run(trace, LiveLeg.simSettings(settings), out.resolve("live"), System.err);
        String description = LiveReport.describe(trace, (System.nanoTime() - t0) / 1e9);
        LiveReport.addToJson(out.resolve("report.json"), description, ms);
        LiveReport.addToHtml(out.resolve("index.html"), description, ms);
        System.out.println();
        System.out.println(description + ":");
        System.out.print(LiveReport.table(ms));
        System.out.println(
                "report: " + out.resolve("index.html").toAbsolutePath().normalize());
        System.out.flush();
    }
}
