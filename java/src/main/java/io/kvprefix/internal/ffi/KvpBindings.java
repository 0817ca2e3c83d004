package io.kvprefix.internal.ffi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Every binding to {@code include/kvprefix.h}, written by hand (jextract is not available), each a
 * {@code static final} {@link MethodHandle} called with {@code invokeExact}.
 *
 * <p>Short kernels that read or write Java arrays are bound with {@link Linker.Option#critical(boolean)
 * critical(true)}: heap segments ({@code MemorySegment.ofArray}) are passed without copying and the
 * call costs a few nanoseconds. Callers check every precondition (lengths, bounds, block size) in
 * Java before calling; the C side re-checks cheaply and returns {@code KVP_EINVAL}, which is turned
 * into an {@link IllegalStateException} here because it means a bug on the Java side.
 *
 * <p>{@link #DESCRIPTORS} lists each bound function and its shape; a test compares it with the
 * header so a function declared there and not bound (or bound with another shape) fails the build.
 *
 * <p>Loading this class requires the native library ({@link NativeLibrary#isAvailable()}).
 *
 * <p>Thread-safety: stateless; every method may be called from any thread.
 */
@SuppressWarnings(
        "restricted") // this package is where kvprefix makes its restricted FFM calls (checked by jnativescan)
public final class KvpBindings {
    private KvpBindings() {}

    public static final int KVP_EINVAL = -1;

    /** {@link #threadCalls()} of a library built without the call counter (KVP_NOT_COUNTED). */
    public static final long NOT_COUNTED = -1L;

    /** Name and shape of every bound function, in header order. */
    public static final Map<String, FunctionDescriptor> DESCRIPTORS;

    private static final FunctionDescriptor D_VERSION = FunctionDescriptor.of(JAVA_INT);
    private static final FunctionDescriptor D_XXH3 = FunctionDescriptor.of(JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_LONG);
    private static final FunctionDescriptor D_HASH_BLOCKS =
            FunctionDescriptor.of(JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS);
    private static final FunctionDescriptor D_HASH_BLOCKS_MM = FunctionDescriptor.of(
            JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS, ADDRESS);
    private static final FunctionDescriptor D_CHAIN =
            FunctionDescriptor.of(JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG, ADDRESS);
    private static final FunctionDescriptor D_MATCH_HASHES = FunctionDescriptor.of(
            JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
    private static final FunctionDescriptor D_MATCH_TOKENS = FunctionDescriptor.of(
            JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS,
            ADDRESS, ADDRESS, ADDRESS);
    private static final FunctionDescriptor D_MATCH_TOKENS_ALL = FunctionDescriptor.of(
            JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS,
            ADDRESS, ADDRESS);
    private static final FunctionDescriptor D_LAYOUT = FunctionDescriptor.of(JAVA_INT, ADDRESS);
    private static final FunctionDescriptor D_HOME = FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_INT);
    private static final FunctionDescriptor D_THREAD_CALLS = FunctionDescriptor.of(JAVA_LONG);

    static {
        Map<String, FunctionDescriptor> d = new LinkedHashMap<>();
        d.put("kvp_version", D_VERSION);
        d.put("kvp_xxh3", D_XXH3);
        d.put("kvp_hash_blocks", D_HASH_BLOCKS);
        d.put("kvp_hash_blocks_mm", D_HASH_BLOCKS_MM);
        d.put("kvp_chain", D_CHAIN);
        d.put("kvp_match_hashes", D_MATCH_HASHES);
        d.put("kvp_match_tokens", D_MATCH_TOKENS);
        d.put("kvp_match_tokens_all", D_MATCH_TOKENS_ALL);
        d.put("kvp_layout", D_LAYOUT);
        d.put("kvp_child_home", D_HOME);
        d.put("kvp_thread_calls", D_THREAD_CALLS);
        DESCRIPTORS = java.util.Collections.unmodifiableMap(d);
    }

    private static final Linker.Option CRITICAL = Linker.Option.critical(true);

    static {
        // Every call wraps the caller's Java arrays in heap segments; the JIT removes those
        // allocations only if it can inline their session's constructor, which it refuses while a
        // class in that constructor's signature (the arenas' resource list) is still unloaded. An
        // index whose memory comes from libc never creates an Arena, so load those classes here.
        try (java.lang.foreign.Arena warm = java.lang.foreign.Arena.ofConfined()) {
            warm.allocate(8);
        }
    }

    private static final MethodHandle KVP_VERSION = bind("kvp_version", D_VERSION);
    private static final MethodHandle KVP_XXH3 = bind("kvp_xxh3", D_XXH3, CRITICAL);
    private static final MethodHandle KVP_HASH_BLOCKS = bind("kvp_hash_blocks", D_HASH_BLOCKS, CRITICAL);
    private static final MethodHandle KVP_HASH_BLOCKS_MM = bind("kvp_hash_blocks_mm", D_HASH_BLOCKS_MM, CRITICAL);
    private static final MethodHandle KVP_CHAIN = bind("kvp_chain", D_CHAIN, CRITICAL);
    private static final MethodHandle KVP_MATCH_HASHES = bind("kvp_match_hashes", D_MATCH_HASHES, CRITICAL);
    private static final MethodHandle KVP_MATCH_TOKENS = bind("kvp_match_tokens", D_MATCH_TOKENS, CRITICAL);
    private static final MethodHandle KVP_MATCH_TOKENS_ALL = bind("kvp_match_tokens_all", D_MATCH_TOKENS_ALL, CRITICAL);
    private static final MethodHandle KVP_LAYOUT = bind("kvp_layout", D_LAYOUT, CRITICAL);
    private static final MethodHandle KVP_HOME = bind("kvp_child_home", D_HOME, CRITICAL);
    private static final MethodHandle KVP_THREAD_CALLS = bind("kvp_thread_calls", D_THREAD_CALLS, CRITICAL);

    private static MethodHandle bind(String name, FunctionDescriptor fd, Linker.Option... options) {
        if (!DESCRIPTORS.get(name).equals(fd)) {
            throw new AssertionError("descriptor table out of date for " + name);
        }
        return Linker.nativeLinker().downcallHandle(NativeLibrary.lookup().findOrThrow(name), fd, options);
    }

    private static IllegalStateException failure(String fn, Throwable t) {
        return new IllegalStateException(fn + " failed", t);
    }

    private static long checked(String fn, long r) {
        if (r < 0) {
            throw new IllegalStateException(
                    fn + " rejected its arguments (KVP_EINVAL): a precondition check is missing on the Java side");
        }
        return r;
    }

    /** {@code kvp_version()}. */
    public static int version() {
        try {
            return (int) KVP_VERSION.invokeExact();
        } catch (Throwable t) {
            throw failure("kvp_version", t);
        }
    }

    /** {@code kvp_xxh3} over {@code len} bytes of {@code data} (a heap or native segment). */
    public static long xxh3(MemorySegment data, long len, long seed) {
        try {
            return (long) KVP_XXH3.invokeExact(data, len, seed);
        } catch (Throwable t) {
            throw failure("kvp_xxh3", t);
        }
    }

    /** {@code kvp_hash_blocks}; {@code chainOut} may be {@link MemorySegment#NULL}. */
    public static long hashBlocks(
            MemorySegment tokens,
            long nTokens,
            int blockSize,
            long seed,
            long chainSeed,
            MemorySegment localOut,
            MemorySegment chainOut) {
        long r;
        try {
            r = (long) KVP_HASH_BLOCKS.invokeExact(tokens, nTokens, blockSize, seed, chainSeed, localOut, chainOut);
        } catch (Throwable t) {
            throw failure("kvp_hash_blocks", t);
        }
        return checked("kvp_hash_blocks", r);
    }

    /** {@code kvp_hash_blocks_mm}; {@code chainOut} may be {@link MemorySegment#NULL}. */
    public static long hashBlocksMm(
            MemorySegment tokens,
            long nTokens,
            int blockSize,
            long seed,
            MemorySegment mmOffsets,
            MemorySegment mmHashes,
            long chainSeed,
            MemorySegment localOut,
            MemorySegment chainOut) {
        long r;
        try {
            r = (long) KVP_HASH_BLOCKS_MM.invokeExact(
                    tokens, nTokens, blockSize, seed, mmOffsets, mmHashes, chainSeed, localOut, chainOut);
        } catch (Throwable t) {
            throw failure("kvp_hash_blocks_mm", t);
        }
        return checked("kvp_hash_blocks_mm", r);
    }

    /** {@code kvp_chain}. */
    public static long chain(
            MemorySegment local, long n, long chainSeed, boolean hasParent, long parent, MemorySegment chainOut) {
        long r;
        try {
            r = (long) KVP_CHAIN.invokeExact(local, n, chainSeed, hasParent ? 1 : 0, parent, chainOut);
        } catch (Throwable t) {
            throw failure("kvp_chain", t);
        }
        return checked("kvp_chain", r);
    }

    /**
     * {@code kvp_match_hashes} over the child table at {@code children} and the run table at
     * {@code runs} (zero-length segments at their addresses): returns the number of (slot, depth)
     * results written.
     */
    public static int matchHashes(
            MemorySegment children,
            int mask,
            MemorySegment runs,
            int runCapacity,
            MemorySegment local,
            int nBlocks,
            MemorySegment index,
            MemorySegment outSlots,
            MemorySegment outDepths) {
        int r;
        try {
            r = (int) KVP_MATCH_HASHES.invokeExact(
                    children, mask, runs, runCapacity, local, nBlocks, index, outSlots, outDepths);
        } catch (Throwable t) {
            throw failure("kvp_match_hashes", t);
        }
        return r < 0 ? (int) checked("kvp_match_hashes", r) : r;
    }

    /**
     * {@code kvp_match_hashes} on {@code local[0 .. nBlocks)} of a Java array. A small method on
     * purpose: the heap segment it wraps the array in does not escape it, so the JIT can drop that
     * allocation once the downcall inlines here.
     */
    public static int matchHashes(
            MemorySegment children,
            int mask,
            MemorySegment runs,
            int runCapacity,
            long[] local,
            int nBlocks,
            MemorySegment index,
            MemorySegment outSlots,
            MemorySegment outDepths) {
        int r;
        try {
            // invokeExact here, not through the segment overload: the method handle is always inlined,
            // so the wrapper allocations and their only use compile together and the JIT can drop them.
            r = (int) KVP_MATCH_HASHES.invokeExact(
                    children,
                    mask,
                    runs,
                    runCapacity,
                    MemorySegment.ofArray(local),
                    nBlocks,
                    index,
                    outSlots,
                    outDepths);
        } catch (Throwable t) {
            throw failure("kvp_match_hashes", t);
        }
        return r < 0 ? (int) checked("kvp_match_hashes", r) : r;
    }

    /** {@code kvp_match_tokens}: returns the number of (slot, depth) results written. */
    public static int matchTokens(
            MemorySegment children,
            int mask,
            MemorySegment runs,
            int runCapacity,
            MemorySegment tokens,
            long nTokens,
            int blockSize,
            long seed,
            MemorySegment localScratch,
            MemorySegment nHashed,
            MemorySegment index,
            MemorySegment outSlots,
            MemorySegment outDepths) {
        int r;
        try {
            r = (int) KVP_MATCH_TOKENS.invokeExact(
                    children,
                    mask,
                    runs,
                    runCapacity,
                    tokens,
                    nTokens,
                    blockSize,
                    seed,
                    localScratch,
                    nHashed,
                    index,
                    outSlots,
                    outDepths);
        } catch (Throwable t) {
            throw failure("kvp_match_tokens", t);
        }
        return r < 0 ? (int) checked("kvp_match_tokens", r) : r;
    }

    /** {@code kvp_match_tokens} on {@code tokens[0 .. nTokens)} of a Java array (see the array overload of {@code matchHashes}). */
    public static int matchTokens(
            MemorySegment children,
            int mask,
            MemorySegment runs,
            int runCapacity,
            int[] tokens,
            long nTokens,
            int blockSize,
            long seed,
            MemorySegment localScratch,
            MemorySegment nHashed,
            MemorySegment index,
            MemorySegment outSlots,
            MemorySegment outDepths) {
        int r;
        try {
            r = (int) KVP_MATCH_TOKENS.invokeExact(
                    children,
                    mask,
                    runs,
                    runCapacity,
                    MemorySegment.ofArray(tokens),
                    nTokens,
                    blockSize,
                    seed,
                    localScratch,
                    nHashed,
                    index,
                    outSlots,
                    outDepths);
        } catch (Throwable t) {
            throw failure("kvp_match_tokens", t);
        }
        return r < 0 ? (int) checked("kvp_match_tokens", r) : r;
    }

    /**
     * {@code kvp_match_tokens_all} on {@code tokens[0 .. nTokens)} of a Java array: matches as
     * {@code kvp_match_tokens} and writes every full block's local hash into {@code localOut[0 ..
     * nTokens / blockSize)} (a Java array too, each block hashed once); returns the number of (slot,
     * depth) results written. Arrays, not segments, so the JIT can drop both wrappers (see the array
     * overload of {@code matchHashes}).
     */
    public static int matchTokensAll(
            MemorySegment children,
            int mask,
            MemorySegment runs,
            int runCapacity,
            int[] tokens,
            int tokenOffset,
            long nTokens,
            int blockSize,
            long seed,
            long[] localOut,
            MemorySegment index,
            MemorySegment outSlots,
            MemorySegment outDepths) {
        int r;
        MemorySegment tok = MemorySegment.ofArray(tokens);
        if (tokenOffset != 0) {
            tok = tok.asSlice(tokenOffset * 4L);
        }
        try {
            r = (int) KVP_MATCH_TOKENS_ALL.invokeExact(
                    children,
                    mask,
                    runs,
                    runCapacity,
                    tok,
                    nTokens,
                    blockSize,
                    seed,
                    MemorySegment.ofArray(localOut),
                    index,
                    outSlots,
                    outDepths);
        } catch (Throwable t) {
            throw failure("kvp_match_tokens_all", t);
        }
        return r < 0 ? (int) checked("kvp_match_tokens_all", r) : r;
    }

    /** {@code kvp_layout}: the record offsets the library was built with. */
    public static int[] layout() {
        int[] out = new int[16];
        int n;
        try {
            n = (int) KVP_LAYOUT.invokeExact(MemorySegment.ofArray(out));
        } catch (Throwable t) {
            throw failure("kvp_layout", t);
        }
        return java.util.Arrays.copyOf(out, (int) checked("kvp_layout", n));
    }

    /** {@code kvp_child_home}. */
    public static int childHome(int parentBlock, long local, int mask) {
        try {
            return (int) KVP_HOME.invokeExact(parentBlock, local, mask);
        } catch (Throwable t) {
            throw failure("kvp_child_home", t);
        }
    }

    /**
     * {@code kvp_thread_calls}: kernel calls made so far by the calling thread, or {@link #NOT_COUNTED}
     * from the packaged library (only the test build counts).
     */
    public static long threadCalls() {
        try {
            return (long) KVP_THREAD_CALLS.invokeExact();
        } catch (Throwable t) {
            throw failure("kvp_thread_calls", t);
        }
    }
}
