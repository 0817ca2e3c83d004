package io.kvprefix.cli;

import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code kvprefix} command line (run through the {@code ./kvprefix} launcher).
 *
 * <p>Every command writes its results to standard output and its logs to standard error. Exit
 * status: 0 on success, 2 for a usage error (with a message saying what is wrong), 1 when a command
 * fails (with a one-line reason, never a stack trace unless {@code KVPREFIX_DEBUG} is set).
 *
 * <p>Thread-safety: a program entry point; not meant to be called concurrently.
 */
@Command(
        name = "kvprefix",
        mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class,
        description = "KV-cache-aware prefix index for Java LLM routers.",
        subcommands = {
            DemoCommand.class,
            SimulateCommand.class,
            HashCommand.class,
            GenOpsCommand.class,
            ReplayCommand.class,
            ListenCommand.class,
            RelayCommand.class,
            FleetBenchCommand.class,
            BenchCommand.class,
            SweepCommand.class,
            JmhCommand.class,
            FootprintCommand.class,
            SnapshotBenchCommand.class,
        })
public final class Main implements Runnable {

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs the command line and returns its exit status (used by tests). */
    public static int run(String... args) {
        configureLogging();
        if (args.length > 0 && args[0].equals("jmh")) {
            // JMH has its own option syntax (-prof gc, -p k=v): hand everything over untouched.
            return JmhCommand.runJmh(java.util.Arrays.copyOfRange(args, 1, args.length));
        }
        CommandLine cl = new CommandLine(new Main());
        cl.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            PrintWriter err = commandLine.getErr();
            if (System.getenv("KVPREFIX_DEBUG") != null) {
                ex.printStackTrace(err);
            }
            String msg = ex.getMessage() == null ? ex.toString() : ex.getMessage();
            err.println("kvprefix " + commandLine.getCommandName() + ": " + msg);
            err.flush();
            return ex instanceof CommandLine.ParameterException || ex instanceof IllegalArgumentException ? 2 : 1;
        });
        return cl.execute(args);
    }

    /** One line per log record on standard error: "LEVEL: message". */
    static void configureLogging() {
        if (System.getProperty("java.util.logging.SimpleFormatter.format") == null) {
            System.setProperty("java.util.logging.SimpleFormatter.format", "%4$s: %5$s%6$s%n");
        }
    }

    @Override
    public void run() {
        new CommandLine(this).usage(System.err);
    }

    /** Reports the library and native status. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Main.class.getPackage().getImplementationVersion();
            return new String[] {
                "kvprefix " + (v == null ? "(development build)" : v), io.kvprefix.Implementation.nativeStatus()
            };
        }
    }
}
