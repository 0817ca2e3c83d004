package io.kvprefix.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.util.List;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/**
 * The {@code kvprefix} command line (run through the {@code ./kvprefix} launcher).
 *
 * <p>Every command writes its results to standard output and its logs to standard error. Exit
 * status: 0 on success; 2 for a bad argument or input, answered with one line on standard error
 * that names the option or file and what is wrong; 1 when a command fails on its way (a one-line
 * reason). No stack trace is printed unless {@code --debug} is given or {@code KVPREFIX_DEBUG=1}
 * is set.
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
            TokenizeCommand.class,
            GenOpsCommand.class,
            ReplayCommand.class,
            ListenCommand.class,
            RelayCommand.class,
            ServeCommand.class,
            EppCommand.class,
            FleetBenchCommand.class,
            BenchCommand.class,
            SweepCommand.class,
            JmhCommand.class,
            FootprintCommand.class,
            SnapshotBenchCommand.class,
            StandinCommand.class,
            EppBenchCommand.class,
        })
public final class Main implements Runnable {
    @Option(
            names = "--debug",
            scope = ScopeType.INHERIT,
            description = "on an error, print its stack trace too (as KVPREFIX_DEBUG=1 does)")
    boolean debug;

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
        Main main = new Main();
        CommandLine cl = new CommandLine(main);
        cl.setParameterExceptionHandler((ex, ignored) -> {
            CommandLine c = ex.getCommandLine();
            return report(c.getErr(), c.getCommandSpec().qualifiedName(), usageMessage(ex), ex, main.debug, 2);
        });
        cl.setExecutionExceptionHandler((ex, c, parseResult) -> {
            int status = ex instanceof IllegalArgumentException ? 2 : 1;
            return report(c.getErr(), c.getCommandSpec().qualifiedName(), message(ex), ex, main.debug, status);
        });
        try {
            return cl.execute(args);
        } catch (OutOfMemoryError e) {
            String what = cl.getParseResult() == null ? "kvprefix" : commandName(cl.getParseResult());
            return report(
                    cl.getErr(),
                    what,
                    "ran out of memory (the Java heap may grow to "
                            + Memory.gib(Runtime.getRuntime().maxMemory())
                            + "): set KVPREFIX_JAVA_OPTS=-Xmx<more>, or make the run smaller",
                    e,
                    main.debug,
                    1);
        }
    }

    /** True if the environment asks for stack traces ({@code KVPREFIX_DEBUG} set, and not to 0). */
    static boolean debugFromEnvironment() {
        String v = System.getenv("KVPREFIX_DEBUG");
        return v != null && !v.isEmpty() && !v.equals("0");
    }

    /** Prints {@code "NAME: MESSAGE"} as one line (the stack trace first when debugging) and returns {@code status}. */
    private static int report(PrintWriter err, String name, String message, Throwable t, boolean debug, int status) {
        if (debug || debugFromEnvironment()) {
            t.printStackTrace(err);
        }
        err.println(name + ": " + oneLine(message));
        err.flush();
        return status;
    }

    /** A usage error in one line: picocli's message, its suggestions, and where the options are listed. */
    private static String usageMessage(CommandLine.ParameterException ex) {
        StringBuilder sb = new StringBuilder(ex.getMessage());
        if (ex instanceof CommandLine.UnmatchedArgumentException u) {
            List<String> suggestions = u.getSuggestions();
            if (!suggestions.isEmpty()) {
                sb.append("; did you mean ")
                        .append(String.join(" or ", suggestions))
                        .append('?');
            }
        }
        String name = ex.getCommandLine().getCommandSpec().qualifiedName();
        return sb.append(" (")
                .append(name)
                .append(" --help lists ")
                .append(name.equals("kvprefix") ? "the commands" : "the options")
                .append(')')
                .toString();
    }

    private static String message(Throwable t) {
        return t.getMessage() == null || t.getMessage().isBlank() ? t.toString() : t.getMessage();
    }

    /** Folds a message onto one line: its lines joined with "; ". */
    static String oneLine(String s) {
        return s.strip().replaceAll("\\s*\\R\\s*", "; ");
    }

    private static String commandName(CommandLine.ParseResult r) {
        while (r.subcommand() != null) {
            r = r.subcommand();
        }
        return r.commandSpec().qualifiedName();
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

    /**
     * The version: the build's (the Maven project version, written into the jar at build time), the
     * commit the launcher passes as {@code -Dkvprefix.commit} (git describe), and the native status.
     */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String commit = System.getProperty("kvprefix.commit", "");
            return new String[] {
                "kvprefix " + buildVersion() + (commit.isBlank() ? "" : " (" + commit + ")"),
                io.kvprefix.Implementation.nativeStatus()
            };
        }

        /** The project version from {@code kvprefix-version.properties}, filtered by the build. */
        static String buildVersion() {
            Properties p = new Properties();
            try (InputStream in = Main.class.getResourceAsStream("kvprefix-version.properties")) {
                if (in != null) {
                    p.load(in);
                }
            } catch (IOException e) {
                return "unknown (" + e.getMessage() + ")";
            }
            return p.getProperty("version", "unknown");
        }
    }
}
