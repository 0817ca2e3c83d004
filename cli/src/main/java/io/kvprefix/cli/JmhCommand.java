package io.kvprefix.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
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

    /** Runs JMH's own command line with {@code args} (Main calls this directly, before picocli parses anything). */
    static int runJmh(String[] args) {
        if (args.length == 1 && args[0].equals("--help")) {
            args = new String[] {"-h"}; // every other command takes --help; JMH's own flag is -h
        }
        try {
            org.openjdk.jmh.Main.main(args);
            return 0;
        } catch (Exception e) {
            System.err.println("kvprefix jmh: " + e.getMessage());
            return 1;
        }
    }
}
