package io.kvprefix.zmq.testing;

import io.kvprefix.BlockHasher;
import io.kvprefix.EventStatus;
import io.kvprefix.KvEvent;
import io.kvprefix.Medium;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.zmq.SubscriberStats.EventKind;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Function;

/**
 * The truth file the Python publisher writes: every batch it published (dropped ones included), in
 * order, and queries with the depth its simulated engine cache holds. Turns batches into the
 * {@link KvEvent}s a correct subscriber applies, by the rules stated here independently of the
 * subscriber's code: events on a medium other than the GPU, and events of KV-cache group 1 (the
 * script's sliding-window group), are ignored; stores are token-form, salted by their LoRA name.
 *
 * <p>Thread-safety: immutable after {@link #read}.
 */
public final class Truth {
    /** One published batch. */
    public record Batch(String engine, long seq, OptionalInt rank, List<String[]> ops) {}

    /** One query line. */
    public record Query(
            String engine,
            int rank,
            int blockSize,
            String lora,
            int depth,
            int[] tokens,
            List<BlockHasher.MmSpan> mm) {}

    private final List<Batch> batches;
    private final List<Query> queries;

    private Truth(List<Batch> batches, List<Query> queries) {
        this.batches = List.copyOf(batches);
        this.queries = List.copyOf(queries);
    }

    /** Parses a truth file. */
    public static Truth read(Path file) throws IOException {
        List<Batch> batches = new ArrayList<>();
        List<Query> queries = new ArrayList<>();
        Batch current = null;
        for (String line : Files.readAllLines(file)) {
            if (line.isBlank()) {
                continue;
            }
            String[] f = line.split(" ");
            switch (f[0]) {
                case "B" -> {
                    current = new Batch(
                            f[1],
                            Long.parseLong(f[2]),
                            f[3].equals("-") ? OptionalInt.empty() : OptionalInt.of(Integer.parseInt(f[3])),
                            new ArrayList<>());
                    batches.add(current);
                }
                case "S", "R", "C" -> current.ops().add(f);
                case "Q" ->
                    queries.add(new Query(
                            f[1],
                            Integer.parseInt(f[2]),
                            Integer.parseInt(f[3]),
                            f[4].equals("-") ? null : f[4],
                            Integer.parseInt(f[5]),
                            tokens(f[6]),
                            spans(f[7])));
                default -> throw new IllegalArgumentException("bad truth line: " + line);
            }
        }
        return new Truth(batches, queries);
    }

    /** {@code START:END:MM_HASH,...} or {@code -}. */
    private static List<BlockHasher.MmSpan> spans(String s) {
        List<BlockHasher.MmSpan> out = new ArrayList<>();
        if (!s.equals("-")) {
            for (String item : s.split(",")) {
                String[] p = item.split(":");
                out.add(new BlockHasher.MmSpan(
                        Integer.parseInt(p[0]), Integer.parseInt(p[1]), Long.parseUnsignedLong(p[2])));
            }
        }
        return out;
    }

    /** {@code BLOCK:MM_HASH,...} or {@code -}, as per-block hashes of {@code blocks} blocks (null if none). */
    private static long[][] blockMm(String s, int blocks) {
        if (s.equals("-")) {
            return null;
        }
        long[][] out = new long[blocks][];
        for (String item : s.split(",")) {
            String[] p = item.split(":");
            int b = Integer.parseInt(p[0]);
            long[] old = out[b] == null ? new long[0] : out[b];
            out[b] = java.util.Arrays.copyOf(old, old.length + 1);
            out[b][old.length] = Long.parseUnsignedLong(p[1]);
        }
        return out;
    }

    /** Batches of {@code engine}, in sequence order. */
    public List<Batch> batches(String engine) {
        return batches.stream().filter(b -> b.engine().equals(engine)).toList();
    }

    /** Every query line. */
    public List<Query> queries() {
        return queries;
    }

    /** The events a correct subscriber applies for {@code batch}, {@code workerOf} naming its worker. */
    public static List<KvEvent> events(Batch batch, Function<OptionalInt, Worker> workerOf) {
        Worker w = workerOf.apply(batch.rank());
        List<KvEvent> out = new ArrayList<>();
        for (String[] f : batch.ops()) {
            switch (f[0]) {
                case "C" -> out.add(new KvEvent.Cleared(w));
                case "R" -> {
                    if (relevant(f[1], f[2])) {
                        out.add(new KvEvent.Removed(w, hashes(f[3]), tier(f[1])));
                    }
                }
                default -> {
                    // S parent bs lora medium group kind hashes tokens
                    if (relevant(f[4], f[5])) {
                        OptionalLong parent =
                                f[1].equals("-") ? OptionalLong.empty() : OptionalLong.of(Long.parseUnsignedLong(f[1]));
                        long[] names = hashes(f[7]);
                        out.add(new KvEvent.StoredTokens(
                                w,
                                parent,
                                tokens(f[8]),
                                Integer.parseInt(f[2]),
                                names,
                                f[3].equals("-") ? null : f[3],
                                null,
                                blockMm(f[9], names.length),
                                tier(f[4])));
                    }
                }
            }
        }
        return out;
    }

    /**
     * Feeds {@code oracle} the batches of {@code engine} as a correct subscriber applies them: all of
     * them, or, when {@code lostFrom >= 0}, those before {@code lostFrom}, then a clear of every
     * worker their batches named (each dp rank, as a resync clears them; {@code workerOf(empty)} if
     * none), then those from {@code resumeAt} on. Returns how many events of each
     * {@link EventKind} got each {@link EventStatus}, indexed by ordinal (the clear not counted).
     */
    public long[][] feed(
            PrefixIndex oracle, String engine, Function<OptionalInt, Worker> workerOf, long lostFrom, long resumeAt) {
        return feed(oracle, engine, workerOf, lostFrom < 0 ? List.of() : List.of(new long[] {lostFrom, resumeAt}));
    }

    /**
     * As {@link #feed(PrefixIndex, String, Function, long, long)} with any number of lost ranges, in
     * order: for each {@code [from, resumeAt]}, the batches from {@code from} up to {@code resumeAt}
     * are skipped and every worker fed so far (or {@code workerOf(empty)} if none) is cleared before batch
     * {@code resumeAt}.
     */
    public long[][] feed(PrefixIndex oracle, String engine, Function<OptionalInt, Worker> workerOf, List<long[]> lost) {
        long[][] counts = new long[EventKind.values().length][EventStatus.values().length];
        // a resync clears every worker the engine fed, each of its dp ranks, as the listener does
        Set<Worker> fed = new LinkedHashSet<>();
        int r = 0;
        for (Batch b : batches(engine)) {
            while (r < lost.size() && b.seq() >= lost.get(r)[1]) {
                if (fed.isEmpty()) {
                    fed.add(workerOf.apply(OptionalInt.empty()));
                }
                for (Worker w : fed) {
                    oracle.apply(new KvEvent.Cleared(w));
                }
                r++;
            }
            if (r < lost.size() && b.seq() >= lost.get(r)[0]) {
                continue;
            }
            fed.add(workerOf.apply(b.rank()));
            for (KvEvent e : events(b, workerOf)) {
                EventKind k = e instanceof KvEvent.Removed
                        ? EventKind.REMOVED
                        : e instanceof KvEvent.Cleared ? EventKind.CLEARED : EventKind.STORED;
                counts[k.ordinal()][oracle.apply(e).ordinal()]++;
            }
        }
        return counts;
    }

    /** Indexed: a medium kvprefix has a tier for (docs/SPEC.md section 3.1), and not the sliding-window group 1. */
    private static boolean relevant(String medium, String group) {
        return (medium.equals("-") || Medium.fromEngine(medium) != null) && !group.equals("1");
    }

    private static Medium tier(String medium) {
        return medium.equals("-") ? Medium.GPU : Medium.fromEngine(medium);
    }

    private static long[] hashes(String csv) {
        if (csv.equals("-")) {
            return new long[0];
        }
        String[] p = csv.split(",");
        long[] out = new long[p.length];
        for (int i = 0; i < p.length; i++) {
            out[i] = Long.parseUnsignedLong(p[i]);
        }
        return out;
    }

    private static int[] tokens(String csv) {
        if (csv.equals("-")) {
            return new int[0];
        }
        String[] p = csv.split(",");
        int[] out = new int[p.length];
        for (int i = 0; i < p.length; i++) {
            out[i] = Integer.parseInt(p[i]);
        }
        return out;
    }
}
