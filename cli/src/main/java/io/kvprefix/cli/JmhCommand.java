package io.kvprefix.cli;

import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.openjdk.jmh.runner.BenchmarkList;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.format.OutputFormat;
import org.openjdk.jmh.runner.format.OutputFormatFactory;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.VerboseMode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Unmatched;

/**
 * {@code kvprefix jmh [JMH options] [benchmark regexps]}: runs the JMH suites packaged in this jar
 * (HashingBenchmark, MatchBenchmark, EventsBenchmark, ...) with JMH's own command line, for example
 * {@code ./kvprefix jmh 'bench.MatchBenchmark' -p depth=64 -prof gc} (the pattern is a regular expression
 * over full names: plain {@code MatchBenchmark} also selects HashAndMatchBenchmark). {@code ./kvprefix jmh -h}
 * lists JMH's options.
 *
 * <p>Thread-safety: a command object, used once by one thread.
 */
@Command(
        name = "jmh",
        description = {
            "Run the JMH benchmark suites (arguments go to JMH; -h for its help, -l to list).",
            "Example: ./kvprefix jmh 'bench.MatchBenchmark' -p depth=64 -prof gc (patterns are regular expressions)"
        })
final class JmhCommand implements Callable<Integer> {
    @Parameters(arity = "0..*", paramLabel = "ARGS", description = "JMH arguments")
    List<String> args = new ArrayList<>();

    @Unmatched
    List<String> unmatched = new ArrayList<>();

    @Override
    public Integer call() {
        List<String> all = new ArrayList<>(args);
        all.addAll(unmatched);
        return runJmh(all.toArray(new String[0]));
    }

    /**
     * Runs JMH's own command line with {@code args} (Main calls this directly, before picocli parses
     * anything). Arguments JMH cannot parse, and patterns that select no benchmark, are refused in one
     * line with exit status 2 before JMH starts; a run that fails is one line with status 1.
     */
    static int runJmh(String[] args) {
        if (args.length == 1 && args[0].equals("--help")) {
            args = new String[] {"-h"}; // every other command takes --help; JMH's own flag is -h
        }
        boolean debug = Main.debugFromEnvironment();
        try {
            // What org.openjdk.jmh.Main does, without its System.exit and its stack traces.
            CommandLineOptions options = new CommandLineOptions(args);
            Runner runner = new Runner(options);
            if (options.shouldHelp()) {
                options.showHelp();
            } else if (options.shouldList()) {
                runner.list();
            } else if (options.shouldListWithParams()) {
                runner.listWithParams(options);
            } else if (options.shouldListProfilers()) {
                options.listProfilers();
            } else if (options.shouldListResultFormats()) {
                options.listResultFormats();
            } else {
                List<String> includes = options.getIncludes().isEmpty() ? List.of(".*") : options.getIncludes();
                OutputFormat quiet = OutputFormatFactory.createFormatInstance(
                        new PrintStream(OutputStream.nullOutputStream(), false, StandardCharsets.UTF_8),
                        VerboseMode.SILENT);
                if (BenchmarkList.defaultList()
                        .find(quiet, includes, options.getExcludes())
                        .isEmpty()) {
                    return fail(2, "no benchmark matches " + includes + " (./kvprefix jmh -l lists them)", null, debug);
                }
                runner.run();
            }
            return 0;
        } catch (CommandLineOptionException e) {
            return fail(
                    2,
                    "JMH cannot parse its arguments: " + e.getMessage() + " (./kvprefix jmh -h lists JMH's options)",
                    e,
                    debug);
        } catch (Exception e) {
            return fail(1, e.getMessage() == null ? e.toString() : e.getMessage(), e, debug);
        }
    }

    private static int fail(int status, String message, Exception e, boolean debug) {
        if (debug && e != null) {
            e.printStackTrace();
        }
        System.err.println("kvprefix jmh: " + Main.oneLine(message));
        return status;
    }
}
