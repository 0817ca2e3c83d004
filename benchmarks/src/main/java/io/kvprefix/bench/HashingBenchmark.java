package io.kvprefix.bench;

import io.kvprefix.BlockHasher;
import io.kvprefix.Implementation;
import io.kvprefix.internal.ffi.KvpBindings;
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Hashing suite (docs/BENCHMARKS.md section 1): local hashes of a request's blocks, natively (one FFM
 * downcall per request) and in pure Java (zero-allocation-hashing), for 16/64/512-token blocks and
 * 1/32/512-block requests. The C ceiling (a plain XXH3 loop) comes from {@code test_kvprefix --bench}.
 * {@code callOverhead} is a native call that hashes nothing: the FFM cost per request (it reaches
 * into the library's internal bindings, which the benchmark jar can see on its class path).
 *
 * <p>Thread-safety: JMH state; one instance per benchmark thread.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 2,
        jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class HashingBenchmark {
    @Param({"16", "64", "512"})
    public int blockSize;

    @Param({"1", "32", "512"})
    public int blocks;

    int[] tokens;
    long[] out;
    BlockHasher nativeHasher;
    BlockHasher portableHasher;

    @Setup
    public void setup() {
        SplittableRandom r = new SplittableRandom(42);
        tokens = new int[blockSize * blocks];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = r.nextInt();
        }
        out = new long[blocks];
        nativeHasher = BlockHasher.builder()
                .blockSize(blockSize)
                .implementation(Implementation.NATIVE)
                .build();
        portableHasher = BlockHasher.builder()
                .blockSize(blockSize)
                .implementation(Implementation.PORTABLE)
                .build();
        // Never measure a wrong answer: both paths must agree on this input.
        long[] a = nativeHasher.localHashes(tokens);
        long[] b = portableHasher.localHashes(tokens);
        if (!java.util.Arrays.equals(a, b) || a.length != blocks) {
            throw new IllegalStateException("native and portable hashes differ in the benchmark setup");
        }
    }

    @Benchmark
    public long[] nativeBatch() {
        nativeHasher.localHashes(tokens, 0, tokens.length, out, 0);
        return out;
    }

    @Benchmark
    public long[] portable() {
        portableHasher.localHashes(tokens, 0, tokens.length, out, 0);
        return out;
    }

    /** A critical downcall into kvp_hash_blocks that hashes zero tokens: the per-request FFM cost. */
    @Benchmark
    public long callOverhead() {
        return KvpBindings.hashBlocks(
                MemorySegment.ofArray(tokens),
                0,
                blockSize,
                1337,
                1337,
                MemorySegment.ofArray(out),
                MemorySegment.NULL);
    }
}
