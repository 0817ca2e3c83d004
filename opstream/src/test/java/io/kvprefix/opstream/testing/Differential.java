package io.kvprefix.opstream.testing;

import io.kvprefix.BlockHasher;
import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.IndexStats;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import io.kvprefix.opstream.Op;
import io.kvprefix.opstream.OpStreamWriter;
import io.kvprefix.testing.OracleIndex;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * Applies one op stream to an {@link OracleIndex} (the reference) and to every candidate
 * implementation, and compares them op by op: the status of every event, the sorted
 * {@code (worker, depth)} list of every match, and every {@link #checkEvery} ops and at the end the
 * bookkeeping ({@code workers()}, {@code blockCount} of every worker any of them knows,
 * {@code eventCount} per status, and the comparable parts of {@code stats()}). Malformed ops are
 * skipped (parsing is the op-stream reader's business). An exception thrown by an implementation is
 * an answer like any other, and differs from the oracle's.
 *
 * <p>On the first mismatch it throws an {@link AssertionError} naming the label and seed, the op
 * index, the op (also as a JSON line), every implementation's answer, and the shortest failing prefix
 * of the stream (the ops up to the mismatch), plus a reduced stream: ops removed greedily while some
 * mismatch remains (within a time budget). Both are written as JSON lines ({@link OpStreamWriter#line})
 * under {@code target/differential-failures/} (or {@code -Dkvprefix.differential.dir}), each next to a
 * {@code .expected} file holding the oracle's output lines, so {@code kvprefix replay} can replay them.
 *
 * <p>Thread-safety: not thread-safe; one run at a time per instance (indexes are created per run).
 */
public final class Differential {

    /**
     * An implementation under test. Immutable.
     *
     * @param name a short name for reports, such as {@code heap}
     * @param factory builds a fresh, empty index for a configuration
     */
    public record Candidate(String name, Function<IndexConfig, PrefixIndex> factory) {
        public Candidate {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(factory, "factory");
        }
    }

    /**
     * What one agreeing run saw, from the oracle's answers: to check that streams cover the hard cases.
     * Immutable once built.
     *
     * @param ops ops in the stream
     * @param events events applied
     * @param statuses events per status
     * @param matches matches run
     * @param nonEmptyMatches matches some worker had a prefix for
     * @param maxDepth deepest depth answered
     * @param maxMatchWorkers most workers in one answer
     * @param maxKnownWorkers most workers known at a checkpoint
     * @param malformed malformed ops skipped
     */
    public record Summary(
            int ops,
            int events,
            Map<EventStatus, Integer> statuses,
            int matches,
            int nonEmptyMatches,
            int maxDepth,
            int maxMatchWorkers,
            int maxKnownWorkers,
            int malformed) {

        /** The sum of two summaries (maxima for the maxima). */
        public Summary plus(Summary o) {
            Map<EventStatus, Integer> s = new EnumMap<>(EventStatus.class);
            statuses.forEach((k, v) -> s.merge(k, v, Integer::sum));
            o.statuses.forEach((k, v) -> s.merge(k, v, Integer::sum));
            return new Summary(
                    ops + o.ops,
                    events + o.events,
                    s,
                    matches + o.matches,
                    nonEmptyMatches + o.nonEmptyMatches,
                    Math.max(maxDepth, o.maxDepth),
                    Math.max(maxMatchWorkers, o.maxMatchWorkers),
                    Math.max(maxKnownWorkers, o.maxKnownWorkers),
                    malformed + o.malformed);
        }

        /** An empty summary, to start a sum. */
        public static Summary empty() {
            return new Summary(0, 0, new EnumMap<>(EventStatus.class), 0, 0, 0, 0, 0, 0);
        }

        /** Events with {@code status}. */
        public int count(EventStatus status) {
            return statuses.getOrDefault(status, 0);
        }
    }

    private static final String ORACLE = "oracle";

    private final IndexConfig config;
    private final List<Candidate> candidates = new ArrayList<>();
    private int checkEvery = 64;
    private Duration reduceBudget = Duration.ofSeconds(20);
    private Path reportDir = Path.of(System.getProperty("kvprefix.differential.dir", "target/differential-failures"));

    private Differential(IndexConfig config, List<Candidate> others) {
        this.config = Objects.requireNonNull(config, "config");
        candidates.add(new Candidate(ORACLE, OracleIndex::new));
        candidates.addAll(others);
    }

    /** Compares {@code others} with the oracle, every index built with {@code config}. */
    public static Differential against(IndexConfig config, Candidate... others) {
        return new Differential(config, List.of(others));
    }

    /** Compare the bookkeeping every {@code n} ops (and always at the end); default 64. */
    public Differential checkEvery(int n) {
        checkEvery = Math.max(1, n);
        return this;
    }

    /** Time spent reducing a failing stream before reporting it (default 20 s). */
    public Differential reduceBudget(Duration d) {
        reduceBudget = d;
        return this;
    }

    /** Where failing streams are written. */
    public Differential reportDir(Path dir) {
        reportDir = dir;
        return this;
    }

    /**
     * Runs {@code ops} on fresh indexes and compares them.
     *
     * @param label what this stream is (configuration, options, how to replay), for the report
     * @param seed the seed the stream was generated from, for the report
     * @return what the stream exercised
     * @throws AssertionError on the first mismatch (see the class comment)
     */
    public Summary run(String label, long seed, List<Op> ops) {
        SummaryBuilder summary = new SummaryBuilder();
        Mismatch m = firstMismatch(ops, summary);
        if (m == null) {
            return summary.build(ops.size());
        }
        throw report(label, seed, ops, m);
    }

    // ------------------------------------------------------------------ running

    /** Where and how the implementations disagreed. */
    private record Mismatch(int opIndex, String what, Map<String, String> answers) {}

    private Mismatch firstMismatch(List<Op> ops, SummaryBuilder summary) {
        List<PrefixIndex> indexes = new ArrayList<>();
        try {
            for (Candidate c : candidates) {
                indexes.add(c.factory().apply(config));
            }
            List<MatchResult> results = new ArrayList<>();
            List<Map<String, BlockHasher>> hashers = new ArrayList<>();
            for (int i = 0; i < indexes.size(); i++) {
                results.add(new MatchResult(1));
                hashers.add(new HashMap<>());
            }
            int sinceCheck = 0;
            for (int opIndex = 0; opIndex < ops.size(); opIndex++) {
                Op op = ops.get(opIndex);
                if (op instanceof Op.Invalid) {
                    if (summary != null) {
                        summary.malformed++;
                    }
                    continue;
                }
                Map<String, String> answers = new LinkedHashMap<>();
                for (int i = 0; i < indexes.size(); i++) {
                    answers.put(candidates.get(i).name(), answer(indexes.get(i), op, results.get(i), hashers.get(i)));
                }
                if (summary != null) {
                    summary.record(op, answers.get(ORACLE), results.get(0));
                }
                if (!allEqual(answers)) {
                    return new Mismatch(opIndex, "answer to op #" + opIndex, answers);
                }
                if (++sinceCheck >= checkEvery || opIndex == ops.size() - 1) {
                    sinceCheck = 0;
                    Map<String, String> states = states(indexes);
                    if (summary != null) {
                        summary.maxKnownWorkers = Math.max(
                                summary.maxKnownWorkers,
                                indexes.get(0).workers().size());
                    }
                    if (!allEqual(states)) {
                        return new Mismatch(opIndex, "bookkeeping after op #" + opIndex, states);
                    }
                }
            }
            return null;
        } finally {
            for (PrefixIndex index : indexes) {
                try {
                    index.close();
                } catch (RuntimeException e) {
                    // a close failure must not hide the mismatch being reported
                }
            }
        }
    }

    private static boolean allEqual(Map<String, String> answers) {
        return answers.values().stream().distinct().count() == 1;
    }

    private static String answer(PrefixIndex index, Op op, MatchResult r, Map<String, BlockHasher> hashers) {
        try {
            return switch (op) {
                case Op.Event e -> index.apply(e.event()).wireName();
                case Op.HashMatch m -> {
                    index.match(m.localHashes(), 0, m.localHashes().length, r);
                    yield OpStreamWriter.scoresLine(r) + " "
                            + OpStreamWriter.explanationLine(index.explain(m.localHashes(), 0, m.localHashes().length));
                }
                case Op.TokenMatch m -> {
                    String key = m.blockSize() + "\u0000" + m.loraName() + "\u0000" + m.cacheNamespace();
                    BlockHasher h = hashers.computeIfAbsent(key, k -> m.hasher(index.config()));
                    index.match(m.tokenIds(), 0, m.tokenIds().length, h, m.mm(), r);
                    long[][] mm = h.multimodalExtras(m.tokenIds().length, m.mm());
                    long[] locals = mm == null ? null : h.localHashes(m.tokenIds(), 0, m.tokenIds().length, mm);
                    yield OpStreamWriter.scoresLine(r) + " "
                            + OpStreamWriter.explanationLine(
                                    mm == null
                                            ? index.explain(m.tokenIds(), 0, m.tokenIds().length, h)
                                            : index.explain(locals, 0, locals.length));
                }
                case Op.Explain x -> OpStreamWriter.explanationLine(x.on(index));
                case Op.Invalid m -> "skipped";
            };
        } catch (VirtualMachineError e) {
            throw e;
        } catch (RuntimeException | Error e) {
            return "threw " + e;
        }
    }

    /** The comparable bookkeeping of each index, as one string each. */
    private Map<String, String> states(List<PrefixIndex> indexes) {
        TreeSet<Worker> everyone = new TreeSet<>();
        Map<String, String> out = new LinkedHashMap<>();
        List<List<Worker>> lists = new ArrayList<>();
        for (PrefixIndex index : indexes) {
            try {
                List<Worker> w = index.workers();
                lists.add(w);
                everyone.addAll(w);
            } catch (RuntimeException e) {
                lists.add(null);
            }
        }
        for (int i = 0; i < indexes.size(); i++) {
            PrefixIndex index = indexes.get(i);
            StringBuilder sb = new StringBuilder();
            try {
                sb.append("workers=").append(lists.get(i)).append("\n      blockCount:");
                for (Worker w : everyone) {
                    sb.append(' ').append(w).append('=').append(index.blockCount(w));
                }
                sb.append("\n      eventCount:");
                for (EventStatus s : EventStatus.values()) {
                    sb.append(' ').append(s.wireName()).append('=').append(index.eventCount(s));
                }
                IndexStats st = index.stats();
                sb.append("\n      stats: workers=")
                        .append(st.workers())
                        .append(" blocks=")
                        .append(st.blocks())
                        .append(" blocksPerWorker=")
                        .append(new TreeMap<>(st.blocksPerWorker()))
                        .append(" events=");
                for (EventStatus s : EventStatus.values()) {
                    sb.append(s.wireName())
                            .append(':')
                            .append(st.events().getOrDefault(s, 0L))
                            .append(' ');
                }
            } catch (VirtualMachineError e) {
                throw e;
            } catch (RuntimeException | Error e) {
                sb.append(" threw ").append(e);
            }
            out.put(candidates.get(i).name(), sb.toString());
        }
        return out;
    }

    /** Collects a {@link Summary} from the oracle's answers. */
    private static final class SummaryBuilder {
        int events;
        final Map<EventStatus, Integer> statuses = new EnumMap<>(EventStatus.class);
        int matches;
        int nonEmpty;
        int maxDepth;
        int maxMatchWorkers;
        int maxKnownWorkers;
        int malformed;

        void record(Op op, String oracleAnswer, MatchResult oracleResult) {
            if (op instanceof Op.Event) {
                events++;
                if (!oracleAnswer.startsWith("threw")) {
                    statuses.merge(EventStatus.fromWireName(oracleAnswer), 1, Integer::sum);
                }
            } else {
                matches++;
                if (oracleResult.size() > 0) {
                    nonEmpty++;
                }
                maxDepth = Math.max(maxDepth, oracleResult.maxDepth());
                maxMatchWorkers = Math.max(maxMatchWorkers, oracleResult.size());
            }
        }

        Summary build(int ops) {
            return new Summary(
                    ops, events, statuses, matches, nonEmpty, maxDepth, maxMatchWorkers, maxKnownWorkers, malformed);
        }
    }

    // ------------------------------------------------------------------ reporting

    private AssertionError report(String label, long seed, List<Op> ops, Mismatch m) {
        List<Op> prefix = List.copyOf(ops.subList(0, m.opIndex() + 1));
        List<Op> reduced = reduce(prefix);
        Mismatch rm = firstMismatch(reduced, null);
        String shortLabel = label.contains("(") ? label.substring(0, label.indexOf('(')) : label;
        String base = (shortLabel.strip().replaceAll("[^A-Za-z0-9._-]+", "-") + "-seed-" + Long.toUnsignedString(seed));
        if (base.length() > 100) {
            base = base.substring(base.length() - 100);
        }
        Path prefixFile = write(base + "-prefix", prefix);
        Path reducedFile = write(base + "-reduced", reduced);
        Op op = ops.get(m.opIndex());
        StringBuilder sb = new StringBuilder();
        sb.append("implementations disagree with the oracle: ").append(label).append('\n');
        sb.append("  seed ")
                .append(seed)
                .append(", stream of ")
                .append(ops.size())
                .append(" ops, config ")
                .append(config)
                .append('\n');
        sb.append("  first mismatch: ").append(m.what()).append('\n');
        sb.append("  op #").append(m.opIndex()).append(": ").append(op).append('\n');
        sb.append("  as JSON: ").append(OpStreamWriter.line(op)).append('\n');
        sb.append("  answers:\n");
        m.answers()
                .forEach((k, v) ->
                        sb.append("    ").append(k).append(": ").append(v).append('\n'));
        sb.append("  shortest failing prefix: ops #0..#")
                .append(m.opIndex())
                .append(" (")
                .append(prefix.size())
                .append(" ops), written to ")
                .append(prefixFile)
                .append('\n');
        if (prefix.size() <= 30) {
            for (Op p : prefix) {
                sb.append("    ").append(OpStreamWriter.line(p)).append('\n');
            }
        }
        sb.append("  reduced failing stream: ")
                .append(reduced.size())
                .append(" ops, written to ")
                .append(reducedFile)
                .append(" (the oracle's output lines are in the .expected file next to it)\n");
        if (rm != null) {
            sb.append("  reduced stream fails at: ").append(rm.what()).append('\n');
            rm.answers()
                    .forEach((k, v) ->
                            sb.append("    ").append(k).append(": ").append(v).append('\n'));
        }
        int shown = Math.min(reduced.size(), 60);
        for (int i = 0; i < shown; i++) {
            sb.append("    ").append(OpStreamWriter.line(reduced.get(i))).append('\n');
        }
        if (shown < reduced.size()) {
            sb.append("    ... ").append(reduced.size() - shown).append(" more in the file\n");
        }
        return new AssertionError(sb.toString());
    }

    /**
     * Removes ops (chunks of halving size, then single ops) while a mismatch remains, cutting the
     * stream after the first mismatch each time, until nothing more can go or the budget is spent.
     */
    private List<Op> reduce(List<Op> failing) {
        long deadline = System.nanoTime() + reduceBudget.toNanos();
        List<Op> cur = new ArrayList<>();
        for (Op op : failing) {
            if (!(op instanceof Op.Invalid)) {
                cur.add(op);
            }
        }
        Mismatch first = firstMismatch(cur, null);
        if (first == null) {
            return failing; // not reproducible (timing or identity-hash dependent): report as is
        }
        cur = new ArrayList<>(cur.subList(0, first.opIndex() + 1));
        cur = removeOps(cur, deadline);
        cur = shrinkOps(cur, deadline);
        return removeOps(cur, deadline);
    }

    /** Removes chunks of ops of halving size, then single ops, while a mismatch remains. */
    private List<Op> removeOps(List<Op> cur, long deadline) {
        int chunk = Math.max(1, cur.size() / 2);
        while (System.nanoTime() < deadline) {
            boolean removed = false;
            for (int start = 0; start < cur.size() && System.nanoTime() < deadline; ) {
                List<Op> candidate = new ArrayList<>(cur.subList(0, start));
                candidate.addAll(cur.subList(Math.min(cur.size(), start + chunk), cur.size()));
                Mismatch mm = candidate.isEmpty() ? null : firstMismatch(candidate, null);
                if (mm != null) {
                    cur = new ArrayList<>(candidate.subList(0, mm.opIndex() + 1));
                    removed = true;
                } else {
                    start += chunk;
                }
            }
            if (chunk == 1 && !removed) {
                break;
            }
            if (!removed || chunk > 1) {
                chunk = Math.max(1, chunk / 2);
            }
        }
        return cur;
    }

    /** Makes single ops smaller (fewer blocks, shorter matches, fewer removed names) while a mismatch remains. */
    private List<Op> shrinkOps(List<Op> cur, long deadline) {
        boolean progress = true;
        while (progress && System.nanoTime() < deadline) {
            progress = false;
            for (int i = 0; i < cur.size() && System.nanoTime() < deadline; i++) {
                for (Op smaller : smallerVersions(cur.get(i))) {
                    List<Op> candidate = new ArrayList<>(cur);
                    candidate.set(i, smaller);
                    Mismatch mm = firstMismatch(candidate, null);
                    if (mm != null) {
                        cur = new ArrayList<>(candidate.subList(0, mm.opIndex() + 1));
                        progress = true;
                        break;
                    }
                }
            }
        }
        return cur;
    }

    /** Candidates for a smaller op, smallest first: leading parts of its blocks or hashes, or one name fewer. */
    private static List<Op> smallerVersions(Op op) {
        List<Op> out = new ArrayList<>();
        switch (op) {
            case Op.Event(KvEvent.Stored s) -> {
                for (int k : lengths(s.size())) {
                    out.add(new Op.Event(new KvEvent.Stored(
                            s.worker(),
                            s.parentHash(),
                            Arrays.copyOf(s.blockHashes(), k),
                            Arrays.copyOf(s.localHashes(), k),
                            s.medium())));
                }
            }
            case Op.Event(KvEvent.StoredTokens t) -> {
                for (int k : lengths(t.size())) {
                    out.add(new Op.Event(new KvEvent.StoredTokens(
                            t.worker(),
                            t.parentHash(),
                            Arrays.copyOf(t.tokenIds(), k * t.blockSize()),
                            t.blockSize(),
                            Arrays.copyOf(t.blockHashes(), k),
                            t.loraName(),
                            t.cacheNamespace(),
                            t.mmHashes() == null ? null : Arrays.copyOf(t.mmHashes(), k),
                            t.medium())));
                }
            }
            case Op.Event(KvEvent.Removed r) -> {
                for (int i = 0; i < r.blockHashes().length && r.blockHashes().length > 1; i++) {
                    long[] fewer = new long[r.blockHashes().length - 1];
                    System.arraycopy(r.blockHashes(), 0, fewer, 0, i);
                    System.arraycopy(r.blockHashes(), i + 1, fewer, i, fewer.length - i);
                    out.add(new Op.Event(new KvEvent.Removed(r.worker(), fewer, r.medium())));
                }
            }
            case Op.HashMatch m -> {
                for (int k : lengths(m.localHashes().length)) {
                    out.add(new Op.HashMatch(Arrays.copyOf(m.localHashes(), k)));
                }
            }
            case Op.TokenMatch m -> {
                int blocks = m.tokenIds().length / m.blockSize();
                for (int k : lengths(blocks)) {
                    out.add(new Op.TokenMatch(
                            Arrays.copyOf(m.tokenIds(), k * m.blockSize()),
                            m.blockSize(),
                            m.loraName(),
                            m.cacheNamespace(),
                            m.mm()));
                }
            }
            default -> {}
        }
        return out;
    }

    /** Shorter lengths to try for something of length {@code n}: 0, 1, n/2, n-1 (distinct, below n). */
    private static List<Integer> lengths(int n) {
        TreeSet<Integer> out = new TreeSet<>();
        for (int k : new int[] {0, 1, n / 4, n / 2, n - 1}) {
            if (k >= 0 && k < n) {
                out.add(k);
            }
        }
        return new ArrayList<>(out);
    }

    private Path write(String name, List<Op> ops) {
        try {
            Files.createDirectories(reportDir);
            Path file = reportDir.resolve(name + ".jsonl").toAbsolutePath();
            StringBuilder in = new StringBuilder();
            for (Op op : ops) {
                in.append(OpStreamWriter.line(op)).append('\n');
            }
            Files.writeString(file, in, StandardCharsets.UTF_8);
            StringBuilder out = new StringBuilder();
            try (OracleIndex oracle = new OracleIndex(config)) {
                for (String line : ReferenceOutput.lines(ops, oracle)) {
                    out.append(line).append('\n');
                }
            }
            Files.writeString(reportDir.resolve(name + ".expected"), out, StandardCharsets.UTF_8);
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the failing stream under " + reportDir, e);
        }
    }
}
