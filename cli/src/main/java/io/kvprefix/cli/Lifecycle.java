package io.kvprefix.cli;

import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The life of a command that runs until it is stopped ({@code listen}, {@code relay}, the fleet
 * replica of {@code listen --nats}; the place to hook the next long-running command and its
 * {@code --metrics-port}): a shutdown hook that turns Ctrl-C or SIGTERM into a clean end, the loop that
 * runs until {@code --duration}, a signal or the end of the input with periodic tasks, its log lines
 * and its final lines on standard output. The command-line package description has the shape of a
 * command (validate, build, run, print).
 *
 * <p>Thread-safety: used by the command's thread; the shutdown hook only signals it and waits for
 * {@link #close}.
 */
final class Lifecycle implements AutoCloseable {
    /** How often the loop looks whether its input ended, when it can end by itself. */
    private static final long POLL_NANOS = 20_000_000L;

    private final String command;
    private final boolean quiet;
    private final PrintStream err = System.err;
    private final CountDownLatch stop = new CountDownLatch(1);
    private final CountDownLatch finished = new CountDownLatch(1);
    private final Thread hook;
    private ListenMetrics metrics;

    /** A periodic task of the loop: {@code action} every {@code every}. */
    record Periodic(Duration every, Runnable action) {}

    private Lifecycle(String command, Duration drain, boolean quiet) {
        this.command = command;
        this.quiet = quiet;
        this.hook = new Thread(
                () -> {
                    stop.countDown();
                    try {
                        // let the final snapshot, the results and the stats be written before the JVM goes
                        finished.await(drain.toMillis(), TimeUnit.MILLISECONDS);
                    } catch (InterruptedException ignored) {
                        Thread.currentThread().interrupt();
                    }
                },
                "kvprefix-" + command + "-shutdown");
    }

    /**
     * Starts the life of {@code kvprefix COMMAND}: from now on Ctrl-C or SIGTERM ends the loop, and the
     * JVM waits up to {@code drain} for {@link #close} (the command's last lines) before it exits.
     *
     * @param quiet whether {@link #status} lines are left out
     */
    static Lifecycle start(String command, Duration drain, boolean quiet) {
        Lifecycle life = new Lifecycle(command, drain, quiet);
        Runtime.getRuntime().addShutdownHook(life.hook);
        return life;
    }

    /** One line on standard error: {@code kvprefix COMMAND: LINE}. */
    void log(String line) {
        err.println("kvprefix " + command + ": " + line);
    }

    /** A progress line ({@link #log}), unless the command is quiet. */
    void status(String line) {
        if (!quiet) {
            log(line);
        }
    }

    /** Whether progress lines are left out. */
    boolean quiet() {
        return quiet;
    }

    /**
     * The metrics endpoint on {@code host:port} while the command runs ({@code null} when no port is
     * given), closed with this life; its address is logged. A port that cannot be bound is a usage
     * error.
     */
    ListenMetrics metrics(String host, Integer port) {
        if (port == null) {
            return null;
        }
        metrics = ListenMetrics.start(host, port);
        log("metrics on " + metrics.url());
        return metrics;
    }

    /** The loop is over: the metrics endpoint (if any) says not ready from now on. */
    void stopping() {
        if (metrics != null) {
            metrics.stopping();
        }
    }

    /**
     * Runs until {@code runFor} is over (never when null), a signal, or {@code ended} is true (looked at
     * every 20 ms; null: only the first two). Each task runs when its interval is due, in the order given.
     */
    void runUntilStopped(Duration runFor, BooleanSupplier ended, List<Periodic> tasks) throws InterruptedException {
        long now = System.nanoTime();
        long deadline = runFor == null ? Long.MAX_VALUE : now + runFor.toNanos();
        long[] next = new long[tasks.size()];
        for (int i = 0; i < next.length; i++) {
            next[i] = now + tasks.get(i).every().toNanos();
        }
        while (true) {
            long wake = deadline;
            for (long n : next) {
                wake = Math.min(wake, n);
            }
            if (ended != null) {
                wake = Math.min(wake, System.nanoTime() + POLL_NANOS);
            }
            long left = wake - System.nanoTime();
            if (left > 0 && stop.await(left, TimeUnit.NANOSECONDS)) {
                return;
            }
            now = System.nanoTime();
            if (runFor != null && now - deadline >= 0 || ended != null && ended.getAsBoolean()) {
                return;
            }
            for (int i = 0; i < next.length; i++) {
                if (now - next[i] >= 0) {
                    tasks.get(i).action().run();
                    next[i] = now + tasks.get(i).every().toNanos();
                }
            }
        }
    }

    /**
     * The command's last lines: {@code jsonLines} on standard output (the last one its stats object),
     * flushed, then {@code summary} as a {@link #status} line.
     */
    void result(String summary, String... jsonLines) {
        PrintStream out = System.out;
        for (String line : jsonLines) {
            out.println(line);
        }
        out.flush();
        status(summary);
    }

    /** Closes the metrics endpoint and lets a waiting shutdown hook return. */
    @Override
    public void close() {
        try {
            if (metrics != null) {
                metrics.close();
            }
        } finally {
            finished.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException ignored) {
                // the JVM is shutting down (Ctrl-C): the hook is running and returns now
            }
        }
    }
}
