package io.kvprefix.cli;

import io.kvprefix.IndexConfig;
import io.kvprefix.KvEvent;
import io.kvprefix.Medium;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.opstream.Implementations;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kvprefix footprint}: the memory measurement of docs/BENCHMARKS.md section 2. Builds each index with
 * {@code --blocks} distinct blocks spread over {@code --workers} workers (each block held by
 * {@code --sharing} workers) and prints the bytes per stored (worker, block) pair: off-heap bytes
 * from the index's own accounting plus the heap it grew by, and for the heap index the heap it
 * grew by, measured after full garbage collections.
 *
 * <p>Thread-safety: a command object, used once by one thread.
 */
@Command(
        name = "footprint",
        mixinStandardHelpOptions = true,
        description = "Memory per stored (worker, block) pair, heap vs off-heap (docs/BENCHMARKS.md section 2).")
final class FootprintCommand implements Callable<Integer> {
    @Option(names = "--blocks", description = "distinct blocks (default ${DEFAULT-VALUE})")
    int blocks = 1_000_000;

    @Option(names = "--workers", description = "workers (default ${DEFAULT-VALUE})")
    int workers = 16;

    @Option(names = "--sharing", description = "workers holding each block (default ${DEFAULT-VALUE})")
    int sharing = 1;

    @Option(names = "--impl", split = ",", description = "implementations (default heap,offheap-java)")
    String[] impls = {"heap", "offheap-java"};

    @Option(names = "--chain", description = "blocks per stored sequence (default ${DEFAULT-VALUE})")
    int chain = 64;

    @Option(
            names = "--cpu-tier",
            description = "also copy every stored block to the CPU tier (docs/SPEC.md section 3.1), and report"
                    + " what the tier bookkeeping costs per pair")
    boolean cpuTier;

    @Option(
            names = "--ops",
            paramLabel = "FILE",
            description = "measure the final state of this op stream (docs/SPEC.md section 5) instead: its events are"
                    + " applied in order, its matches skipped")
    java.nio.file.Path ops;

    @Override
    public Integer call() throws java.io.IOException {
        check();
        List<String> rows = new ArrayList<>();
        for (String impl : impls) {
            long heapBefore = usedHeapAfterGc();
            PrefixIndex index = Implementations.create(
                    impl,
                    IndexConfig.builder()
                            .maxWorkers(ops != null ? IndexConfig.MAX_WORKER_SLOTS : Math.max(64, workers))
                            .build());
            if (ops != null) {
                applyEvents(index, ops);
            } else {
                List<long[]>[] names = build(index);
                if (cpuTier) {
                    for (int w = 0; w < workers; w++) {
                        for (long[] n : names[w]) {
                            index.apply(new KvEvent.Copied(Worker.of(w), n, Medium.CPU));
                        }
                    }
                }
                names = null; // not part of the index: let the collection below free it
            }
            long heapAfter = usedHeapAfterGc();
            long pairs = index.stats().blocks();
            long offHeap = index.stats().nativeBytes(); // the heap side is measured below, after collections
            long heap = Math.max(0, heapAfter - heapBefore);
            index.close();
            if (pairs == 0) { // only an op stream can leave nothing stored
                throw new IllegalArgumentException(
                        "--ops '" + ops + "': its events leave no stored block to measure (it has no stored event, or"
                                + " every block stored is removed again)");
            }
            rows.add(String.format(
                    Locale.ROOT,
                    "%s\t%d\t%d\t%d\t%.1f",
                    impl,
                    pairs,
                    offHeap,
                    heap,
                    (offHeap + heap) / (double) pairs));
        }
        if (ops != null) {
            System.out.printf(Locale.ROOT, "# the final state of %s (events applied, matches skipped)%n", ops);
        } else {
            System.out.printf(
                    Locale.ROOT,
                    "# %,d blocks, %d workers, each block held by %d worker(s), sequences of %d blocks%s%n",
                    blocks,
                    workers,
                    sharing,
                    chain,
                    cpuTier ? ", every block also on the CPU tier" : "");
        }
        System.out.println("impl\tpairs\toff_heap_bytes\theap_bytes\tbytes_per_pair");
        rows.forEach(System.out::println);
        return 0;
    }

    /** Refuses, before anything is printed, what cannot be built: the sizes, the names, the file, the memory. */
    private void check() throws java.io.IOException {
        Check.implementations("--impl", List.of(impls));
        if (ops != null) {
            Check.opStream("--ops", ops);
            return;
        }
        Check.atLeast("--blocks", blocks, 1);
        Check.inRange("--workers", workers, 1, IndexConfig.MAX_WORKER_SLOTS);
        Check.inRange("--sharing", sharing, 1, workers);
        Check.atLeast("--chain", chain, 1);
        // One index at a time is held: each must fit on its own. With --cpu-tier every pair is held twice
        // (once per tier), and the name lists of the copies are kept on the heap while they are applied.
        double pairs = (double) blocks * sharing * (cpuTier ? 2 : 1);
        double names = cpuTier ? (double) blocks * sharing * Long.BYTES * 2 : 0;
        String what =
                "--blocks " + blocks + (sharing > 1 ? " --sharing " + sharing : "") + (cpuTier ? " --cpu-tier" : "");
        for (String impl : impls) {
            boolean heap = impl.equals("heap");
            Memory.check(
                    what + " (--impl " + impl + ")",
                    names + (heap ? pairs * Memory.HEAP_INDEX_BYTES_PER_PAIR : 0),
                    heap ? 0 : pairs * Memory.OFF_HEAP_BYTES_PER_PAIR);
        }
    }

    /** Builds the index; returns each worker's stored name lists. */
    private List<long[]>[] build(PrefixIndex index) {
        @SuppressWarnings({"unchecked", "rawtypes"}) // an array of a generic type, each element set below
        List<long[]>[] names = new List[workers];
        for (int w = 0; w < workers; w++) {
            names[w] = new ArrayList<>();
        }
        SplittableRandom r = new SplittableRandom(3);
        long e = 1;
        int sequences = (blocks + chain - 1) / chain;
        for (int s = 0; s < sequences; s++) {
            int n = Math.min(chain, blocks - s * chain);
            long[] locals = new long[n];
            for (int i = 0; i < n; i++) {
                locals[i] = r.nextLong();
            }
            for (int k = 0; k < sharing; k++) {
                long[] hashes = new long[n];
                for (int i = 0; i < n; i++) {
                    hashes[i] = e++;
                }
                index.apply(KvEvent.Stored.root(Worker.of((s + k) % workers), hashes, locals));
                if (cpuTier) {
                    names[(s + k) % workers].add(hashes);
                }
            }
        }
        return names;
    }

    /** Applies every event of the op stream {@code file} in order, streaming it (nothing is kept but the index). */
    private static void applyEvents(PrefixIndex index, java.nio.file.Path file) throws java.io.IOException {
        try (var in = java.nio.file.Files.newInputStream(file)) {
            io.kvprefix.opstream.OpStreamReader reader = new io.kvprefix.opstream.OpStreamReader(in);
            for (io.kvprefix.opstream.Op op; (op = reader.next()) != null; ) {
                if (op instanceof io.kvprefix.opstream.Op.Event e) {
                    index.apply(e.event());
                }
            }
        }
    }

    private static long usedHeapAfterGc() {
        var mem = ManagementFactory.getMemoryMXBean();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 4; i++) {
            System.gc();
            try {
                Thread.sleep(50);
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            used = Math.min(used, mem.getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}
