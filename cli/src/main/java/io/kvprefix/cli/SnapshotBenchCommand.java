package io.kvprefix.cli;

import io.kvprefix.BlockHasher;
import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.opstream.Implementations;
import io.kvprefix.opstream.Op;
import io.kvprefix.opstream.OpStreamParser;
import io.kvprefix.opstream.OpStreamWriter;
import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kvprefix snapshot-bench}: the snapshot measurement of docs/BENCHMARKS.md section 6. For a
 * state (footprint's synthetic one, or the final state of an op stream) and each implementation,
 * times rebuilding it by applying its events, saving it, and restoring it, checks that the restored
 * index answers every query like the original (a run with a differing answer fails), and prints one
 * row each; {@code --during} then measures matches and writes while snapshots are taken
 * ({@link SnapshotDuring}).
 *
 * <p>Thread-safety: a command object, used once by one thread.
 */
@Command(
        name = "snapshot-bench",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Time snapshots and restores of an index against rebuilding it from its events.",
            "Also the file sizes, and with --during the cost to matches and writes meanwhile",
            "(docs/BENCHMARKS.md section 6, docs/SNAPSHOT.md)."
        })
final class SnapshotBenchCommand implements Callable<Integer> {
    @Option(names = "--blocks", description = "distinct blocks of the synthetic state (default ${DEFAULT-VALUE})")
    int blocks = 1_000_000;

    @Option(names = "--workers", description = "workers of the synthetic state (default ${DEFAULT-VALUE})")
    int workers = 16;

    @Option(names = "--chain", description = "blocks per stored sequence (default ${DEFAULT-VALUE})")
    int chain = 64;

    @Option(
            names = "--tokens",
            description = "build the synthetic state from token-form events (16 token ids a block, as vLLM sends"
                    + " them), so that a rebuild hashes the blocks too")
    boolean tokens;

    @Option(
            names = "--ops",
            paramLabel = "FILE",
            description = "use the final state of this op stream instead (its events; its matches are the queries)")
    Path ops;

    @Option(names = "--impl", split = ",", paramLabel = "NAMES", description = "implementations (default offheap,heap)")
    List<String> impls = List.of("offheap", "heap");

    @Option(names = "--repeat", description = "timed repetitions of each step (default ${DEFAULT-VALUE})")
    int repeat = 5;

    @Option(
            names = "--dir",
            paramLabel = "DIR",
            description = "where the snapshot file goes (default: the current directory)")
    Path dir = Path.of(".");

    @Option(names = "--during", description = "also measure matches and writes while snapshots are taken")
    boolean during;

    @Option(
            names = "--write-ops",
            paramLabel = "FILE",
            description = "also write the state's events as an op stream (docs/SPEC.md section 5), to time"
                    + " kvprefix replay on it")
    Path writeOps;

    /** A state to measure: the events that build it, and queries to check a restore with. */
    record State(String description, List<KvEvent> events, List<long[]> queries) {}

    @Override
    public Integer call() throws IOException {
        Check.atLeast("--repeat", repeat, 1);
        Check.atLeast("--blocks", blocks, 1);
        Check.atLeast("--workers", workers, 1);
        Check.inRange("--chain", chain, 1, 4096);
        Check.implementations("--impl", impls);
        Check.outputDir("--dir", dir);
        if (ops != null) {
            Check.opStream("--ops", ops);
        }
        if (writeOps != null) {
            Check.outputFile("--write-ops", writeOps);
        }
        checkMemory(); // before anything is written
        Files.createDirectories(dir);
        State state = ops != null ? fromOps(ops) : synthetic();
        if (writeOps != null) {
            try (OutputStream os = new BufferedOutputStream(Files.newOutputStream(writeOps), 1 << 20)) {
                OpStreamWriter w = new OpStreamWriter(os);
                for (KvEvent e : state.events()) {
                    w.event(e);
                }
                w.flush();
            }
        }
        IndexConfig config = IndexConfig.builder().maxWorkers(1024).build();
        Path file = dir.resolve("kvprefix-snapshot-bench.snap");
        System.out.printf(
                Locale.ROOT,
                "# %s: %,d events, %,d queries%n",
                state.description(),
                state.events().size(),
                state.queries().size());
        System.out.println(
                "impl\tpairs\trebuild_ms\tsnapshot_ms\tfile_bytes\trestore_first_ms\trestore_ms\trebuild/restore");
        for (String impl : impls) {
            if (!measure(impl, config, state, file)) {
                return 1;
            }
        }
        if (during) {
            for (String impl : impls) {
                new SnapshotDuring(impl, config, state, file).run(System.out);
            }
        }
        Files.deleteIfExists(file);
        return 0;
    }

    /**
     * Refuses at start a run that cannot fit (issue 31 item 6; before, it ran out of memory after
     * about 22 s): the state's events on the heap, and per implementation two indexes at once (the
     * original and a restored one), on the heap or native by the implementation (docs/OPERATING.md
     * section 7).
     */
    private void checkMemory() throws IOException {
        double pairs;
        double stateHeap;
        String what;
        if (ops != null) {
            double bytes = Files.size(ops);
            pairs = bytes / OPS_BYTES_PER_BLOCK; // each stored block takes at least that much of the file
            stateHeap = bytes * Memory.HEAP_BYTES_PER_OPS_BYTE;
            what = "--ops " + ops;
        } else {
            pairs = blocks;
            double sequences = Math.ceil((double) blocks / chain);
            stateHeap = blocks * (tokens ? STATE_BYTES_PER_TOKEN_BLOCK : STATE_BYTES_PER_BLOCK)
                    + sequences * STATE_BYTES_PER_EVENT;
            what = "--blocks " + blocks + (tokens ? " --tokens" : "");
        }
        for (String impl : impls) {
            boolean heap = impl.equals("heap");
            Memory.check(
                    what + " (--impl " + impl + ")",
                    stateHeap + (heap ? 2 * pairs * Memory.HEAP_INDEX_BYTES_PER_PAIR : 0),
                    heap ? 0 : 2 * pairs * Memory.OFF_HEAP_BYTES_PER_PAIR);
        }
    }

    /** Heap per block of the synthetic state: its engine key and local hash. */
    private static final double STATE_BYTES_PER_BLOCK = 2 * Long.BYTES;
    /** With {@code --tokens}: also its 16 token ids and the local hash computed from them. */
    private static final double STATE_BYTES_PER_TOKEN_BLOCK = 3 * Long.BYTES + 16 * Integer.BYTES;
    /** Heap per stored sequence: the event and its arrays' headers, a share of the queries. */
    private static final double STATE_BYTES_PER_EVENT = 160;
    /** The fewest op-stream bytes a stored block takes ({@code {"block_hash":1,"tokens_hash":1},}). */
    private static final double OPS_BYTES_PER_BLOCK = 32;

    /** One row; false (after a message) if the restored index answered differently. */
    private boolean measure(String impl, IndexConfig config, State state, Path file) {
        double[] rebuild = new double[repeat];
        PrefixIndex original = null;
        for (int i = 0; i < repeat; i++) {
            if (original != null) {
                original.close();
            }
            original = Implementations.create(impl, config);
            long t0 = System.nanoTime();
            for (KvEvent e : state.events()) {
                original.apply(e);
            }
            rebuild[i] = (System.nanoTime() - t0) / 1e6;
        }
        double[] save = new double[repeat];
        double[] restore = new double[repeat];
        String expected = fingerprint(original, state);
        long pairs = original.stats().blocks();
        try {
            for (int i = 0; i < repeat; i++) {
                long t0 = System.nanoTime();
                original.snapshot(file);
                save[i] = (System.nanoTime() - t0) / 1e6;
            }
            for (int i = 0; i < repeat; i++) {
                long t0 = System.nanoTime();
                try (PrefixIndex restored = Implementations.restore(impl, file, config)) {
                    restore[i] = (System.nanoTime() - t0) / 1e6;
                    if (i == 0 && !expected.equals(fingerprint(restored, state))) {
                        System.err.println(
                                "kvprefix snapshot-bench: " + impl + ": the restored index answers differently");
                        return false;
                    }
                }
            }
            System.out.printf(
                    Locale.ROOT,
                    "%s\t%d\t%.1f\t%.1f\t%d\t%.1f\t%.1f\t%.0fx%n",
                    impl,
                    pairs,
                    median(rebuild),
                    median(save),
                    Files.size(file),
                    restore[0],
                    median(restore),
                    median(rebuild) / median(restore));
            return true;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } finally {
            original.close();
        }
    }

    static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    /** Every query's answer, every worker's block count and the event counters, as one string. */
    static String fingerprint(PrefixIndex index, State state) {
        StringBuilder sb = new StringBuilder();
        MatchResult m = new MatchResult();
        for (long[] q : state.queries()) {
            index.match(q, 0, q.length, m);
            m.sortByWorker();
            sb.append(m.scores()).append('\n');
        }
        for (Worker w : index.workers()) {
            sb.append(w).append('=').append(index.blockCount(w)).append(' ');
        }
        for (EventStatus s : EventStatus.values()) {
            sb.append(s.wireName()).append('=').append(index.eventCount(s)).append(' ');
        }
        return sb.toString();
    }

    /**
     * Footprint's synthetic state (the same seed and shape as {@code kvprefix footprint}); with
     * {@code --tokens}, each block is 16 random token ids instead of a local hash.
     */
    private State synthetic() {
        SplittableRandom r = new SplittableRandom(3);
        List<KvEvent> events = new ArrayList<>();
        List<long[]> queries = new ArrayList<>();
        BlockHasher hasher = IndexConfig.defaults().hasher();
        long e = 1;
        int sequences = (blocks + chain - 1) / chain;
        for (int s = 0; s < sequences; s++) {
            int n = Math.min(chain, blocks - s * chain);
            long[] hashes = new long[n];
            long[] locals = new long[n];
            int[] ids = tokens ? new int[n * hasher.blockSize()] : null;
            for (int i = 0; i < n; i++) {
                if (tokens) {
                    for (int t = 0; t < hasher.blockSize(); t++) {
                        ids[i * hasher.blockSize() + t] = r.nextInt();
                    }
                } else {
                    locals[i] = r.nextLong();
                }
                hashes[i] = e++;
            }
            if (tokens) {
                events.add(new KvEvent.StoredTokens(
                        Worker.of(s % workers), OptionalLong.empty(), ids, hasher.blockSize(), hashes, null, null));
                locals = hasher.localHashes(ids);
            } else {
                events.add(KvEvent.Stored.root(Worker.of(s % workers), hashes, locals));
            }
            if (s % 64 == 0) {
                queries.add(locals);
            }
        }
        return new State(
                String.format(
                        Locale.ROOT,
                        "%,d blocks over %d workers in sequences of %d (footprint's state%s)",
                        blocks,
                        workers,
                        chain,
                        tokens ? ", token-form events" : ""),
                events,
                queries);
    }

    /** The events of an op stream, in order, and its hash-form matches as queries. */
    private static State fromOps(Path file) throws IOException {
        OpStreamParser parser = new OpStreamParser();
        List<KvEvent> events = new ArrayList<>();
        List<long[]> queries = new ArrayList<>();
        try (BufferedReader br = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            for (String line; (line = br.readLine()) != null; ) {
                switch (parser.parse(line.getBytes(StandardCharsets.UTF_8))) {
                    case Op.Event ev -> events.add(ev.event());
                    case Op.HashMatch h -> queries.add(h.localHashes());
                    default -> {}
                }
            }
        }
        return new State("the final state of " + file, events, queries);
    }
}
