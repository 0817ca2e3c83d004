package io.kvprefix.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/**
 * {@code kvprefix demo}: the main job. The routing simulation it runs is not built yet; until it is,
 * this command says so plainly and fails rather than pretending.
 *
 * <p>Thread-safety: a command object, used once by one thread.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Run the main job: a routing simulation on the built-in workload (not built yet).")
final class DemoCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        System.err.println("kvprefix demo: the routing simulation (Router, mock engines, report) is not built yet; "
                + "it arrives with the router issue. Try ./kvprefix hash --help meanwhile.");
        return 1;
    }
}
