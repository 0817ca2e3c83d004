package io.kvprefix.cli;

import io.kvprefix.IndexConfig;
import io.kvprefix.IndexStats;
import io.kvprefix.PrefixIndex;
import io.kvprefix.SnapshotException;
import io.kvprefix.opstream.Implementations;
import io.kvprefix.opstream.Replayer;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code kvprefix replay}: applies an op stream (docs/SPEC.md section 5) to an index and prints one
 * result line per input line on standard output; notes and a summary go to standard error.
 *
 * <p>{@code --restore FILE} starts from a snapshot instead of an empty index, and {@code --save FILE}
 * saves one after the last line (docs/SNAPSHOT.md): the answers are those of replaying the
 * snapshot's history first.
 *
 * <p>Exit status: 0 whatever the statuses were; 2 for a usage error (unknown {@code --impl}, a bad
 * option value, an input that cannot be opened, a {@code --restore} file that cannot be restored);
 * 1 if reading the input fails on the way, standard output cannot be written, or the {@code --save}
 * file cannot be written.
 *
 * <p>Thread-safety: a command object, used once by one thread.
 */
@Command(
        name = "replay",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Replay an op stream (one JSON object per line, docs/SPEC.md section 5) through the index.",
            "Prints one line per input line: {\"status\":...} for an event, {\"scores\":[[W,R,depth],...]} for a match,",
            "{\"explain\":{...}} for an explain (why each worker's match stopped: docs/SPEC.md section 4.1).",
            "Invalid lines are answered {\"status\":\"invalid_input\"} and processing continues."
        })
final class ReplayCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "IN.jsonl|-", description = "the op stream; '-' reads standard input")
    String input;

    @Mixin
    IndexOptions indexOptions = new IndexOptions();

    @Option(
            names = "--memory-budget",
            paramLabel = "BYTES",
            description = "most memory the index may hold, e.g. 512m or 2g (default: unlimited)")
    String memoryBudget;

    @Option(
            names = "--jump-size",
            paramLabel = "J",
            description = "positions per jump-search step (default: the index's)")
    Integer jumpSize;

    @Option(
            names = "--block-size",
            paramLabel = "B",
            description = "the index's default block size (token-form lines carry their own; default: the index's)")
    Integer blockSize;

    @Option(
            names = "--max-line-bytes",
            paramLabel = "N",
            defaultValue = "" + Replayer.DEFAULT_MAX_LINE_BYTES,
            description = "longer lines are answered invalid_input without being buffered (default: ${DEFAULT-VALUE})")
    int maxLineBytes;

    @Option(
            names = "--restore",
            paramLabel = "FILE",
            description = "start from this snapshot (docs/SNAPSHOT.md) instead of an empty index; a file that cannot"
                    + " be restored is a usage error (exit status 2)")
    Path restore;

    @Option(
            names = "--save",
            paramLabel = "FILE",
            description = "after the last line, save the index to this snapshot (written to FILE.tmp, renamed)")
    Path save;

    @Option(
            names = {"-q", "--quiet"},
            description = "print nothing on standard error unless the run fails")
    boolean quiet;

    @Override
    public Integer call() {
        IndexConfig config = config();
        String impl = indexOptions.impl;
        Replayer replayer;
        PrintStream err = System.err;
        InputStream in;
        boolean stdin = "-".equals(input);
        if (stdin) {
            in = System.in;
        } else {
            try {
                in = open(Path.of(input));
            } catch (IOException | InvalidPathException e) {
                throw new IllegalArgumentException("cannot read '" + input + "': " + reason(e), e);
            }
        }
        String name = stdin ? "standard input" : "'" + input + "'";
        long t0 = System.nanoTime();
        PrefixIndex restored = null;
        if (restore != null) {
            try {
                restored = Implementations.restore(impl, restore, config);
            } catch (SnapshotException e) {
                err.println("kvprefix replay: " + e.getMessage());
                close(in, stdin);
                return 2;
            }
            note(
                    err,
                    String.format(
                            Locale.ROOT,
                            "restored %s: %d workers, %d blocks held (%.1f ms)",
                            restore,
                            restored.workers().size(),
                            restored.stats().blocks(),
                            (System.nanoTime() - t0) / 1e6));
        }
        try (PrefixIndex index = restored != null ? restored : Implementations.create(impl, config)) {
            replayer = new Replayer(index).maxLineBytes(maxLineBytes);
            long[] firstRefusal = {-1, 0}; // line, bytes in use then
            if (!quiet) {
                replayer.log(note -> err.println("kvprefix replay: " + note));
                if (config.memoryBudgetBytes() != IndexConfig.UNLIMITED) {
                    replayer.onFirstCapacityExceeded(line -> {
                        firstRefusal[0] = line;
                        firstRefusal[1] = index.stats().bytesUsed();
                    });
                }
            }
            Replayer.Summary summary = replayer.run(in, new StdoutStream(System.out));
            if (!quiet) {
                long hidden = summary.count(io.kvprefix.EventStatus.INVALID_INPUT) - Replayer.INVALID_NOTES;
                err.printf(
                        "kvprefix replay: %s (%s, %.2f s)%s%n",
                        summary,
                        impl,
                        (System.nanoTime() - t0) / 1e9,
                        hidden > 0 ? "; " + hidden + " more invalid lines not described" : "");
                if (config.memoryBudgetBytes() != IndexConfig.UNLIMITED) {
                    err.println("kvprefix replay: " + budgetNote(index, config.memoryBudgetBytes(), firstRefusal));
                }
            }
            return save(index, err);
        } catch (StdoutFailure e) {
            err.println("kvprefix replay: cannot write standard output (" + e.getMessage() + "); stopped");
            return 1;
        } catch (IOException e) {
            err.println("kvprefix replay: error reading " + name + ": " + reason(e));
            return 1;
        } finally {
            close(in, stdin);
        }
    }

    /** Saves the snapshot of {@code --save}, if given: 0, or 1 if it cannot be written. */
    private int save(PrefixIndex index, PrintStream err) {
        if (save == null) {
            return 0;
        }
        long t0 = System.nanoTime();
        try {
            index.snapshot(save);
        } catch (SnapshotException e) {
            err.println("kvprefix replay: " + e.getMessage());
            return 1;
        }
        long bytes;
        try {
            bytes = Files.size(save);
        } catch (IOException e) {
            bytes = -1;
        }
        note(
                err,
                String.format(
                        Locale.ROOT, "saved %s: %d bytes (%.1f ms)", save, bytes, (System.nanoTime() - t0) / 1e6));
        return 0;
    }

    private void note(PrintStream err, String text) {
        if (!quiet) {
            err.println("kvprefix replay: " + text);
        }
    }

    private static void close(InputStream in, boolean stdin) {
        if (!stdin) {
            try {
                in.close();
            } catch (IOException ignored) {
                // nothing left to do with it
            }
        }
    }

    /** {@code memory: 31.9 of 32.0 MiB in use, 1179879 blocks held; first capacity_exceeded at line 5123, with 31.1 MiB (97%)}. */
    private static String budgetNote(PrefixIndex index, long budget, long[] firstRefusal) {
        IndexStats st = index.stats();
        String s = String.format(
                "memory: %.1f of %.1f MiB in use, %d blocks held",
                st.bytesUsed() / 1048576.0, budget / 1048576.0, st.blocks());
        return s
                + (firstRefusal[0] < 0
                        ? "; nothing refused for memory"
                        : String.format(
                                "; first capacity_exceeded at line %d, with %.1f MiB (%.0f%% of the budget)",
                                firstRefusal[0], firstRefusal[1] / 1048576.0, 100.0 * firstRefusal[1] / budget));
    }

    private IndexConfig config() {
        IndexConfig.Builder b = indexOptions.config();
        if (memoryBudget != null) {
            long bytes = Check.parseBytes(memoryBudget, "--memory-budget");
            option("--memory-budget", () -> b.memoryBudgetBytes(bytes));
        }
        if (jumpSize != null) {
            option("--jump-size", () -> b.jumpSize(jumpSize));
        }
        if (blockSize != null) {
            option("--block-size", () -> b.blockSize(blockSize));
        }
        if (maxLineBytes < 1 || maxLineBytes > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException(
                    "--max-line-bytes must be in 1.." + (Integer.MAX_VALUE - 16) + ", got " + maxLineBytes);
        }
        return b.build();
    }

    /** Runs a builder setter, prefixing its complaint with the option's name. */
    private static void option(String name, Runnable set) {
        try {
            set.run();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(name + ": " + e.getMessage(), e);
        }
    }

    private static InputStream open(Path p) throws IOException {
        if (Files.isDirectory(p)) {
            throw new IOException("it is a directory");
        }
        return Files.newInputStream(p);
    }

    private static String reason(Exception e) {
        if (e instanceof NoSuchFileException) {
            return "no such file";
        }
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        return e.getMessage() == null ? e.toString() : e.getMessage();
    }

    /** Thrown when standard output fails (closed pipe, full disk): distinguishes it from a read error. */
    private static final class StdoutFailure extends IOException {
        private static final long serialVersionUID = 1L;

        StdoutFailure(String message) {
            super(message);
        }
    }

    /** Passes bytes to a PrintStream and turns its swallowed errors into {@link StdoutFailure}. */
    private static final class StdoutStream extends FilterOutputStream {
        private final PrintStream ps;

        StdoutStream(PrintStream ps) {
            super(ps);
            this.ps = ps;
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            ps.write(b, off, len);
            check();
        }

        @Override
        public void flush() throws IOException {
            check(); // checkError() flushes
        }

        private void check() throws StdoutFailure {
            if (ps.checkError()) {
                throw new StdoutFailure("the stream is closed or failing");
            }
        }
    }
}
