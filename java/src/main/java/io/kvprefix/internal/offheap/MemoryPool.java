package io.kvprefix.internal.offheap;

import io.kvprefix.internal.ffi.Libc;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Off-heap memory of one index, with its budget. Blocks come from the C library's {@code calloc} and
 * go back with {@code free}, both through FFM: fresh pages arrive zeroed and freeing costs
 * microseconds. Safety does not come from a segment's lifetime but from the index: a block is freed
 * only after every reader that could see it has left ({@link ReadGate}). The budget counts every
 * byte held, including an old and a new table held side by side during a rebuild, so the index
 * never holds more than its budget.
 *
 * <p>Locks: none; the byte count is atomic.
 *
 * <p>Thread-safety: {@link #allocate} and {@link Block#free()} may be called from any thread; the
 * byte count is atomic.
 */
final class MemoryPool {
    /** Blocks at least this large are 2 MiB aligned and advised to use transparent huge pages. */
    static final long HUGE_THRESHOLD = 8L << 20;

    private static final long HUGE_PAGE = 2L << 20;
    private static final long ALIGN = 64;
    /** Blocks at least this large are touched (zeroed) when allocated, not on first use. */
    static final long PREFAULT_THRESHOLD = 1L << 20;
    /** {@code -Dkvprefix.hugepages=false} turns the huge page hint off. */
    private static final boolean HUGE_PAGES = !"false".equals(System.getProperty("kvprefix.hugepages"));

    private final long budget;
    private final AtomicLong used = new AtomicLong();
    /**
     * Bytes only {@link #allocateReserved} may use: as much as the child table takes (at most a
     * quarter of the budget), so that a rebuild that drops its tombstones always fits, however full
     * the budget: without it, an index full of evicted runs' tombstones refused every new branch.
     */
    private volatile long reserved;

    MemoryPool(long budgetBytes) {
        if (!Libc.available()) {
            throw new IllegalStateException("the off-heap index needs native access: start the JVM with "
                    + "--enable-native-access=ALL-UNNAMED (class path) or --enable-native-access=io.kvprefix");
        }
        this.budget = budgetBytes;
    }

    /** One allocation: its address and size; or pages of a restore's mapped snapshot ({@link #mapped}). */
    final class Block {
        private final long base; // what calloc returned; 0 for mapped pages (the mapping's owner unmaps them)
        final long address; // 64-byte (2 MiB for huge blocks) aligned
        private final long size;
        private boolean freed;

        private Block(long base, long address, long size) {
            this.base = base;
            this.address = address;
            this.size = size;
        }

        /** Releases the memory; idempotent. The caller guarantees nobody reads it any more. */
        synchronized void free() {
            if (freed) {
                return;
            }
            freed = true;
            if (base != 0) {
                Libc.free(base);
            }
            used.addAndGet(-size);
        }

        long bytes() {
            return size;
        }
    }

    /** A zeroed, aligned block of {@code bytes}, or null if the budget less the reserve (or the C library) does not allow it. */
    Block allocate(long bytes) {
        return allocate(bytes, budget - reserved, true);
    }

    /**
     * Like {@link #allocate(long)}; {@code prefault} false skips touching a large block up front, for a
     * caller that writes all of it at once anyway (a restore's bulk copy takes the faults itself).
     */
    Block allocate(long bytes, boolean prefault) {
        return allocate(bytes, budget - reserved, prefault);
    }

    /**
     * {@code bytes} at {@code address} in a restore's copy-on-write mapping of its snapshot, charged to
     * the budget like an allocation (a write makes them private pages of this process), or null if the
     * budget does not allow it. Freeing gives the budget back; the pages stay mapped until the index
     * closes (docs/SNAPSHOT.md section 7).
     */
    Block mapped(long address, long bytes) {
        return charge(bytes, budget - reserved) ? new Block(0, address, bytes) : null;
    }

    /** As {@link #allocate}, but it may use the reserve: for the child table's rebuild. */
    Block allocateReserved(long bytes) {
        return allocate(bytes, budget, true);
    }

    /** Keeps {@code bytes} of the budget back for {@link #allocateReserved}. */
    void reserve(long bytes) {
        reserved = Math.max(0, Math.min(bytes, budget / 4));
    }

    private Block allocate(long bytes, long limit, boolean prefault) {
        long size = Math.max(bytes, 64);
        if (!charge(size, limit)) {
            return null;
        }
        // Large blocks (random probes over megabytes) get 2 MiB alignment and a transparent huge page
        // hint, so a probe rarely misses the TLB as well as the cache.
        boolean huge = size >= HUGE_THRESHOLD && Libc.canAdviseHugePages() && HUGE_PAGES;
        long align = huge ? HUGE_PAGE : ALIGN;
        long p = Libc.calloc(size + align);
        if (p == 0) {
            used.addAndGet(-size);
            return null; // out of native memory: the caller answers capacity_exceeded
        }
        long aligned = (p + align - 1) & -align;
        if (huge) {
            Libc.adviseHugePages(aligned, size & -HUGE_PAGE);
        }
        if (prefault && size >= PREFAULT_THRESHOLD) {
            // calloc's fresh pages are mapped on first touch; take those faults (and, with huge pages,
            // the zeroing of 2 MiB at a time) now rather than in the middle of a store or a match.
            Mem.zero(aligned, size);
        }
        return new Block(p, aligned, size);
    }

    private boolean charge(long size, long limit) {
        while (true) {
            long u = used.get();
            if (u + size > limit || u + size < 0) {
                return false;
            }
            if (used.compareAndSet(u, u + size)) {
                return true;
            }
        }
    }

    /** True if {@code bytes} more could be allocated now. */
    boolean fits(long bytes) {
        long u = used.get();
        return u + bytes <= budget - reserved && u + bytes >= 0;
    }

    long used() {
        return used.get();
    }

    long budget() {
        return budget;
    }
}
