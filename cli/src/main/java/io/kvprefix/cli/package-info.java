/**
 * The {@code kvprefix} command line: {@link io.kvprefix.cli.Main} and one package-private class per
 * command ({@code demo}, {@code simulate}, {@code hash}, {@code gen-ops}, {@code replay},
 * {@code listen}, {@code bench}, {@code sweep}, {@code jmh}, {@code footprint}), run through the
 * {@code ./kvprefix} launcher from the runnable jar this module builds ({@code cli/target/kvprefix-cli.jar}).
 *
 * <p>Results go to standard output, logs and progress to standard error; the exit status is 0 on
 * success, 2 for a usage error and 1 when a command fails, with a one-line reason.
 *
 * <p><b>The shape of a command.</b> Its {@code call()} reads validate, build, run, print: the options
 * are checked first with the shared helpers of {@link io.kvprefix.cli.Check} (each problem one line
 * naming the option, before any work), then what it needs is built, run, and its results printed, the
 * machine-readable ones (JSON) as the last lines of standard output. A command that runs until it is
 * stopped ({@code listen}, {@code relay}, {@code listen --nats}) lives in a
 * {@link io.kvprefix.cli.Lifecycle}: the shutdown hook that turns Ctrl-C or SIGTERM into a clean end,
 * the loop with its periodic tasks ({@code --stats-interval}, {@code --snapshot-interval}), its log
 * lines ({@code kvprefix COMMAND: ...}), its final lines and its metrics endpoint
 * ({@code --metrics-port}); the next long-running commands hook in there. {@code ToolShapeTest} holds
 * every method of the tools to 60 lines, a command's {@code call()} to 80.
 *
 * <p><b>The top of the module graph.</b> The commands are thin: they parse options, call the module
 * that does the work and print. {@code replay}, {@code gen-ops} and {@code listen --queries} speak the
 * op-stream format ({@code kvprefix-opstream}); {@code gen-ops}, {@code simulate} and {@code demo} use
 * the workloads ({@code kvprefix-workloads}); {@code bench}, {@code sweep} and {@code jmh} run the
 * benchmarks ({@code kvprefix-benchmarks}, whose JMH suites are packaged into this module's jar, so
 * {@code kvprefix jmh} finds them); {@code listen} runs the ZMQ subscriber ({@code kvprefix-zmq}).
 * Every index is made by name through {@link io.kvprefix.opstream.Implementations}. Nothing depends on
 * this module, so no cycle can pass through it. {@code simulate} and {@code demo} run the routing
 * simulation of {@code kvprefix-simulator}.
 */
package io.kvprefix.cli;
