package io.kvprefix.internal.offheap;

import io.kvprefix.internal.ffi.Libc;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Off-heap memory of one index, with its budget.
 *
 * <p>Blocks come from the C library's {@code calloc} and go back with {@code free}, both called
 * through FFM (no kvprefix native code needed): fresh pages arrive zeroed, freeing costs
 * microseconds, and the index reads and writes them through global-scope segments without a
 * liveness check per access. Safety does not come from the segment but from the index: a block is
 * freed only after every reader that could see it has left ({@link ReadGate}) and while every
 * writer is held out. If the C library cannot be bound (native access denied), each block gets its
 * own shared {@link Arena} instead: equally correct, with a liveness check on every access and a
 * slow (thread handshake) free.
 *
 * <p>The budget counts every byte held, including the short overlap of an old and a new table
 * during a rebuild, so the index never holds more than its budget.
 *
 * <p>Thread-safety: {@link #allocate} and {@link Block#free()} may be called from any thread; the
 * byte count is atomic.
 */
final class MemoryPool {
    private static final long ALIGN = TableLayout.SEGMENT_ALIGNMENT;

    /** Blocks at least this large are 2 MiB aligned and advised to use transparent huge pages. */
    static final long HUGE_THRESHOLD = 8L << 20;

    private static final long HUGE_PAGE = 2L << 20;
    /** Blocks at least this large are touched (zeroed) when allocated, not on first use. */
    static final long PREFAULT_THRESHOLD = 1L << 20;
    /** {@code -Dkvprefix.hugepages=false} turns the huge page hint off. */
    private static final boolean HUGE_PAGES = !"false".equals(System.getProperty("kvprefix.hugepages"));

    private final long budget;
    private final boolean libc;
    private final AtomicLong used = new AtomicLong();
    private final AtomicLong peak = new AtomicLong();

    MemoryPool(long budgetBytes) {
        this.budget = budgetBytes;
        this.libc = Libc.available();
    }

    /** One allocation: its segment, and what frees it. */
    final class Block {
        private final Arena arena; // fallback backend
        private final long base; // libc backend: the pointer calloc returned
        final MemorySegment segment;
        private final long size;
        private boolean freed;

        private Block(Arena arena, long base, MemorySegment segment, long size) {
            this.arena = arena;
            this.base = base;
            this.segment = segment;
            this.size = size;
        }

        /** Releases the memory; idempotent. The caller guarantees nobody reads it any more. */
        synchronized void free() {
            if (freed) {
                return;
            }
            freed = true;
            if (arena != null) {
                arena.close();
            } else {
                Libc.free(base);
            }
            used.addAndGet(-size);
        }

        long bytes() {
            return size;
        }
    }

    /** A zeroed, 64-byte aligned block of {@code bytes}, or null if the budget does not allow it. */
    Block allocate(long bytes) {
        long size = Math.max(bytes, 64);
        while (true) {
            long u = used.get();
            if (u + size > budget || u + size < 0) {
                return null;
            }
            if (used.compareAndSet(u, u + size)) {
                peak.accumulateAndGet(u + size, Math::max);
                break;
            }
        }
        try {
            if (libc) {
                // Large blocks (random probes over megabytes) get 2 MiB alignment and a transparent
                // huge page hint, so a probe rarely misses the TLB as well as the cache.
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
                MemorySegment seg = Libc.segment(aligned, size);
                if (size >= PREFAULT_THRESHOLD) {
                    // calloc's fresh pages are mapped on first touch; take those faults (and, with huge
                    // pages, the zeroing of 2 MiB at a time) now rather than in the middle of a store or a match.
                    seg.fill((byte) 0);
                }
                return new Block(null, p, seg, size);
            }
            Arena arena = Arena.ofShared();
            try {
                return new Block(arena, 0, arena.allocate(size, ALIGN), size);
            } catch (OutOfMemoryError | RuntimeException e) {
                arena.close();
                throw e;
            }
        } catch (OutOfMemoryError | RuntimeException e) {
            used.addAndGet(-size);
            return null;
        }
    }

    /** True if blocks come from libc (fast path), false with the shared-arena fallback. */
    boolean usesLibc() {
        return libc;
    }

    /** True if {@code bytes} more could be allocated now. */
    boolean fits(long bytes) {
        long u = used.get();
        return u + bytes <= budget && u + bytes >= 0;
    }

    long used() {
        return used.get();
    }

    long peak() {
        return peak.get();
    }

    long budget() {
        return budget;
    }
}
