package io.kvprefix;

import java.util.Map;

/**
 * A snapshot of an index's size and counters.
 *
 * <p>Thread-safety: immutable.
 *
 * @param workers workers known to the index (holding blocks or not)
 * @param blocks (worker, block) pairs held, summed over workers
 * @param entries distinct {@code (position, local hash, chain hash)} entries in the positional table
 * @param bytesUsed bytes of memory the index holds (off-heap for the off-heap index; an estimate for the heap index)
 * @param blocksPerWorker blocks held per worker
 * @param events events applied so far, per status
 */
public record IndexStats(int workers, long blocks, long entries, long bytesUsed,
                         Map<Worker, Long> blocksPerWorker, Map<EventStatus, Long> events) {
    public IndexStats {
        blocksPerWorker = Map.copyOf(blocksPerWorker);
        events = Map.copyOf(events);
    }

    /** Total events applied, all statuses. */
    public long totalEvents() {
        return events.values().stream().mapToLong(Long::longValue).sum();
    }
}
