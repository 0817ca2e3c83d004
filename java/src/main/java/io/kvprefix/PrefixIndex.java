package io.kvprefix;

import io.kvprefix.internal.IndexFactory;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A global index of the KV-cache blocks every worker holds, fed by the engines' events, answering
 * for a request how many leading blocks each worker has cached, exactly (docs/SPEC.md sections 3
 * and 4; which implementation carries what: section 12).
 *
 * <pre>{@code
 * try (PrefixIndex index = PrefixIndex.create(IndexConfig.defaults())) {
 *     index.apply(KvEvent.Stored.root(Worker.of(1), engineHashes, localHashes));
 *     MatchResult r = index.match(tokens);        // hash and match in one call
 *     for (int i = 0; i < r.size(); i++) System.out.println(r.worker(i) + " " + r.depth(i));
 * }
 * }</pre>
 *
 * <p>Thread-safety: {@link #match} from any number of threads at any time, also while events are
 * applied; {@link #apply} concurrently for events of different worker ids, never for two of one
 * worker id ({@link EventSink} routes them so); after {@link #close()}, {@link #apply},
 * {@link #match}, {@link #explain}, {@link #blockCount}, {@link #workers} and {@link #stats} fail
 * with "index closed" (docs/SPEC.md section 4, <em>Concurrency</em>, states each rule).
 */
public interface PrefixIndex extends AutoCloseable {

    /** The default index for this configuration: the off-heap index. */
    static PrefixIndex create(IndexConfig config) {
        return offHeap(config);
    }

    /**
     * The off-heap chain index: runs of blocks, a child table and each worker's names in native
     * memory within the configured memory budget; lock-free matches, concurrent writes for different
     * worker ids, matching in libkvprefix if the configuration's {@link Implementation} resolves to
     * native (docs/SPEC.md section 12).
     */
    static PrefixIndex offHeap(IndexConfig config) {
        return IndexFactory.offHeap(config);
    }

    /**
     * The heap index (the positional design, fastutil maps behind one lock): the baseline the
     * benchmarks compare against and a second, independent implementation for the differential
     * tests; every feature, one writer at a time (docs/SPEC.md section 12 says how it differs).
     */
    static PrefixIndex heap(IndexConfig config) {
        return IndexFactory.heap(config);
    }

    /**
     * A new off-heap index holding the state saved in the snapshot {@code file} by
     * {@link #snapshot(Path, Map)} of either implementation (docs/SNAPSHOT.md): every answer, status
     * and counter is then what the saved index would have given. The file is mapped and copied in
     * bulk (no event is re-applied). {@code config} must have the block size, seeds and worker slots
     * the snapshot was written with; its memory budget, jump size, implementation and size hint are
     * this index's own.
     *
     * @throws SnapshotException if the file cannot be read, is not a snapshot, is damaged in any way
     *     (truncated, a flipped bit: every byte is covered by a CRC32C), is of another format version,
     *     was written with another configuration, or does not fit the memory budget. Nothing is left
     *     allocated then: the caller may go on with a new, empty index.
     */
    static PrefixIndex restore(Path file, IndexConfig config) {
        return IndexFactory.restoreOffHeap(file, config);
    }

    /** Like {@link #restore}, into a new {@linkplain #heap heap index} (slower: the heap index builds its objects one by one). */
    static PrefixIndex restoreHeap(Path file, IndexConfig config) {
        return IndexFactory.restoreHeap(file, config);
    }

    /**
     * Saves the whole state to {@code file} (docs/SNAPSHOT.md) with no metadata; see
     * {@link #snapshot(Path, Map)}.
     */
    default void snapshot(Path file) {
        snapshot(file, Map.of());
    }

    /**
     * Saves the whole state (blocks, reach, every worker's names, worker slots, event counters) and
     * {@code metadata} (strings of the caller's, for example the last sequence number applied per
     * engine; {@link #snapshotMetadata()} of the restored index returns them) to {@code file}. The
     * state is written to {@code FILE.tmp}, forced to disk and renamed over {@code file}
     * atomically, so a crash at any moment leaves the previous snapshot whole.
     *
     * <p><b>Concurrent calls.</b> Matches go on while it runs. The snapshot is a consistent cut:
     * events already being applied when it starts finish first and are in it; events that arrive
     * while the state is copied wait until the copy is done (the off-heap index holds its writers out
     * for the copy only, not for the disk flush; the heap index holds its read lock for the whole
     * write, so a writer waits, and matches queue behind a waiting writer). No event is lost or
     * applied twice.
     *
     * @throws SnapshotException if the file cannot be written (the previous one is kept)
     * @throws IllegalArgumentException if {@code metadata} has an empty key or an entry over 64 KiB
     * @throws IllegalStateException if the index is closed
     */
    void snapshot(Path file, Map<String, String> metadata);

    /** The metadata of the snapshot this index was restored from; empty if it was not restored. */
    Map<String, String> snapshotMetadata();

    /**
     * Applies one event, whole or not at all, and returns its status; the status is also counted
     * ({@link #eventCount}). Never throws for a well-formed event; {@link IllegalStateException} if
     * the index is closed.
     */
    EventStatus apply(KvEvent event);

    /** Matches a request given as local hashes (allocates a result; see the reusable overload). */
    default MatchResult match(long[] localHashes) {
        MatchResult r = new MatchResult();
        match(localHashes, 0, localHashes.length, r);
        return r;
    }

    /**
     * Matches {@code localHashes[offset .. offset+length)} into {@code into} (reset first). Allocates
     * nothing once {@code into} has grown to its largest answer.
     */
    void match(long[] localHashes, int offset, int length, MatchResult into);

    /** Hashes {@code tokens} with {@link #hasher()} and matches them (allocates a result). */
    default MatchResult match(int[] tokens) {
        MatchResult r = new MatchResult();
        match(tokens, 0, tokens.length, hasher(), r);
        return r;
    }

    /** Hashes {@code tokens[offset .. offset+length)} with {@link #hasher()} and matches them into {@code into}. */
    default void match(int[] tokens, int offset, int length, MatchResult into) {
        match(tokens, offset, length, hasher(), into);
    }

    /**
     * Hashes {@code tokens[offset .. offset+length)} with {@code hasher} (its block size, seed and salt,
     * for example a LoRA request's) and matches them into {@code into}, in one call: the native path
     * does both in one downcall.
     *
     * @throws IllegalArgumentException if {@code hasher}'s chain seed differs from the index's
     */
    void match(int[] tokens, int offset, int length, BlockHasher hasher, MatchResult into);

    /**
     * As {@link #match(int[], int, int, BlockHasher, MatchResult)}, and also hands back the request's
     * local hashes, what the index keys on: every full block's, into {@code localHashesOut[0 .. blocks)},
     * each block hashed once (the native path in the same downcall, {@code kvp_match_tokens_all}: the
     * blocks its walk did not need are hashed after it). Returns the number of blocks. A router
     * that credits a worker with the request's blocks while it prefills them (docs/SPEC.md section
     * 6.7) needs them and pays no second hashing pass.
     *
     * @throws IllegalArgumentException if {@code localHashesOut} has room for fewer than
     *     {@code hasher.blockCount(length)} hashes, or {@code hasher}'s chain seed differs from the index's
     */
    default int match(
            int[] tokens, int offset, int length, BlockHasher hasher, MatchResult into, long[] localHashesOut) {
        Objects.checkFromIndexSize(offset, length, tokens.length);
        if (hasher.chainSeed() != config().chainSeed()) {
            throw new IllegalArgumentException("the hasher's chain seed " + Long.toUnsignedString(hasher.chainSeed())
                    + " differs from the index's " + Long.toUnsignedString(config().chainSeed()));
        }
        int blocks = hasher.blockCount(length);
        if (localHashesOut.length < blocks) {
            throw new IllegalArgumentException("localHashesOut has room for " + localHashesOut.length
                    + " hashes, the request has " + blocks + " blocks");
        }
        hasher.localHashes(tokens, offset, length, localHashesOut, 0);
        match(localHashesOut, 0, blocks, into);
        return blocks;
    }

    /**
     * Hashes and matches a multimodal request: {@code tokens[offset .. offset+length)} whose items
     * take the token spans {@code spans} (offsets relative to {@code offset}), each block hashed with
     * the {@code mm_hash}es of the spans it overlaps (docs/SPEC.md section 2.1, Dynamo's mapping,
     * {@link BlockHasher#multimodalExtras}). With no span it is the plain token match.
     *
     * @throws IllegalArgumentException if {@code hasher}'s chain seed differs from the index's
     */
    default void match(
            int[] tokens,
            int offset,
            int length,
            BlockHasher hasher,
            List<BlockHasher.MmSpan> spans,
            MatchResult into) {
        long[][] extras = hasher.multimodalExtras(length, spans);
        if (extras == null) {
            match(tokens, offset, length, hasher, into);
            return;
        }
        if (hasher.chainSeed() != config().chainSeed()) {
            throw new IllegalArgumentException("the hasher's chain seed " + Long.toUnsignedString(hasher.chainSeed())
                    + " differs from the index's " + Long.toUnsignedString(config().chainSeed()));
        }
        long[] locals = hasher.localHashes(tokens, offset, length, extras);
        match(locals, 0, locals.length, into);
    }

    /**
     * Explains the match of {@code localHashes[offset .. offset+length)}: for every worker the index
     * knows, its depth, and why its match stopped there: it holds the whole request, or the block at
     * that position is absent, or it holds a later block of the request (a hole) (docs/SPEC.md section
     * 4.1). For debugging: slower than {@link #match} and allocating, and {@link #match} pays nothing
     * for it. The answer is exact at one moment: the off-heap index holds its writers out for the
     * walk (microseconds for a request of a few hundred blocks), the heap index takes its read lock.
     */
    MatchExplanation explain(long[] localHashes, int offset, int length);

    /**
     * Explains the match of {@code tokens[offset .. offset+length)} hashed with {@code hasher}, as
     * {@link #explain(long[], int, int)}, and also tries the other salts the index has seen in
     * token-form events (LoRA names and cache namespaces, the first 256, plus no salt): a worker
     * that holds no later block but matches the tokens deeper under one of them is reported with the
     * deepest such salt ({@link MatchExplanation.Stop#OTHER_SALT}).
     *
     * @throws IllegalArgumentException if {@code hasher}'s chain seed differs from the index's
     */
    MatchExplanation explain(int[] tokens, int offset, int length, BlockHasher hasher);

    /** Number of distinct blocks {@code worker} holds (0 if unknown). */
    long blockCount(Worker worker);

    /** The workers the index knows (seen in a successful store and not removed), sorted. */
    List<Worker> workers();

    /** How many events were applied with this status. */
    long eventCount(EventStatus status);

    /** A snapshot of sizes and counters. */
    IndexStats stats();

    /** The hasher used by the token form of {@link #match}: the configured block size and seeds. */
    BlockHasher hasher();

    /** The configuration this index was built with. */
    IndexConfig config();

    /** Releases the index (see the class comment); idempotent. */
    @Override
    void close();
}
