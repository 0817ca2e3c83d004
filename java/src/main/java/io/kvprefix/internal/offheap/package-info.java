/**
 * The off-heap chain index, kvprefix's default {@code PrefixIndex}: the Flash Indexer's positional
 * idea, stored as runs.
 *
 * <p><b>Data</b> (the records are below, under <em>Records</em>). A <em>run</em> is a stretch of up
 * to 64 consecutive blocks of one chain, stored together: its blocks' local hashes side by side, one
 * 56-byte header, and one <em>holder entry</em> per worker that holds something there, whose
 * <em>cutoff</em> says how many of the run's blocks, from its first, the worker holds together with
 * every ancestor. A block is named by its run and offset (a block id); runs hang from a block of
 * another run at any offset, and the <em>child table</em> ({@link io.kvprefix.internal.offheap.ChildTable})
 * finds the run that continues a block with a given local hash. A position and a chain hash are
 * implied by where a block sits, so two blocks are the same block exactly when their chains are the
 * same: no chain hash is computed to store or to match, and no two prefixes can collide. Per worker
 * ({@link io.kvprefix.internal.offheap.WorkerHoldings}) an off-heap
 * {@link io.kvprefix.internal.offheap.NameMap} maps engine hashes to block ids (12 bytes a name); two
 * rare side sets on the heap hold blocks held under several names and blocks held without an ancestor.
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
 * descendants are still held moves them to the worker's unreachable set, deepest first
 * ({@link io.kvprefix.internal.offheap.Removals}); storing the missing block again takes them back,
 * parents first ({@link io.kvprefix.internal.offheap.Stores}). Reach is therefore prefix-closed at
 * every moment, so a match credits each holder of a run with {@code min(cutoff, matched)} blocks
 * without looking back, exact with holes, re-stores and names reused for other blocks; and a match
 * that overlaps writes reads, per worker, a depth that held at some moment of the call or one between
 * two such depths (docs/SPEC.md section 4).
 *
 * <p><b>Rooms.</b> One {@link io.kvprefix.internal.offheap.ChainState} holds everything the index
 * holds (pool, generations, arena, slots, workers, counters, the any-tier view count). Each
 * operation is owned end to end by one room that works on that state; a room calls the tables and
 * layouts ({@code ChildTable}, {@code NameMap}, {@code Runs}, {@code RunLock}, {@code RunArena},
 * {@code RunLinks}, {@code WorkerHoldings}, {@code ChainLayout}), never the facade
 * ({@link io.kvprefix.internal.offheap.OffHeapPrefixIndex}), which only routes each call to its room
 * and brackets it with the gates (a match's walk runs in its frame: the kernel is the read room).
 * Each class opens with the locks it takes ("Locks:"); RoomRulesTest holds these rules.
 *
 * <table class="striped">
 * <caption>The table of rights: who may write what, under which gate and lock</caption>
 * <thead><tr><th>operation</th><th>room</th><th>reader gate</th><th>writer gate</th>
 *     <th>run lock</th><th>what it may write</th><th>what a concurrent match sees</th></tr></thead>
 * <tbody>
 * <tr><td>match</td><td>the facade brackets it, {@code MatchKernel} walks, {@code MatchReport} answers</td>
 *     <td>entered for the walk</td><td>no</td><td>none</td>
 *     <td>its thread's {@code ReadScratch}</td><td>(it is the reader)</td></tr>
 * <tr><td>store, names all new (most stores)</td><td>{@code Stores}</td><td>entered for the event</td>
 *     <td>entered, shared</td><td>one run at a time, parent before child; a branch inside a run
 *     takes none, a branch at a run's tail keeps that run's while it claims, links and publishes
 *     the child (the protocol of a branch, below)</td>
 *     <td>its worker's names, side sets and count; its slot's entry in each run it locks; hashes
 *     appended to a run's tail (only where no child hangs) and then the length; a new run, not in
 *     the child table until its record is published; child records (by CAS, a key's own tombstone
 *     taken again, its key unchanged); child lists (a push
 *     by CAS); a move of a locked run to a bigger record; its worker's slot (a first store)</td>
 *     <td>per worker, a depth between its depths before and after: cutoffs grow parents first; a
 *     block once the length covers it; a new run once its child record is published</td></tr>
 * <tr><td>store that moves a name</td><td>{@code Stores}; what lost its last name through
 *     {@code Removals.loseOne}</td><td>entered</td><td>entered, shared</td>
 *     <td>first pins every run on its path (one at a time), then one at a time</td>
 *     <td>as a store, and what a removal writes</td>
 *     <td>a depth between before and after at every single entry change ({@code IntermediateStatesTest})</td></tr>
 * <tr><td>removal, clear</td><td>{@code Removals}</td><td>entered</td><td>entered, shared</td>
 *     <td>one run at a time, deepest first; a dying run is unlocked before its parent is locked</td>
 *     <td>its slot's entries; its unreachable set; a run left with no holder and no child: marked
 *     dead, its child record a tombstone (CAS), unlinked under its parent's lock, its memory handed
 *     to the reclaimer</td>
 *     <td>a depth between before and after: cutoffs shrink deepest first; a dead run's memory stays
 *     valid until the reader has left</td></tr>
 * <tr><td>lower-tier store, copy, removal; a GPU event mirrored</td><td>{@code TierViews}, through
 *     {@code Stores} and {@code Removals}</td><td>entered</td><td>entered, shared</td>
 *     <td>theirs; one run at a time while a view's entries are copied</td>
 *     <td>its worker's any-tier view (a slot, entries, tagged names)</td>
 *     <td>the larger of the GPU and any-tier depths while writes run (docs/SPEC.md section 3.1)</td></tr>
 * <tr><td>remove_worker's slots</td><td>the facade, after the event</td>
 *     <td>waits for every reader to leave</td><td>left</td><td>none</td>
 *     <td>the removed workers' slots and name maps</td>
 *     <td>a slot still names its old worker for a reader that may read its old entries</td></tr>
 * <tr><td>child-table rebuild</td><td>{@code Generations.growChildren}</td><td>not entered</td>
 *     <td>exclusive</td><td>none</td><td>a new table, published by a volatile write; the old one to
 *     the reclaimer</td><td>the old table or the new one, each whole</td></tr>
 * <tr><td>run-table growth</td><td>{@code RunArena}, within a store</td><td>entered</td>
 *     <td>entered, shared</td><td>the branching run's (none when a chain starts)</td><td>a copy of
 *     the table, published by a
 *     volatile write; the old one to the reclaimer</td><td>the old table or the new one, each whole</td></tr>
 * <tr><td>reclamation</td><td>{@code Reclaimer.flush}, after an event or a rebuild</td>
 *     <td>waits for every reader that entered before it to leave</td><td>left</td><td>none</td>
 *     <td>the arena's free lists; memory back to the pool</td><td>nothing it may still be on is freed</td></tr>
 * <tr><td>snapshot</td><td>{@code ChainSnapshot.save}</td><td>entered</td>
 *     <td>exclusive while it copies</td><td>none</td><td>the file</td><td>nothing changed</td></tr>
 * <tr><td>explain</td><td>{@code ChainExplainer}</td><td>entered</td><td>exclusive</td><td>none</td>
 *     <td>nothing</td><td>nothing changed</td></tr>
 * <tr><td>stats</td><td>the facade</td><td>entered</td><td>no</td><td>none</td><td>nothing</td>
 *     <td>(it is a reader)</td></tr>
 * <tr><td>restore</td><td>{@code ChainSnapshot.restore}</td><td>no</td><td>no</td><td>none</td>
 *     <td>a fresh state nobody else has seen</td><td>(unpublished)</td></tr>
 * <tr><td>close</td><td>{@code ChainState.close}</td><td>waits for every reader to leave</td>
 *     <td>exclusive (sets {@code closed})</td><td>none</td><td>everything, freed</td>
 *     <td>"index closed"; memory freed only after it has left</td></tr>
 * </tbody>
 * </table>
 *
 * <p>Lock order, never reversed: writer gate, then reader gate (an event enters both); a parent
 * run's lock, then a child's; a run lock, then the {@code RunArena} monitor, then the
 * {@code Reclaimer} monitor; the reclaimer's flush lock, then the {@code RunArena} monitor (its
 * own monitor released first); {@code WorkerSlots}' monitor under no run lock. Nothing waits on the
 * reader gate from inside the gates (writers count as readers): slot releases, rebuilds and
 * reclaimer flushes run after the event has left them.
 *
 * <p><b>Reads</b> take no lock and allocate nothing once their per-thread buffers
 * ({@link io.kvprefix.internal.offheap.ReadScratch}) have grown: the caller's thread registers with a
 * {@link io.kvprefix.internal.offheap.ReadGate} and runs a {@link io.kvprefix.internal.offheap.MatchKernel},
 * in Java or in libkvprefix (one downcall that also hashes a token request's blocks as far as the
 * walk needs them). A run's hashes below its published length never change, lengths and entries are
 * published with release stores and read with acquire loads, and an entry is one 64-bit word.
 *
 * <p><b>Writes</b> ({@link io.kvprefix.internal.offheap.Stores}, {@link io.kvprefix.internal.offheap.Removals})
 * go through the shared front door ({@code io.kvprefix.internal.event}). Writers of different
 * workers run side by side: a writer changes a run only under the run's own lock, claims child
 * records by CAS, and touches the rest of a worker's state only on that worker's thread. A store
 * reserves child records, run memory and name-map room before it changes anything; if memory still
 * runs out half-way it undoes what it did, so an event applies whole or not at all. A store that
 * moves a name from one block to another pins the runs on its path, drops what lost its last name
 * deepest first, then adds what gained its first, parents first, so every intermediate state gives a
 * depth between the worker's depths before and after (IntermediateStatesTest checks every one). Apart
 * from the runs two workers share, writers share no cache line they write on every event: the gates'
 * counters are striped, the held-pair count is a {@code LongAdder}, a thread keeps a few child
 * records reserved between its stores ({@code ChildTable.reserve}), and the arena's headroom and the
 * reclaimer's backlog are read without their locks. A run that every worker's stores branch off (a
 * shared first block) is not locked by them: a branch inside a run takes no lock (below).
 *
 * <p><b>The protocol of a branch</b> ({@code Stores.branch}). On the conversation stream 94% of the
 * stores hang from one shared first block (benchmarks/RESULTS.md section 1.4); they used to take that
 * run's lock, so one run held every writer in line. A branch now finds or makes its child run
 * without the parent's lock wherever no store can append to the parent at that offset: at an offset
 * inside the run's published length (which only grows), or in a full run. The child key is the
 * global child table's {@code (parent block, local hash)}, claimed by CAS as SGLang SMG's per-run
 * child table claims its {@code (offset, head hash)} key ({@code src/chain_index.rs} at 19754b06;
 * both peers as the team's peer notes give them), but with no
 * per-run table to grow, so no growth locks the run: the one table grows with every writer held
 * out. A new run is made and filled before its claim (like a new chain's first run), then linked
 * into its parent's child list by a CAS on the list's head ({@code RunLinks}), then published; a
 * writer that loses the claim recycles its own, never reachable, and enters the winner's. Only a
 * branch at the run's tail keeps the run's lock, which stops a store from appending the same block
 * there meanwhile. Which rule closes which race, and its model-checked test:
 *
 * <table class="striped">
 * <caption>The protocol of a branch: operation, lock or gate, what it may write, what a concurrent reader sees</caption>
 * <thead><tr><th>operation</th><th>lock or gate</th><th>what it may write</th>
 *     <th>what a concurrent reader (match) sees</th><th>race it closes</th></tr></thead>
 * <tbody>
 * <tr><td>find the child (a branch inside the run)</td><td>both gates entered, no run lock</td>
 *     <td>nothing</td><td>nothing changed</td><td>none: hashes below the length never change, and a
 *     record the run moved out of stays valid until the gate drains</td></tr>
 * <tr><td>make and fill the new run</td><td>the {@code RunArena} monitor</td><td>a fresh record,
 *     its creation pin</td><td>nothing: it is in no table a reader walks</td><td>the run cannot die
 *     before it is entered (the pin)</td></tr>
 * <tr><td>claim the child record</td><td>CAS on its run field (empty to being written)</td>
 *     <td>the record's key</td><td>the record skipped (not yet a child)</td><td>two writers, one
 *     key: the CAS picks one, the other waits for its publication and enters its run
 *     ({@code OffHeapConcurrencyTest})</td></tr>
 * <tr><td>raise the parent's attach bound</td><td>CAS loop on the bound (heap)</td><td>the bound</td>
 *     <td>readers do not use it</td><td>two branches' raises: the deeper wins
 *     ({@code RunLinksRaceTest}, {@code RunLinks.Rule.CAS_BOUND})</td></tr>
 * <tr><td>push onto the child list</td><td>CAS on the list's head (heap), then the old head's back link</td>
 *     <td>the new run's links, the head, the old head's back link</td><td>readers do not use it</td>
 *     <td>two pushes: neither is lost ({@code RunLinks.Rule.CAS_HEAD})</td></tr>
 * <tr><td>publish the child record</td><td>release store of its run field</td><td>the run field</td>
 *     <td>the new run, whole (its hashes, length and pin entry were written before)</td><td>a
 *     reader or writer never finds a run that is not yet in its parent's list (so reach and death see it)</td></tr>
 * <tr><td>unlink a dying child</td><td>the parent's run lock</td><td>its siblings' links, the head</td>
 *     <td>readers do not use it</td><td>a push above the dying head: the unlink waits for the push's
 *     back link ({@code RunLinks.Rule.WAIT_FOR_PUSH}); a push onto the next run: its back link is
 *     cleared by CAS, not over the push's ({@code RunLinks.Rule.CAS_BACK_LINK})</td></tr>
 * <tr><td>a run's death test</td><td>its run lock</td><td>the dead mark</td><td>a live run, or a
 *     dead one whose memory stays valid</td><td>a branch off a run that dies: impossible, the
 *     branching worker holds (or pins) the parent block, so the run has a holder</td></tr>
 * </tbody>
 * </table>
 *
 * <p>A child run is never unlinked while its own push is in progress (its creator pins it), and a
 * push holds no lock while an unlink waits for it, so the wait always ends. Dynamo's concurrent radix
 * tree takes the other road to the same end (child insertion under a shared gate with a version
 * check; the README of its {@code concurrent_radix_tree_compressed} indexer at 3a7f69ff); a global
 * table keyed by parent block needs neither a version nor a per-run gate. The children count in
 * the run header is written only by a snapshot (the list's length): in memory the list is the truth.
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
 * lists, each name map's segments as they lie, the side sets. A restore builds a fresh state that
 * nobody sees until it is complete: one slab for all runs, each run copied under its own id in one
 * bulk copy, the run table and the child table laid out on the heap and copied in at once, each
 * name-map segment copied whole; block ids stay what they were, so nothing is re-inserted block by block.
 * In place (the default on Linux, docs/SNAPSHOT.md section 7) the file is mapped copy-on-write and
 * the name-map segments and full runs are not copied at all: their memory is the mapping's pages,
 * charged to the budget as {@code MemoryPool.mapped} blocks (freeing one gives the budget back and
 * never calls {@code free}); {@code ChainState} owns the mapping and unmaps it last on close, after
 * every reader has left, so a mapped record is as safe to read, recycle and write as a slab's.
 *
 * <p><b>Records</b> ({@link io.kvprefix.internal.offheap.ChainLayout} has every offset; the native
 * kernel's {@code include/kvprefix.h} states the same numbers, and a test compares them). Block
 * {@code i} of a run sits at position {@code start + i} and continues block {@code i - 1} (block 0
 * continues the run's parent block, or starts a chain); a block id is {@code run << 6 | offset}.
 *
 * <pre>
 * run record: a 56-byte header, then capacity x 8 bytes of local hashes (capacity 4, 8, 16, 32 or 64)
 *  0 i32 length      blocks stored; only grows; release store after the hashes   | read by matches
 *  4 i32 entries     holder positions in use; release store after the entry      | read by matches
 *  8 u64 chunks      address of the first entry chunk (0 = none yet)             | read by matches
 * 16 u64 entry 0     holder position 0 (inline)                                  | read by matches
 * 24 u64 entry 1     holder position 1 (inline)                                  | read by matches
 * 32 i32 start       position of block 0
 * 36 i32 parent      block id + 1 of the block this run continues (0 = none)
 * 40 i32 lock        writers' lock (RunLock): bit 0 held, bit 1 dead (being recycled), bit 2 moved
 * 44 i32 capacity    blocks this record has room for
 * 48 i32 children    runs hanging from this run, as a snapshot saved it (the list is in RunLinks)
 * 52 i32 holders     entries that are not vacant (writers only)
 * 56 u64 local[capacity]   immutable once covered by length
 *
 * holder entry (u64): one worker's holding in one run, written only under the run's lock
 *  bits  0..31  worker slot + 1 (0 = vacant position)
 *  bits 32..39  cutoff: the worker holds blocks [0, cutoff) of the run and every ancestor of them
 *  bits 40..47  unreachable: blocks of this run the worker holds without holding an ancestor
 *  bits 48..55  pins: a store in progress needs the run to stay alive
 *
 * entry chunk: holder positions 2, 3, ... of a run (8, 16, 32, then 64 positions per chunk)
 *  0 u64 next        address of the next chunk (0 = none)
 *  8 i32 capacity    positions in this chunk
 * 16 u64 entry[capacity]
 *
 * child table record (open addressing over a power-of-two number of records)
 *  0 u64 local       local hash of the child run's block 0
 *  8 i32 parent      block id + 1 the child run continues (0 = the run starts a chain)
 * 12 i32 run         run id + 1 of the child; 0 empty, -1 being written, -2 removed (a tombstone; its key's next claim takes it)
 * </pre>
 *
 * <p>Publication: a writer fills a run's hashes, then stores its length with release semantics; a
 * new entry is written before the entry count (release); a child record's key before its run field
 * (release). Readers load length, count and run field with acquire semantics and only then read
 * what they cover. An entry is one 64-bit word, so a reader sees it whole.
 *
 * <p>The anchor for stating the rights this way is Dynamo's arena index (ai-dynamo/dynamo,
 * {@code lib/kv-router/src/indexer/arena_c/mod.rs} at 0091b9d0, whose module doc has its table of
 * operations, gates and locks, and whose files each open with what they lock); the design here is
 * kvprefix's own.
 */
package io.kvprefix.internal.offheap;
