/**
 * The positional prefix index on the Java heap. Its role is decided (docs/SPEC.md section 12): it is
 * the baseline the JMH suites and {@code kvprefix bench} measure the off-heap chain index against,
 * and a second implementation, sharing no index code with the chain index, that the differential
 * tests hold to the oracle beside it. So it carries every feature (tiers, explain, snapshots, salts,
 * multimodal requests, a memory budget by estimate) with the same answers, statuses and counters; it
 * differs only in how (one writer at a time, matches under a shared lock, no native kernel), and a
 * feature it could not carry would be refused with an exception that names it, never answered
 * differently. Keep it simple rather than fast: it is the baseline, not the product.
 *
 * <p>The design is the positional one the off-heap index had before it became a chain index, with
 * objects and fastutil maps: a table keyed by {@code (position, local hash)} whose {@link io.kvprefix.internal.heap.HeapEntry
 * entries} carry the chain hash (computed by kvprefix from the parent's, never taken from the
 * engine), a link to the parent, the children, and reach bits; per worker, engine hash to entry,
 * entry to the number of names it has, and the held blocks that are currently unreachable; jump
 * search with bitset inclusion and lazy chain hashing ({@link io.kvprefix.internal.heap.HeapMatcher}).
 *
 * <p>A worker's reach bit on an entry is set only while it holds that block and every ancestor, so
 * bits are prefix-closed and the jump test by set inclusion is exact without a linear fallback for
 * workers with holes. Entries nobody holds are dropped once they have no children left (children
 * keep their ancestors, so a re-stored block finds its held descendants).
 *
 * <p>One {@link java.util.concurrent.locks.StampedLock} guards everything: writes take it exclusively
 * (one writer at a time), matches take it shared and never see a half-applied event.
 */
package io.kvprefix.internal.heap;
