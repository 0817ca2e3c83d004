/**
 * Index snapshots: one file holding an index's whole state, written while matches go on and
 * restored by mapping the file and copying it in bulk (the format is docs/SNAPSHOT.md; every number
 * of it is in {@link io.kvprefix.internal.snapshot.SnapshotFormat}).
 *
 * <p><b>One format for both indexes.</b> The file holds the state in the off-heap chain index's
 * terms: its runs (header, child list, local hashes, holder entries), each worker's name map
 * (engine hash to block id) as its segments lie in memory, each with a small header
 * ({@link io.kvprefix.internal.snapshot.NameSegments} checks them), the two side sets, the worker
 * slots, the event counters and the caller's metadata. The chain index writes and restores it with
 * one bulk copy per run record and per name-map segment, rebuilds each map's directory from the
 * segments' prefixes and its child table with one insert per run; the heap index
 * cuts its tree of entries into runs to write it and builds its entries run by run to restore it.
 * Either restores what either wrote.
 *
 * <p><b>Safe writes.</b> {@link io.kvprefix.internal.snapshot.SnapshotWriter} streams the sections
 * into {@code FILE.tmp} (locked), computing a CRC32C per section on the way, writes the header and
 * section table last, forces the file, renames it over {@code FILE} atomically and forces the
 * directory: whatever moment a crash comes, {@code FILE} is the old snapshot or the new one, whole.
 *
 * <p><b>Refusing bad files.</b> {@link io.kvprefix.internal.snapshot.SnapshotReader} checks the
 * magic, version, length, header CRC, configuration, section table and every section's CRC before
 * anything is built, so every byte of the file is checked; {@link io.kvprefix.internal.snapshot.ChainImage}
 * then checks every id, length, count and link the restore will use. A restore builds a new index
 * and gives it out only when it is complete; on any error it frees what it built and throws one
 * {@link io.kvprefix.SnapshotException} naming the file and the reason.
 */
package io.kvprefix.internal.snapshot;
