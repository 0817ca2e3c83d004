package io.kvprefix;

import java.util.Map;

/**
 * A snapshot of an index's size, counters and diagnostics.
 *
 * <p>Thread-safety: immutable.
 *
 * @param workers workers known to the index (holding blocks or not)
 * @param blocks (worker, block) pairs held, summed over workers
 * @param entries distinct blocks stored: blocks in the off-heap index's live runs; the heap index's
 *     {@code (position, local hash, chain hash)} entries
 * @param nativeBytes off-heap bytes the index holds now (0 for the heap index); the off-heap index's
 *     memory budget bounds this, the heap index's bounds its estimate in {@code heapBytes}
 * @param heapBytes an estimate of the Java heap the index's own structures take (for the off-heap
 *     index: its per-worker side sets and child-run lists)
 * @param capacity records of the off-heap index's child table (it is rebuilt bigger past 70% of
 *     them); the entry count for the heap index
 * @param rebuilds child-table rebuilds of the off-heap index so far; 0 for the heap index
 * @param bitsetWords 64-bit words of each heap-index entry's worker bitset; 0 for the off-heap index,
 *     which keeps one holder entry per worker in a run instead
 * @param nativeMatch true if matches run in the native kernel
 * @param blocksPerWorker blocks held per worker
 * @param events events applied so far, per status
 * @param contention the off-heap index's contention counters since it was made, by name (empty for
 *     the heap index); the names and what each counts are in docs/BENCHMARKS.md section 2
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
        Map<EventStatus, Long> events,
        Map<String, Long> contention) {
    public IndexStats {
        blocksPerWorker = Map.copyOf(blocksPerWorker);
        events = Map.copyOf(events);
        contention = Map.copyOf(contention);
    }

    /** Stats without contention counters (an index that keeps none). */
    public IndexStats(
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
        this(
                workers,
                blocks,
                entries,
                nativeBytes,
                heapBytes,
                capacity,
                rebuilds,
                bitsetWords,
                nativeMatch,
                blocksPerWorker,
                events,
                Map.of());
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
