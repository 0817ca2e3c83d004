package io.kvprefix.cli;

import io.kvprefix.opstream.OpStreamWriter;
import io.kvprefix.workload.DynamoEngineHashes;
import io.kvprefix.workload.LocalHashTable;
import io.kvprefix.workload.Trace;
import io.kvprefix.workload.Workload;
import io.kvprefix.workload.WorkloadTotals;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code kvprefix gen-ops}: turns a Mooncake trace (or the built-in workload) into an op stream
 * (docs/SPEC.md section 5) by replaying it against one {@link MockEngine} per worker; see {@link Workload}
 * for the simulation and {@link Workload#writeStep} for the lines. For each request in arrival order:
 * its {@code match} line, then its worker's {@code removed} event (evictions), then its {@code stored}
 * event. The same options give the same bytes. A one-line summary goes to standard error.
 *
 * <p>Thread-safety: a command object, used once by one thread.
 */
@Command(
        name = "gen-ops",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Generate an op stream (docs/SPEC.md section 5) from a trace replayed against mock engines.",
            "For each request of a Mooncake trace: its match line, then the removed (evicted) and stored events of"
                    + " the worker it went to. Without --trace, a built-in seeded workload (shared system prompts,"
                    + " multi-turn chats, long-tailed lengths).",
            "The same options give the same bytes. A summary line goes to standard error."
        })
final class GenOpsCommand implements Callable<Integer> {
    @Mixin
    WorkloadOptions workload = new WorkloadOptions();

    @Option(
            names = "--out",
            paramLabel = "FILE|-",
            defaultValue = "-",
            description = "where to write the stream (default: - = standard output)")
    String out;

    @Option(
            names = "--token-form",
            description = "write matches and stored events with token_ids instead of hashes (large lines)")
    boolean tokenForm;

    @Option(
            names = "--engine-hashes",
            paramLabel = "mock|dynamo",
            defaultValue = "mock",
            description =
                    "the stored blocks' engine hashes: the mock engines' own (mock, the default), or the chain hashes"
                            + " Dynamo's engines send (dynamo: what Dynamo's positional indexer, and a yardstick built after it,"
                            + " need to match anything); kvprefix answers the same either way")
    String engineHashes;

    private static final long PROGRESS_AFTER_NS = 3_000_000_000L;
    private static final long PROGRESS_EVERY_NS = 2_000_000_000L;

    @Override
    public Integer call() throws IOException {
        long t0 = System.nanoTime();
        PrintStream err = System.err;
        if (!engineHashes.equals("mock") && !engineHashes.equals("dynamo")) {
            throw new IllegalArgumentException("--engine-hashes must be mock or dynamo, got " + engineHashes);
        }
        workload.check(Memory.HEAP_BYTES_PER_BLOCK_STREAMED);
        boolean toStdout = "-".equals(out);
        if (!toStdout) {
            Check.outputFile("--out", Check.path("--out", out));
        }
        DynamoEngineHashes names = engineHashes.equals("dynamo") ? new DynamoEngineHashes() : null;
        Workload.Options options = workload.engines();
        Trace t = workload.load(Memory.HEAP_BYTES_PER_BLOCK_STREAMED);
        double bound = t.prefixHitBound();
        LocalHashTable hashes = LocalHashTable.forTrace(t);

        WorkloadTotals totals = new WorkloadTotals();
        int total = t.size();
        long[] nextReport = {t0 + PROGRESS_AFTER_NS};
        OutputStream os = toStdout ? System.out : new BufferedOutputStream(openOut(Path.of(out)), 1 << 16);
        try {
            OpStreamWriter w = new OpStreamWriter(os);
            Workload.simulate(t, hashes, options, step -> {
                Workload.writeStep(step, t.tokensPerBlock(), w, tokenForm, names);
                totals.add(step);
                long now = System.nanoTime();
                if (now >= nextReport[0]) {
                    err.printf(
                            Locale.ROOT,
                            "gen-ops: %d/%d requests (%.0f%%)%n",
                            totals.requests(),
                            total,
                            100.0 * totals.requests() / total);
                    nextReport[0] = now + PROGRESS_EVERY_NS;
                }
            });
            w.flush();
        } catch (IOException e) {
            throw new IOException("cannot write " + (toStdout ? "standard output" : out) + ": " + e.getMessage(), e);
        } finally {
            if (!toStdout) {
                os.close(); // never close standard output
            }
        }
        if (toStdout && System.out.checkError()) {
            throw new IOException("cannot write standard output");
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        err.printf(
                Locale.ROOT,
                "gen-ops: %s, %d workers x %d blocks: %s; infinite-cache prefix-hit bound %.2f%% (%.2f s)%n",
                t.source(),
                workload.workers(),
                workload.cacheBlocks(),
                totals,
                100.0 * bound,
                seconds);
        return 0;
    }

    private static OutputStream openOut(Path p) throws IOException {
        try {
            return Files.newOutputStream(p);
        } catch (IOException e) {
            throw new IOException("cannot write " + p + ": " + reason(e), e);
        }
    }

    private static String reason(IOException e) {
        if (e instanceof java.nio.file.NoSuchFileException) {
            return "no such directory";
        }
        if (e instanceof java.nio.file.AccessDeniedException) {
            return "permission denied";
        }
        return e.getMessage();
    }
}
