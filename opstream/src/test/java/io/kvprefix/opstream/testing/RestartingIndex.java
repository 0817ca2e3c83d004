package io.kvprefix.opstream.testing;

import io.kvprefix.BlockHasher;
import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.IndexStats;
import io.kvprefix.KvEvent;
import io.kvprefix.MatchExplanation;
import io.kvprefix.MatchResult;
import io.kvprefix.PrefixIndex;
import io.kvprefix.Worker;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * A {@link PrefixIndex} that restarts: before its {@code k}-th call of {@link #apply},
 * {@link #match} or {@link #explain} (for each {@code k} in {@code restartAt}) it snapshots the index it wraps, closes
 * it, and goes on with an index restored from the file. Run through {@link Differential}, every
 * answer after a restart is compared with the oracle that was fed the whole stream.
 *
 * <p>Thread-safety: not thread-safe; one test thread drives it.
 */
public final class RestartingIndex implements PrefixIndex {
    private final Function<Path, PrefixIndex> restore;
    private final Path file;
    private final int[] restartAt;
    private PrefixIndex current;
    private int calls;
    private int next;

    /**
     * @param first the index to start with
     * @param restore builds an index from a snapshot file
     * @param file where the snapshots go
     * @param restartAt the call numbers before which it restarts, ascending
     */
    public RestartingIndex(PrefixIndex first, Function<Path, PrefixIndex> restore, Path file, int... restartAt) {
        this.current = Objects.requireNonNull(first, "first");
        this.restore = restore;
        this.file = file;
        this.restartAt = restartAt.clone();
        Arrays.sort(this.restartAt);
    }

    /** Restarts made so far. */
    public int restarts() {
        return next;
    }

    private void tick() {
        while (next < restartAt.length && calls == restartAt[next]) {
            Map<String, String> meta = Map.of("restart", Integer.toString(next), "calls", Integer.toString(calls));
            current.snapshot(file, meta);
            current.close();
            current = restore.apply(file);
            if (!current.snapshotMetadata().equals(meta)) {
                throw new AssertionError("restored metadata " + current.snapshotMetadata() + ", saved " + meta);
            }
            next++;
        }
        calls++;
    }

    @Override
    public EventStatus apply(KvEvent event) {
        tick();
        return current.apply(event);
    }

    @Override
    public void match(long[] localHashes, int offset, int length, MatchResult into) {
        tick();
        current.match(localHashes, offset, length, into);
    }

    @Override
    public void match(int[] tokens, int offset, int length, BlockHasher hasher, MatchResult into) {
        tick();
        current.match(tokens, offset, length, hasher, into);
    }

    @Override
    public MatchExplanation explain(long[] localHashes, int offset, int length) {
        tick();
        return current.explain(localHashes, offset, length);
    }

    @Override
    public MatchExplanation explain(int[] tokens, int offset, int length, BlockHasher hasher) {
        tick();
        return current.explain(tokens, offset, length, hasher);
    }

    @Override
    public long blockCount(Worker worker) {
        return current.blockCount(worker);
    }

    @Override
    public List<Worker> workers() {
        return current.workers();
    }

    @Override
    public long eventCount(EventStatus status) {
        return current.eventCount(status);
    }

    @Override
    public IndexStats stats() {
        return current.stats();
    }

    @Override
    public BlockHasher hasher() {
        return current.hasher();
    }

    @Override
    public IndexConfig config() {
        return current.config();
    }

    @Override
    public void snapshot(Path file, Map<String, String> metadata) {
        current.snapshot(file, metadata);
    }

    @Override
    public Map<String, String> snapshotMetadata() {
        return current.snapshotMetadata();
    }

    @Override
    public void close() {
        current.close();
    }
}
