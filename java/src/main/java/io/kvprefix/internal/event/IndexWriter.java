package io.kvprefix.internal.event;

import io.kvprefix.EventStatus;
import io.kvprefix.Medium;
import io.kvprefix.Worker;

/**
 * What an index does with an event once {@link EventDecoder} has validated it: the writes of
 * docs/SPEC.md section 3, each on one tier (section 3.1). Rule 1 (no engine hash twice, parent not among the blocks) and every
 * structural check have already been made; the writer applies rules 2 to 5.
 *
 * <p>Thread-safety: as the index's {@code apply}: calls for different worker ids may run
 * concurrently if the index allows it, never two for one worker id.
 */
public interface IndexWriter {

    /**
     * Stores {@code engineHashes[0..n)} with their local hashes {@code localHashes[0..n)} on tier
     * {@code medium} as a chain continuing the worker's block {@code parentHash} (if
     * {@code hasParent}; held on the GPU for a GPU store, on any tier for a lower one), whole or not at all.
     *
     * @return {@link EventStatus#OK}, {@link EventStatus#PARENT_BLOCK_NOT_FOUND} or
     *     {@link EventStatus#CAPACITY_EXCEEDED}; an index may return null to ask its caller to make room
     *     and call again
     */
    EventStatus store(
            Worker worker,
            Medium medium,
            boolean hasParent,
            long parentHash,
            long[] engineHashes,
            long[] localHashes,
            int n);

    /** The lower tier {@code medium} now also holds the blocks the worker names {@code engineHashes}; {@code BLOCK_NOT_FOUND} if one is unknown. */
    EventStatus copy(Worker worker, Medium medium, long[] engineHashes);

    /** Removes the blocks the worker named {@code engineHashes} from tier {@code medium}, in order; {@code BLOCK_NOT_FOUND} if any was not held there. */
    EventStatus remove(Worker worker, Medium medium, long[] engineHashes);

    /** The worker holds nothing any more, on any tier (it stays known). */
    void clear(Worker worker);

    /** Every dp rank of {@code workerId} holds nothing and is forgotten. */
    void removeWorker(long workerId);
}
