package io.kvprefix.workload;

import java.util.Arrays;
import java.util.Objects;

/**
 * One request of a workload, in the Mooncake trace model: when it arrives, how long its prompt and
 * completion are, and which blocks its prompt is made of.
 *
 * <p>Block {@code i} of the prompt is named by {@code hashIds[i]}; by the convention of Dynamo's
 * benchmark (docs/SPEC.md section 2.3) hash id {@code h} stands for a block of {@link Trace#tokensPerBlock()}
 * tokens all equal to {@code (u32) h}. The last id usually covers a partial block: only the first
 * {@link #fullBlocks(int)} blocks are full, and an engine caches only those.
 *
 * <p>Thread-safety: immutable as long as nobody modifies {@link #hashIds()} (it is not copied).
 *
 * @param index position in arrival order, 0-based
 * @param timestampMs arrival time in milliseconds from the start of the trace
 * @param inputLength prompt length in tokens
 * @param outputLength completion length in tokens
 * @param hashIds one id per prompt block (after any split or duplication), each in 0 .. 2^32-1
 * @param line the source line in the trace file (1-based), or 0 for a generated request
 */
public record TraceRequest(int index, long timestampMs, int inputLength, int outputLength, long[] hashIds, int line) {

    public TraceRequest {
        Objects.requireNonNull(hashIds, "hashIds");
        if (index < 0 || timestampMs < 0 || inputLength < 0 || outputLength < 0 || line < 0) {
            throw new IllegalArgumentException(
                    "negative index, timestamp, length or line: index=" + index + ", timestamp=" + timestampMs
                            + ", input=" + inputLength + ", output=" + outputLength + ", line=" + line);
        }
    }

    /** Number of prompt blocks, full or partial (the length of {@link #hashIds()}). */
    public int blocks() {
        return hashIds.length;
    }

    /**
     * Number of full blocks at {@code tokensPerBlock} tokens per block: {@code inputLength / tokensPerBlock},
     * but never more than the number of ids (a trace whose ids cover fewer tokens than its
     * {@code input_length} has only those blocks).
     */
    public int fullBlocks(int tokensPerBlock) {
        return Math.min(inputLength / tokensPerBlock, hashIds.length);
    }

    /** A copy with another index and ids (the transforms use it). */
    TraceRequest with(int newIndex, long[] newIds) {
        return new TraceRequest(newIndex, timestampMs, inputLength, outputLength, newIds, line);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TraceRequest r
                && index == r.index
                && timestampMs == r.timestampMs
                && inputLength == r.inputLength
                && outputLength == r.outputLength
                && line == r.line
                && Arrays.equals(hashIds, r.hashIds);
    }

    @Override
    public int hashCode() {
        return Objects.hash(index, timestampMs, inputLength, outputLength, Arrays.hashCode(hashIds), line);
    }

    @Override
    public String toString() {
        return "TraceRequest[#" + index + ", t=" + timestampMs + " ms, in=" + inputLength + ", out=" + outputLength
                + ", ids=" + (hashIds.length <= 8 ? Arrays.toString(hashIds) : hashIds.length + " ids")
                + (line > 0 ? ", line " + line : "") + "]";
    }
}
