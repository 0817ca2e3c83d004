package io.kvprefix.cli;

import io.kvprefix.Implementation;
import io.kvprefix.simulator.PolicyKind;
import io.kvprefix.simulator.SimSettings;
import io.kvprefix.workload.SyntheticTrace;
import io.kvprefix.workload.Trace;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kvprefix demo}: the main job. {@code simulate} on the built-in chat workload with its defaults
 * (every policy side by side, 16 mock engines), needing no trace file; it ends by printing the path of
 * the HTML report.
 *
 * <p>Thread-safety: a command object, used once by one thread.
 */
@Command(
        name = "demo",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Run the main job: the routing simulation on the built-in chat workload, with a report.",
            "This is kvprefix simulate on --requests requests of the built-in workload, every policy side by side;"
                    + " it ends by printing where the HTML report is."
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

    @Override
    public Integer call() throws Exception {
        Check.atLeast("--requests", requests, 1);
        Memory.check(
                "--requests " + requests,
                requests * WorkloadOptions.BUILT_IN_BLOCKS_PER_REQUEST * Memory.HEAP_BYTES_PER_BLOCK_STREAMED,
                0);
        Check.outputDir("--out", out);
        SimSettings settings = SimSettings.defaults();
        Trace trace = SyntheticTrace.generate(requests, settings.seed());
        List<PolicyKind> all = PolicyKind.all();
        System.err.println(
                "kvprefix demo: " + trace.size() + " chat requests (built-in workload: shared system prompts, "
                        + "multi-turn conversations) on " + settings.workers()
                        + " simulated vLLM engines, " + all.size() + " routing policies side by side, then a rate sweep"
                        + " on the first " + SWEEP_REQUESTS + "; " + Implementation.nativeStatus());
        return SimulateCommand.run(
                trace,
                settings,
                all,
                SimulateCommand.RouterOptions.defaultSweep(),
                SWEEP_REQUESTS,
                Runtime.getRuntime().availableProcessors(),
                out,
                System.out,
                System.err);
    }
}
