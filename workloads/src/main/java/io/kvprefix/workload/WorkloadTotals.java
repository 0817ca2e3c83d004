package io.kvprefix.workload;

import io.kvprefix.KvEvent;
import java.util.Locale;

/**
 * Counts of a workload's op stream, with Dynamo's accounting (mooncake_bench): <em>ops</em> = match
 * calls + events (each event counts once, whatever its size); <em>block ops</em> = blocks in match
 * requests + blocks in stored events (removed blocks add nothing).
 *
 * <p>Thread-safety: not thread-safe; {@link #add} from one thread, read after.
 */
public final class WorkloadTotals {
    private long requests;
    private long matchBlocks;
    private long storedEvents;
    private long removedEvents;
    private long storedBlocks;
    private long removedBlocks;
    private long fullBlocks;
    private long cachedBlocks;
    private long uncachedBlocks;

    /** Adds one step. */
    public void add(WorkloadStep step) {
        requests++;
        matchBlocks += step.matchHashes().length;
        AdmitResult a = step.admit();
        fullBlocks += a.fullBlocks();
        cachedBlocks += a.cachedBlocks();
        uncachedBlocks += a.uncachedBlocks();
        for (KvEvent e : a.events()) {
            switch (e) {
                case KvEvent.Stored s -> {
                    storedEvents++;
                    storedBlocks += s.size();
                }
                case KvEvent.Removed r -> {
                    removedEvents++;
                    removedBlocks += r.blockHashes().length;
                }
                default -> throw new IllegalArgumentException("unexpected event in a workload: " + e);
            }
        }
    }

    /** Requests, which is also the number of match calls. */
    public long requests() {
        return requests;
    }

    /** Match calls (one per request). */
    public long matches() {
        return requests;
    }

    /** Blocks over all match calls. */
    public long matchBlocks() {
        return matchBlocks;
    }

    /** Events (stored and removed). */
    public long events() {
        return storedEvents + removedEvents;
    }

    /** Stored events. */
    public long storedEvents() {
        return storedEvents;
    }

    /** Removed events. */
    public long removedEvents() {
        return removedEvents;
    }

    /** Blocks over all stored events. */
    public long storedBlocks() {
        return storedBlocks;
    }

    /** Blocks over all removed events (evictions). */
    public long removedBlocks() {
        return removedBlocks;
    }

    /** Full blocks over all requests. */
    public long fullBlocks() {
        return fullBlocks;
    }

    /** Full blocks the serving engine already had cached at admission. */
    public long cachedBlocks() {
        return cachedBlocks;
    }

    /** Full blocks that did not fit in their engine (see {@link MockEngine}). */
    public long uncachedBlocks() {
        return uncachedBlocks;
    }

    /** Dynamo's ops: match calls + events. */
    public long ops() {
        return matches() + events();
    }

    /** Dynamo's block ops: blocks in match requests + blocks in stored events. */
    public long blockOps() {
        return matchBlocks + storedBlocks;
    }

    /** The engines' prefix hit rate: cached full blocks over all full blocks (0 if none). */
    public double engineHitRate() {
        return fullBlocks == 0 ? 0.0 : (double) cachedBlocks / fullBlocks;
    }

    /** The counts on one line. */
    @Override
    public String toString() {
        return String.format(
                Locale.ROOT,
                "%d requests, %d events (%d stored, %d removed), %d stored blocks, "
                        + "%d removed blocks, %d match blocks; ops %d, block ops %d; engine prefix hits %.2f%% of full blocks",
                requests,
                events(),
                storedEvents,
                removedEvents,
                storedBlocks,
                removedBlocks,
                matchBlocks,
                ops(),
                blockOps(),
                100.0 * engineHitRate());
    }
}
