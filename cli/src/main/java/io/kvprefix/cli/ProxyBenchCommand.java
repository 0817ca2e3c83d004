package io.kvprefix.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code kvprefix proxy-bench}: {@code kvprefix serve} beside Debian's nginx in front of the same
 * stand-in engines, measured in one run (docs/SERVE.md section 7; the method is docs/BENCHMARKS.md
 * section 7). A benchmark, not a test: run it on a quiet machine. It prints one Markdown table on
 * standard output and its progress on standard error; the processes' logs, nginx's configuration and
 * wrk's script stay in {@code --out}.
 *
 * <p>Exit status: 0 after a run; 2 for a bad option or a missing nginx or wrk; 1 if a measurement fails.
 *
 * <p>Thread-safety: a command object, used once by one thread.
 */
@Command(
        name = "proxy-bench",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Measure kvprefix serve beside nginx as proxies in front of the same stand-in engines.",
            "Added time to first byte (through the proxy minus direct) at each --concurrency, short",
            "requests per second with wrk, memory per open idle stream, the router's decision cost",
            "on a long token-id prompt; targets alternate within each round. docs/SERVE.md section 7."
        })
final class ProxyBenchCommand implements Callable<Integer> {
    @Mixin
    BenchFlags bench = new BenchFlags();

    @Option(
            names = "--rounds",
            paramLabel = "N",
            defaultValue = "3",
            description = "rounds, each over every concurrency and wrk (default: ${DEFAULT-VALUE})")
    int rounds;

    @Option(
            names = "--requests",
            paramLabel = "N",
            defaultValue = "1024",
            description = "requests per target, concurrency and round (default: ${DEFAULT-VALUE})")
    int requests;

    @Option(
            names = "--concurrency",
            paramLabel = "C",
            split = ",",
            defaultValue = "1,64,512",
            description = "concurrent streams for the first-byte figures (default: ${DEFAULT-VALUE})")
    List<Integer> concurrency;

    @Option(
            names = "--open-streams",
            paramLabel = "N",
            defaultValue = "1000",
            description = "idle streams held open for the memory figure (default: ${DEFAULT-VALUE})")
    int openStreams;

    @Option(
            names = "--wrk-seconds",
            paramLabel = "S",
            defaultValue = "10",
            description = "seconds of each wrk run (default: ${DEFAULT-VALUE})")
    int wrkSeconds;

    @Option(
            names = "--policy",
            paramLabel = "NAME",
            defaultValue = "kvprefix-ttft",
            description = "serve's routing policy (docs/SPEC.md section 6; default: ${DEFAULT-VALUE})")
    String policy;

    @Option(
            names = "--out",
            paramLabel = "DIR",
            defaultValue = "kvprefix-proxy-bench",
            description = "where the logs, nginx.conf and wrk.lua go (default: ${DEFAULT-VALUE})")
    Path out;

    @Override
    public Integer call() throws Exception {
        int engines = bench.engines();
        Check.atLeast("--rounds", rounds, 1);
        Check.atLeast("--requests", requests, 1);
        Check.inRange("--open-streams", openStreams, 1, 10_000);
        Check.atLeast("--wrk-seconds", wrkSeconds, 1);
        policy = BenchFlags.policy(policy);
        List<Integer> levels = BenchFlags.concurrency(concurrency);
        Check.outputDir("--out", out); // every option checked before the machine's tools
        for (Path tool : List.of(NginxProcess.BINARY, Wrk.BINARY)) {
            if (!Files.isExecutable(tool)) {
                throw new IllegalArgumentException(tool + " is missing: install Debian's " + tool.getFileName()
                        + " (apt-get install " + tool.getFileName() + ")");
            }
        }
        Files.createDirectories(out);
        ProxyBench.Options o = new ProxyBench.Options(
                engines,
                rounds,
                requests,
                levels,
                256,
                wrkSeconds,
                64,
                openStreams,
                8192,
                2000,
                0.01,
                policy,
                out.toAbsolutePath());
        String table = new ProxyBench(o, System.err).run();
        System.out.print(table);
        System.out.flush();
        System.err.println("proxy-bench: logs in " + out.toAbsolutePath().normalize());
        return 0;
    }
}
