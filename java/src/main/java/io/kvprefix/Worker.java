package io.kvprefix;

/**
 * A worker: one data-parallel rank of one inference engine, {@code (workerId: u64, dpRank: u32)}.
 *
 * <p>Both numbers are unsigned: a Java {@code long} / {@code int} carries their bits, and every
 * ordering of workers ({@link #compareTo}) compares them as unsigned integers, worker id first.
 * Every dp rank is its own worker (docs/SPEC.md section 1).
 *
 * <p>Thread-safety: immutable.
 *
 * @param workerId the engine's id, unsigned 64-bit
 * @param dpRank the data-parallel rank, unsigned 32-bit (0 when the engine has no data parallelism)
 */
public record Worker(long workerId, int dpRank) implements Comparable<Worker> {

    /** Worker {@code workerId}, dp rank 0. */
    public static Worker of(long workerId) {
        return new Worker(workerId, 0);
    }

    /** Worker {@code workerId}, dp rank {@code dpRank}. */
    public static Worker of(long workerId, int dpRank) {
        return new Worker(workerId, dpRank);
    }

    /** Orders by worker id, then dp rank, both as unsigned integers. */
    @Override
    public int compareTo(Worker o) {
        int c = Long.compareUnsigned(workerId, o.workerId);
        return c != 0 ? c : Integer.compareUnsigned(dpRank, o.dpRank);
    }

    /** {@code worker/rank} in unsigned decimals, for example {@code 18446744073709551615/0}. */
    @Override
    public String toString() {
        return Long.toUnsignedString(workerId) + "/" + Integer.toUnsignedString(dpRank);
    }
}
