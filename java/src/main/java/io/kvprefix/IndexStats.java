package io.kvprefix;

import java.util.Map;

/**
 * A snapshot of an index's size, counters and diagnostics.
 *
 * <p>Thread-safety: immutable.
 *
 * @param workers workers known to the index (holding blocks or not)
 * @param blocks (worker, block) pairs held, summed over workers
 * @param entries distinct {@code (position, local hash, chain hash)} entries in the positional table
 * @param nativeBytes off-heap bytes the index holds now (0 for the heap index); the off-heap index's
 *     memory budget bounds this, the heap index's bounds its estimate in {@code heapBytes}
 * @param heapBytes an estimate of the Java heap the index's own structures take (for the off-heap
 *     index: its per-worker side sets and child-run lists)
 * @param capacity slots of the off-heap table (it grows past 70% of them); the entry count for the heap index
 * @param rebuilds table rebuilds so far (growth, widening for more workers, shrinking); 0 for the heap index
 * @param bitsetWords 64-bit words of each entry's worker bitset
 * @param nativeMatch true if matches run in the native kernel
 * @param blocksPerWorker blocks held per worker
 * @param events events applied so far, per status
 */
public record IndexStats(
        int workers,
        long blocks,
        long entries,
        long nativeBytes,
        long heapBytes,
        long capacity,
        long rebuilds,
        int bitsetWords,
        boolean nativeMatch,
        Map<Worker, Long> blocksPerWorker,
        Map<EventStatus, Long> events) {
    public IndexStats {
        blocksPerWorker = Map.copyOf(blocksPerWorker);
        events = Map.copyOf(events);
    }

    /** Bytes of memory the index holds: off-heap plus the heap estimate. */
    public long bytesUsed() {
        return nativeBytes + heapBytes;
    }

    /** Total events applied, all statuses. */
    public long totalEvents() {
        return events.values().stream().mapToLong(Long::longValue).sum();
    }
}
