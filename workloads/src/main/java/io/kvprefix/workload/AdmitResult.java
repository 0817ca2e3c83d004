package io.kvprefix.workload;

import io.kvprefix.KvEvent;
import java.util.List;

/**
 * What a {@link MockEngine} did when it admitted a request: how much of the prompt it found cached,
 * what it stored, what it evicted, and the KV events that tell an index about it.
 *
 * <p>The request's full blocks split into three consecutive ranges: {@code [0, cachedBlocks)} were
 * already cached (prefix hit), {@code [cachedBlocks, cachedBlocks + storedBlocks)} were newly cached,
 * and the last {@code uncachedBlocks} did not fit (see {@link MockEngine} on a request larger than the
 * free room). {@code events} is at most one {@link KvEvent.Removed} (the evictions, in eviction order)
 * followed by at most one {@link KvEvent.Stored} (the new blocks, whose parent is block
 * {@code cachedBlocks - 1}, or none when {@code cachedBlocks == 0}), in the order an index must apply them.
 *
 * <p>Thread-safety: immutable (the events' arrays are not to be modified).
 *
 * @param cachedBlocks leading full blocks found cached
 * @param storedBlocks full blocks newly cached (the size of the stored event)
 * @param uncachedBlocks full blocks that did not fit
 * @param evictedBlocks blocks evicted to make room (the size of the removed event)
 * @param events the events, removed before stored; empty if nothing changed (with a CPU tier, the
 *     copies of offloaded blocks and the CPU's own removals come first)
 * @param lowerTierBlocks of the stored blocks, the leading ones loaded back from the engine's CPU tier
 *     instead of computed (0 without a CPU tier)
 */
public record AdmitResult(
        int cachedBlocks,
        int storedBlocks,
        int uncachedBlocks,
        int evictedBlocks,
        List<KvEvent> events,
        int lowerTierBlocks) {

    public AdmitResult {
        events = List.copyOf(events);
    }

    /** An admission on an engine without a CPU tier (no block came from one). */
    public AdmitResult(
            int cachedBlocks, int storedBlocks, int uncachedBlocks, int evictedBlocks, List<KvEvent> events) {
        this(cachedBlocks, storedBlocks, uncachedBlocks, evictedBlocks, events, 0);
    }

    /** Number of full blocks of the request. */
    public int fullBlocks() {
        return cachedBlocks + storedBlocks + uncachedBlocks;
    }

    /** Number of leading full blocks the engine holds once the request is admitted. */
    public int heldBlocks() {
        return cachedBlocks + storedBlocks;
    }
}
