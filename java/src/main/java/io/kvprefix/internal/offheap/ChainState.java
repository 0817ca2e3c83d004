package io.kvprefix.internal.offheap;

import io.kvprefix.EventStatus;
import io.kvprefix.IndexConfig;
import io.kvprefix.Worker;
import io.kvprefix.internal.event.EventDecoder;
import io.kvprefix.internal.hash.SaltedHashers;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Everything one off-heap chain index holds, in one object the rooms work on: the memory pool, the
 * generations (child table, gates, reclaimer), the run arena, the worker slots and holdings, the
 * counters and the any-tier view count. It has no behaviour but building, sizing and freeing
 * itself; which room may write which field is the table of rights in this package's
 * {@code package-info.java}.
 *
 * <p>Locks: none of its own; {@link #close} holds every writer out ({@link Generations#close}).
 *
 * <p>Thread-safety: the fields are final (or volatile) and safely published with the index; what
 * they hold documents its own rules.
 */
final class ChainState {
    final IndexConfig config;
    /** The shared front door of the writes: validation, hashing, salts ({@code io.kvprefix.internal.event}). */
    final EventDecoder decoder;

    final SaltedHashers hashers;
    final MatchKernel kernel;
    final MemoryPool pool;
    final Generations generations;
    final RunArena arena;
    final WorkerSlots slots;
    /** Every known worker's GPU view (its any-tier view hangs from it); written by its worker's writer. */
    final ConcurrentHashMap<Worker, WorkerHoldings> workers = new ConcurrentHashMap<>();
    /** Striped: every event adds to it, and one shared counter would pass its cache line between the writers' cores. */
    final LongAdder heldPairs = new LongAdder();

    /** Branches made or found without the parent's lock, and at a run's tail under it (contention counters). */
    final LongAdder branchesUnlocked = new LongAdder();

    final LongAdder branchesLocked = new LongAdder();
    /** Branch runs made and recycled because another writer's run won the child record's claim. */
    final LongAdder claimsLost = new LongAdder();

    final LongAdder[] statusCounts = new LongAdder[EventStatus.values().length];
    /** Live any-tier views (0: every worker's any-tier depth is its GPU depth, and matches skip the pairing). */
    final AtomicInteger tierViews = new AtomicInteger();

    volatile Map<String, String> restoredMetadata = Map.of();
    /** A restore in place's copy-on-write mapping of its snapshot (docs/SNAPSHOT.md section 7), unmapped last on close; or null. */
    private volatile java.lang.foreign.Arena mapping;
    /** Test hook on every entry change (package-private: set only by this package's tests). */
    final ReachWatch watch = new ReachWatch();

    final ThreadLocal<ReadScratch> readScratch = ThreadLocal.withInitial(ReadScratch::new);
    final ThreadLocal<WriteScratch> writeScratch = ThreadLocal.withInitial(WriteScratch::new);

    /** An empty index's state sized for {@code config}'s hints. */
    static ChainState create(IndexConfig config) {
        // runs hold up to 64 blocks; on real streams about 20
        return new ChainState(
                config, config.expectedBlocks() / 32, (int) Math.min(1 << 24, config.expectedBlocks() / 32));
    }

    /** An empty state sized for {@code childRecords} child records and run ids below {@code runIds} (a restore's). */
    ChainState(IndexConfig config, long childRecords, int runIds) {
        this.config = Objects.requireNonNull(config, "config");
        this.decoder = new EventDecoder(config);
        this.hashers = decoder.hashers();
        this.kernel = MatchKernel.of(config);
        this.pool = new MemoryPool(config.memoryBudgetBytes());
        this.generations = new Generations(pool, childRecords);
        this.arena = new RunArena(pool, generations.reclaimer(), runIds);
        generations.reclaimer().attach(arena);
        this.slots = new WorkerSlots(config.maxWorkers());
        for (int i = 0; i < statusCounts.length; i++) {
            statusCounts[i] = new LongAdder();
        }
    }

    /** Throws {@code "index closed"} if the index was closed. */
    void checkOpen() {
        if (generations.closed()) {
            throw Generations.closedException();
        }
    }

    /** The contention counters by name, as {@code IndexStats.contention} gives them (docs/BENCHMARKS.md section 2, contention counters). */
    Map<String, Long> contention() {
        Map<String, Long> m = new java.util.TreeMap<>();
        m.put("branches_unlocked", branchesUnlocked.sum());
        m.put("branches_locked", branchesLocked.sum());
        m.put("claims_lost", claimsLost.sum());
        m.put("claim_retries", generations.claimRetries());
        m.put("claim_waits", generations.claimWaits());
        m.put("push_retries", arena.links().pushRetries());
        m.put("child_table_growths", generations.rebuilds());
        m.put("run_lock_waits", arena.lockWaits.sum());
        return m;
    }

    /** Counts one event answered {@code s}. */
    void count(EventStatus s) {
        statusCounts[s.ordinal()].increment();
    }

    /** Takes over a restore's mapping: {@link #close} unmaps it once nothing reads it. */
    void adoptMapping(java.lang.foreign.Arena m) {
        mapping = m;
    }

    /** Frees everything once the readers and writers in flight have left; false if already closed. */
    boolean close() {
        if (generations.close(() -> {
            for (WorkerHoldings h : workers.values()) {
                h.names.free();
                if (h.anyTier != null) {
                    h.anyTier.names.free();
                }
            }
            arena.free();
            java.lang.foreign.Arena m = mapping;
            if (m != null) {
                m.close(); // after everything that lay in it is given back, and no reader is left
            }
        })) {
            workers.clear();
            return true;
        }
        return false;
    }
}
