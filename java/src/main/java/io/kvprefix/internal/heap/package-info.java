/**
 * The positional prefix index on the Java heap: the baseline the off-heap index is measured
 * against, and a second opinion in the differential tests.
 *
 * <p>Same design as the off-heap index, with objects and fastutil maps instead of memory segments:
 * a table keyed by {@code (position, local hash)} whose {@link io.kvprefix.internal.heap.HeapEntry
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
