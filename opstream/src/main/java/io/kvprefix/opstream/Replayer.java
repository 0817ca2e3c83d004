package io.kvprefix.opstream;

import io.kvprefix.BlockHasher;
import io.kvprefix.EventStatus;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

/**
 * Replays an op stream through a {@link PrefixIndex} (docs/SPEC.md section 5): reads lines separated
 * by {@code \n} through an {@link OpStreamReader}, applies each event or runs each match in order,
 * and writes exactly one result line per input line. This is the engine of {@code kvprefix replay};
 * tests can drive it directly with any index. A line longer than {@link #maxLineBytes(int)} is
 * answered {@code invalid_input} and skipped without being buffered; output is written in large
 * chunks and flushed whenever the next read could block; the reasons of the first few invalid lines
 * go to the {@link #log(Consumer) log}.
 *
 * <p>Thread-safety: not thread-safe; one replayer per thread (the index may be shared as its own
 * contract allows).
 */
public final class Replayer {
    /** Default longest line: 64 MiB. */
    public static final int DEFAULT_MAX_LINE_BYTES = OpStreamReader.DEFAULT_MAX_LINE_BYTES;
    /** How many invalid lines are described to the log. */
    public static final int INVALID_NOTES = 10;

    private static final int MAX_CACHED_HASHERS = 1024;

    private final PrefixIndex index;
    private final MatchResult result = new MatchResult();
    private final Map<HasherKey, BlockHasher> hashers = new HashMap<>();
    private int maxLineBytes = DEFAULT_MAX_LINE_BYTES;
    private Consumer<String> log = s -> {};
    private LongConsumer firstCapacityExceeded = n -> {};

    private long lines;
    private long matches;
    private final long[] statusCounts = new long[EventStatus.values().length];

    private record HasherKey(int blockSize, String lora, String namespace) {}

    /** A replayer feeding {@code index}; the caller keeps ownership of the index (and closes it). */
    public Replayer(PrefixIndex index) {
        this.index = Objects.requireNonNull(index, "index");
    }

    /** Lines longer than this many bytes (without the {@code \n}) are answered invalid_input unread. */
    public Replayer maxLineBytes(int bytes) {
        maxLineBytes = OpStreamReader.checkMaxLineBytes(bytes);
        return this;
    }

    /** Where the one-line notes about invalid lines go (the first {@value #INVALID_NOTES}); none by default. */
    public Replayer log(Consumer<String> log) {
        this.log = Objects.requireNonNull(log, "log");
        return this;
    }

    /**
     * Called once, with the line number, right after the first event the index answered
     * {@code capacity_exceeded} (for example to see how full its memory budget was); none by default.
     */
    public Replayer onFirstCapacityExceeded(LongConsumer hook) {
        this.firstCapacityExceeded = Objects.requireNonNull(hook, "hook");
        return this;
    }

    /**
     * Counts of one {@link #run}.
     *
     * @param lines input lines read
     * @param matches match lines answered with scores
     * @param statusCounts lines answered with each {@link EventStatus}, indexed by ordinal
     */
    public record Summary(long lines, long matches, long[] statusCounts) {
        /** Lines answered with {@code status}. */
        public long count(EventStatus status) {
            return statusCounts[status.ordinal()];
        }

        /** {@code 12 lines: 3 matches, ok 8, invalid_input 1} (statuses that occurred). */
        @Override
        public String toString() {
            StringBuilder sb = new StringBuilder()
                    .append(lines)
                    .append(" lines: ")
                    .append(matches)
                    .append(" matches");
            for (EventStatus s : EventStatus.values()) {
                if (statusCounts[s.ordinal()] > 0) {
                    sb.append(", ").append(s.wireName()).append(' ').append(statusCounts[s.ordinal()]);
                }
            }
            return sb.toString();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Summary s
                    && lines == s.lines
                    && matches == s.matches
                    && Arrays.equals(statusCounts, s.statusCounts);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(lines) * 31 + Long.hashCode(matches) * 17 + Arrays.hashCode(statusCounts);
        }
    }

    /**
     * Replays every line of {@code in} and writes the answers to {@code out} (flushed, not closed).
     * Counts accumulate over calls.
     *
     * @throws IOException if reading {@code in} or writing {@code out} fails
     */
    public Summary run(InputStream in, OutputStream out) throws IOException {
        OpStreamWriter writer = new OpStreamWriter(out);
        OpStreamReader reader = new OpStreamReader(in)
                .maxLineBytes(maxLineBytes)
                .beforeBlockingRead(() -> {
                    try {
                        writer.flush(); // the next read may block: let the consumer see what is answered so far
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
        try {
            for (Op op; (op = reader.next()) != null; ) {
                line(writer, op);
            }
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
        writer.flush();
        return new Summary(lines, matches, statusCounts.clone());
    }

    private void line(OpStreamWriter writer, Op op) throws IOException {
        lines++;
        switch (op) {
            case Op.Event e -> status(writer, index.apply(e.event()));
            case Op.HashMatch m -> {
                index.match(m.localHashes(), 0, m.localHashes().length, result);
                scores(writer);
            }
            case Op.TokenMatch t -> {
                index.match(t.tokenIds(), 0, t.tokenIds().length, hasher(t), t.mm(), result);
                scores(writer);
            }
            case Op.Explain x -> writer.explanation(x.on(index));
            case Op.Invalid i -> invalid(writer, i.reason());
        }
    }

    private void invalid(OpStreamWriter writer, String reason) throws IOException {
        long n = statusCounts[EventStatus.INVALID_INPUT.ordinal()];
        if (n < INVALID_NOTES) {
            log.accept("line " + lines + ": invalid_input: " + reason);
        }
        status(writer, EventStatus.INVALID_INPUT);
    }

    private void status(OpStreamWriter writer, EventStatus s) throws IOException {
        if (s == EventStatus.CAPACITY_EXCEEDED && statusCounts[s.ordinal()] == 0) {
            firstCapacityExceeded.accept(lines);
        }
        statusCounts[s.ordinal()]++;
        writer.status(s);
    }

    private void scores(OpStreamWriter writer) throws IOException {
        matches++;
        writer.scores(result);
    }

    /** The hasher for a token-form match: its block size and salt, the index's seeds; cached. */
    private BlockHasher hasher(Op.TokenMatch t) {
        HasherKey k = new HasherKey(t.blockSize(), t.loraName(), t.cacheNamespace());
        BlockHasher h = hashers.get(k);
        if (h == null) {
            if (hashers.size() >= MAX_CACHED_HASHERS) {
                hashers.clear(); // a stream with endless distinct salts: keep memory bounded
            }
            h = t.hasher(index.config());
            hashers.put(k, h);
        }
        return h;
    }
}
