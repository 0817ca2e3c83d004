package io.kvprefix.internal.event;

import io.kvprefix.EventStatus;
import io.kvprefix.Worker;

/**
 * What an index does with an event once {@link EventDecoder} has validated it: the four writes of
 * docs/SPEC.md section 3. Rule 1 (no engine hash twice, parent not among the blocks) and every
 * structural check have already been made; the writer applies rules 2 to 5.
 *
 * <p>Thread-safety: as the index's {@code apply}: calls for different worker ids may run
 * concurrently if the index allows it, never two for one worker id.
 */
public interface IndexWriter {

    /**
     * Stores {@code engineHashes[0..n)} with their local hashes {@code localHashes[0..n)} as a chain
     * continuing the worker's block {@code parentHash} (if {@code hasParent}), whole or not at all.
     *
     * @return {@link EventStatus#OK}, {@link EventStatus#PARENT_BLOCK_NOT_FOUND} or
     *     {@link EventStatus#CAPACITY_EXCEEDED}; an index may return null to ask its caller to make room
     *     and call again
     */
    EventStatus store(
            Worker worker, boolean hasParent, long parentHash, long[] engineHashes, long[] localHashes, int n);

    /** Removes the blocks the worker named {@code engineHashes}, in order; {@code BLOCK_NOT_FOUND} if any was unknown. */
    EventStatus remove(Worker worker, long[] engineHashes);

    /** The worker holds nothing any more (it stays known). */
    void clear(Worker worker);

    /** Every dp rank of {@code workerId} holds nothing and is forgotten. */
    void removeWorker(long workerId);
}
