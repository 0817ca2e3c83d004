package io.kvprefix.cli;

import java.lang.management.ManagementFactory;
import java.util.Locale;

/**
 * Predicts at the start of a run whether it fits in memory, so that a run too large for the JVM is
 * refused in one line before any work rather than dying minutes later with an
 * {@link OutOfMemoryError}. The figures per unit are upper bounds measured with
 * {@code kvprefix footprint} and with {@code -Xlog:gc} on the built-in workload (docs/OPERATING.md
 * section 7).
 *
 * <p>Thread-safety: stateless.
 */
final class Memory {
    /** Java heap per stored (worker, block) pair of the heap index (footprint measures 116 to 172). */
    static final long HEAP_INDEX_BYTES_PER_PAIR = 180;
    /** Native memory per stored (worker, block) pair of the off-heap index (31 for 64-block chains, 148 for 1-block ones). */
    static final long OFF_HEAP_BYTES_PER_PAIR = 160;
    /**
     * Java heap the heap index sets aside up front per expected block ({@code IndexConfig.expectedBlocks}):
     * its hash table, a power of two at most 2.67 times the hint, of 12-byte entries.
     */
    static final long HEAP_INDEX_PRESIZE_BYTES_PER_BLOCK = 32;
    /** Native memory the off-heap index sets aside up front per expected block: its run tables, a run per 32. */
    static final long OFF_HEAP_PRESIZE_BYTES_PER_BLOCK = 4;
    /**
     * Java heap per block of a workload that is simulated as it goes ({@code gen-ops}, {@code simulate},
     * {@code demo}): the trace and the mock engines; 57 measured on 80,000 built-in requests.
     */
    static final long HEAP_BYTES_PER_BLOCK_STREAMED = 80;
    /**
     * Java heap per block of a workload loaded whole for replay ({@code bench}, {@code sweep}): also
     * every event and match; 115 measured on 80,000 built-in requests.
     */
    static final long HEAP_BYTES_PER_BLOCK_LOADED = 160;
    /** Java heap per byte of an op-stream file loaded whole for replay (its events and matches as arrays). */
    static final long HEAP_BYTES_PER_OPS_BYTE = 2;

    private Memory() {}

    /**
     * Throws a usage error if {@code heapBytes} of Java heap and {@code nativeBytes} of native memory
     * are more than this JVM and this machine have; {@code what} names the cause ("--blocks 100000000").
     */
    static void check(String what, double heapBytes, double nativeBytes) {
        long maxHeap = Runtime.getRuntime().maxMemory();
        long machine = machineBytes();
        if (machine > 0 && heapBytes + nativeBytes > machine) {
            throw new IllegalArgumentException(what + " needs about " + gib(heapBytes + nativeBytes)
                    + " of memory, more than this machine's " + gib(machine) + ": make the run smaller");
        }
        if (heapBytes > maxHeap * 0.9) {
            long suggest = (long) Math.ceil(heapBytes * 1.25 / (1L << 30));
            throw new IllegalArgumentException(
                    what + " needs about " + gib(heapBytes) + " of Java heap, and this JVM" + " may use " + gib(maxHeap)
                            + ": set KVPREFIX_JAVA_OPTS=-Xmx" + suggest + "g (docs/OPERATING.md section 7)");
        }
    }

    /** {@code 1.5 GiB}, or {@code 320 MiB} below 1 GiB. */
    static String gib(double bytes) {
        return bytes < (1L << 30)
                ? String.format(Locale.ROOT, "%.0f MiB", bytes / (1L << 20))
                : String.format(Locale.ROOT, "%.1f GiB", bytes / (1L << 30));
    }

    /** The machine's physical memory in bytes, or 0 if the JVM cannot tell. */
    private static long machineBytes() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getTotalMemorySize();
        }
        return 0;
    }
}
