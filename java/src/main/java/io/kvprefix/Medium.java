package io.kvprefix;

import java.util.Locale;

/**
 * The storage tier a worker holds a block on (docs/SPEC.md section 3.1): the GPU, where a hit costs
 * nothing, or a lower tier an engine offloads to (host memory, disk), where a hit costs an onload
 * and is still much cheaper than recomputing the block.
 *
 * <p>Thread-safety: an immutable enum.
 */
public enum Medium {
    /** Device memory: vLLM's and SGLang's {@code "GPU"}, Dynamo's {@code Device}. */
    GPU,
    /** Host memory: vLLM's {@code "CPU"} (its offloading connectors, LMCache), SGLang's {@code "CPU_PINNED"} (HiCache). */
    CPU,
    /** Disk or storage: SGLang's {@code "DISK"}, vLLM's {@code "STORAGE"}. */
    DISK;

    /**
     * The tier an engine's {@code medium} string names (case-insensitive): {@code GPU} / {@code DEVICE}
     * / {@code CUDA}, {@code CPU} / {@code CPU_PINNED} / {@code HOST}, {@code DISK} / {@code STORAGE} /
     * {@code SSD}; null for a name kvprefix does not index (such as SGLang's {@code EXTERNAL}). A null
     * or absent medium is the GPU.
     */
    public static Medium fromEngine(String medium) {
        if (medium == null) {
            return GPU;
        }
        return switch (medium.toUpperCase(Locale.ROOT)) {
            case "GPU", "DEVICE", "CUDA" -> GPU;
            case "CPU", "CPU_PINNED", "HOST", "HOST_PINNED" -> CPU;
            case "DISK", "STORAGE", "SSD" -> DISK;
            default -> null;
        };
    }

    /** The bit of this tier in a set of tiers. */
    public int bit() {
        return 1 << ordinal();
    }
}
