package io.kvprefix.internal.offheap;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Off-heap memory of one index, with its budget. Every block has its own shared {@link Arena}, so
 * it can be freed on its own; a freed block's segment fails any later access with an exception
 * instead of reading freed memory (the index frees a block only after every reader that could see
 * it has left, see {@link ReadGate}). Memory comes zeroed.
 *
 * <p>The budget counts every byte held, including the short overlap of an old and a new table
 * during a rebuild, so the index never holds more than its budget.
 *
 * <p>Thread-safety: {@link #allocate} and {@link Block#free()} may be called from any thread; the
 * byte count is atomic.
 */
final class MemoryPool {
    private final long budget;
    private final AtomicLong used = new AtomicLong();
    private final AtomicLong peak = new AtomicLong();

    MemoryPool(long budgetBytes) {
        this.budget = budgetBytes;
    }

    /** One allocation: its segment and the arena that frees it. */
    final class Block {
        private final Arena arena;
        final MemorySegment segment;
        private boolean freed;

        private Block(Arena arena, MemorySegment segment) {
            this.arena = arena;
            this.segment = segment;
        }

        /** Releases the memory; idempotent. The caller guarantees nobody reads it any more. */
        synchronized void free() {
            if (!freed) {
                freed = true;
                arena.close();
                used.addAndGet(-segment.byteSize());
            }
        }

        long bytes() {
            return segment.byteSize();
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
        Arena arena = Arena.ofShared();
        try {
            return new Block(arena, arena.allocate(size, TableLayout.SEGMENT_ALIGNMENT));
        } catch (OutOfMemoryError | RuntimeException e) {
            arena.close();
            used.addAndGet(-size);
            return null;
        }
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
