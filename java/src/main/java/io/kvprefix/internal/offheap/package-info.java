/**
 * The off-heap chain index, kvprefix's default {@code PrefixIndex}: the Flash Indexer's positional
 * idea, stored as runs.
 *
 * <p><b>Data</b> ({@link io.kvprefix.internal.offheap.ChainLayout} has every record). A <em>run</em>
 * is a stretch of up to 64 consecutive blocks of one chain, stored together: its blocks' local
 * hashes side by side, one 56-byte header, and one <em>holder entry</em> per worker that holds
 * something there, whose <em>cutoff</em> says how many of the run's blocks, from its first, the
 * worker holds together with every ancestor. A block is named by its run and offset (a block id);
 * runs hang from a block of another run at any offset, and the <em>child table</em>
 * ({@link io.kvprefix.internal.offheap.ChildTable}) finds the run that continues a block with a
 * given local hash. A position and a chain hash are implied by where a block sits, so two blocks
 * are the same block exactly when their chains are the same: no chain hash is computed to store or
 * to match, and no two prefixes can collide. Per worker ({@link io.kvprefix.internal.offheap.WorkerHoldings})
 * an off-heap {@link io.kvprefix.internal.offheap.NameMap} maps engine hashes to block ids (12 bytes
 * a name); two rare side sets on the heap hold blocks held under several names and blocks held
 * without an ancestor.
 *
 * <p><b>Why runs.</b> An engine stores a request's new blocks as one chain, mostly continuing what
 * it stored for the same conversation before: on the Mooncake conversation stream 65% of stored
 * blocks extend the worker's own run. Such a store is one lock, a few contiguous stores and one
 * entry write, where a positional table pays a random cache miss and two locked instructions per
 * block; a match compares a run's hashes one after another in memory and probes the child table once
 * per run, not once per jump. Memory follows: about 8 bytes a block in its run plus 12-30 bytes a name.
 *
 * <p><b>Reach.</b> A worker's cutoff in a run covers a block only while the worker holds that block
 * and every ancestor (the invariant is stated in {@code WorkerHoldings}). Removing a block whose
 * descendants are still held moves them to the worker's unreachable set, deepest first; storing the
 * missing block again takes them back, parents first ({@link io.kvprefix.internal.offheap.Reach}).
 * Reach is therefore prefix-closed at every moment, so a match credits each holder of a run with
 * {@code min(cutoff, matched)} blocks without looking back, exact with holes, re-stores and names
 * reused for other blocks; and a match that overlaps writes reads, per worker, a depth that held at
 * some moment of the call or one between two such depths (docs/SPEC.md section 4).
 *
 * <p><b>Reads</b> take no lock and allocate nothing once their per-thread buffers
 * ({@link io.kvprefix.internal.offheap.ReadScratch}) have grown: the caller's thread registers with a
 * {@link io.kvprefix.internal.offheap.ReadGate} and runs a {@link io.kvprefix.internal.offheap.MatchKernel},
 * in Java or in libkvprefix (one downcall that also hashes a token request's blocks as far as the
 * walk needs them). A run's hashes below its published length never change, lengths and entries are
 * published with release stores and read with acquire loads, and an entry is one 64-bit word.
 *
 * <p><b>Writes</b> ({@link io.kvprefix.internal.offheap.ChainWriter}) go through the shared front
 * door ({@code io.kvprefix.internal.event}). Writers of different workers run side by side: a
 * writer changes a run only under the run's own lock (never nested but parent, then child), claims
 * child records by CAS, and touches the rest of a worker's state only on that worker's thread. A
 * store reserves child records, run memory and name-map room before it changes anything; if memory
 * still runs out half-way it undoes what it did, so an event applies whole or not at all. A store
 * that moves a name from one block to another pins the runs on its path, drops what lost its last
 * name deepest first, then adds what gained its first, parents first, so every intermediate state
 * gives a depth between the worker's depths before and after (IntermediateStatesTest checks every one).
 * Apart from the runs two workers share, writers share no cache line they write on every event: the
 * gates' counters are striped, the held-pair count is a {@code LongAdder}, a thread keeps a few child
 * records reserved between its stores ({@code ChildTable.reserve}), and the arena's headroom and the
 * reclaimer's backlog are read without their locks. A run that every worker's stores branch off (a
 * shared first block) is the one hot spot left: its lock is held while a branch is created
 * (benchmarks/RESULTS.md section 1.4).
 *
 * <p><b>Growth and reclamation.</b> A run that outgrows its record moves to a bigger one (its id,
 * and so every block id, stays); a run nobody holds anything in, with no run hanging from it, dies:
 * out of the child table, unlinked from its parent, which may die in turn. The child table is
 * rebuilt with every writer held out ({@link io.kvprefix.internal.offheap.WriterGate}, striped, so
 * writers do not share a lock word per event). Whatever a reader or writer may still be on (a dead
 * run, a record a run moved out of, an old table) goes to the {@link io.kvprefix.internal.offheap.Reclaimer},
 * which frees it after the reader gate has drained: a two-phase, striped reader count in the style of
 * sleepable RCU, which writers enter too for the length of an event. Every byte comes from a
 * {@link io.kvprefix.internal.offheap.MemoryPool} with the configured budget, from libc's
 * {@code calloc}/{@code free}; runs are carved from slabs ({@link io.kvprefix.internal.offheap.RunArena}).
 *
 * <p><b>Under a budget</b> the index fills it almost to the last byte before it refuses a store, and a
 * refusal costs about what a store does (no scan): a name map grows one segment at a time (at most
 * 96 KiB, {@link io.kvprefix.internal.offheap.NameMap}); a slab that does not fit is taken smaller; the
 * run arena counts the records stores gave back as room; and the pool keeps the child table's size
 * back so that a rebuild dropping tombstones always fits (a full budget otherwise refused every new
 * branch of an index whose evicted runs left tombstones), rebuilding fuller when nothing more fits. A
 * store still refused half-way undoes what it did.
 *
 * <p><b>Snapshots</b> ({@link io.kvprefix.internal.offheap.ChainSnapshot}, docs/SNAPSHOT.md). A
 * snapshot holds every writer out and enters the reader gate, so nothing changes or is freed while
 * it copies: runs in id order (header and hashes, then the chunk entries flattened), the child
 * lists, each name map's segments as they lie, the side sets. A restore builds a fresh index that nobody sees
 * until it is complete: one slab for all runs, each run copied under its own id in one bulk copy,
 * the run table and the child table laid out on the heap and copied in at once, each name-map
 * segment copied whole; block ids stay what they were, so nothing is re-inserted block by block.
 */
package io.kvprefix.internal.offheap;
