/**
 * The off-heap positional prefix index, kvprefix's default {@code PrefixIndex}, one room per concern.
 *
 * <p><b>Data.</b> A positional table in off-heap memory ({@link io.kvprefix.internal.offheap.PositionalTable},
 * records in {@link io.kvprefix.internal.offheap.TableLayout}): open addressing keyed by
 * {@code (position, local hash)}, each entry holding the chain hash kvprefix computed from the
 * parent's (never the engine's hash), a link to the parent entry, child links, and an inline bitset
 * over dense worker slots ({@link io.kvprefix.internal.offheap.WorkerSlots}). Per worker
 * ({@link io.kvprefix.internal.offheap.WorkerHoldings}), an off-heap
 * {@link io.kvprefix.internal.offheap.NameMap} from engine hash to entry and two rare side sets on the
 * heap: entries held under more than one name, and held entries that are currently unreachable.
 *
 * <p><b>Reach bits.</b> A worker's bit on an entry is set only while the worker holds that block
 * and every ancestor (the invariant is stated, and kept, in {@code WorkerHoldings}). Removing a block
 * that has held descendants clears their bits deepest first and keeps them as held-but-unreachable;
 * storing the missing block again sets them back, parents first. Every worker's bits are therefore
 * prefix-closed at every moment, so jump search by set inclusion ({@code active ⊆ set(next)}) is
 * exact, also for workers with holes, and a match overlapping writes reads, per worker, a depth that
 * held at some moment of the call or one between two such depths (docs/SPEC.md section 4).
 *
 * <p><b>Reads.</b> A match takes no lock and allocates nothing once its per-thread buffers
 * ({@link io.kvprefix.internal.offheap.ReadScratch}) have grown: the caller's thread registers with a
 * {@link io.kvprefix.internal.offheap.ReadGate}, reads the current table generation with acquire
 * loads and runs a {@link io.kvprefix.internal.offheap.MatchKernel}, in Java or in libkvprefix (one
 * downcall that also hashes a token request's blocks as far as the search needs them), chosen when
 * the index is built. Chain hashes are computed only where a probed key exists.
 *
 * <p><b>Writes.</b> Events go through the shared front door ({@code io.kvprefix.internal.event}).
 * Writes of different worker ids may run concurrently: they share a read-write lock in shared mode,
 * claim empty slots by CAS, push child links by CAS and change bits with atomic or / and-not. Each
 * worker's holdings are touched only by the thread applying its events. A store reserves table slots
 * and name-map room before it changes anything, so it applies whole or not at all; it then records
 * its name changes and changes bits in two monotone phases (blocks that lost their last name first,
 * deepest first; then blocks that gained their first, parents first), so every intermediate state
 * gives each worker a depth between its depths before and after the event (IntermediateStatesTest
 * checks every one).
 *
 * <p><b>Growth and reclamation</b> ({@link io.kvprefix.internal.offheap.Generations}). When a store's
 * reservation would pass the table's load limit, or a new worker slot needs a wider bitset, the
 * writer takes the lock exclusively and rebuilds: live entries (held by some worker, or an ancestor
 * of one) are copied into a new generation sized for them, entries nobody holds are dropped, slot
 * numbers in the workers' holdings are renumbered, the new generation is published, and the old one
 * is freed after every reader that could be on it has left. A rebuild also shrinks the table after
 * large removals. The reader gate is a two-phase, striped reader count in the style of sleepable
 * RCU: a reader increments its stripe's counter (a full fence) and re-reads the epoch; the writer
 * stores a new epoch (a full fence) and waits for the old epoch's counters to drain. Either the writer
 * sees the reader and waits for it, or the reader sees the new epoch and re-enters under it before
 * reading anything. Every byte comes from a {@link io.kvprefix.internal.offheap.MemoryPool} with the
 * configured budget, from libc's {@code calloc}/{@code free} (or arenas when native access is denied);
 * a store that would need more answers {@code capacity_exceeded} and changes nothing.
 */
package io.kvprefix.internal.offheap;
