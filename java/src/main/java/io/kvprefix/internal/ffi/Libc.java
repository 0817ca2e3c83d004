package io.kvprefix.internal.ffi;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Locale;

/**
 * The C library's {@code calloc}, {@code free} and (Linux) {@code madvise}, {@code open},
 * {@code mmap}, {@code munmap} and {@code close}, bound through FFM, and the one place that turns a
 * raw address into a segment ({@code reinterpret}). The off-heap index takes its memory from here;
 * if native access is denied, {@link #available()} is false and it falls back to arenas.
 *
 * <p>Thread-safety: stateless after class initialisation; every method may be called from any thread.
 */
@SuppressWarnings(
        "restricted") // this package is where kvprefix makes its restricted FFM calls (checked by jnativescan)
public final class Libc {
    private Libc() {}

    private static final int MADV_HUGEPAGE = 14; // Linux
    private static final MethodHandle CALLOC;
    private static final MethodHandle FREE;
    private static final MethodHandle MADVISE;
    /** open, mmap, munmap, close (Linux), for {@link #mapPrivate}; null elsewhere. */
    private static final MethodHandle[] MAPPING;

    private static final int O_RDONLY_CLOEXEC = 0x80000; // O_RDONLY (0) | O_CLOEXEC, Linux
    private static final int PROT_READ_WRITE = 3;
    private static final int MAP_PRIVATE = 2;

    static {
        MethodHandle c = null, f = null, m = null;
        try {
            Linker linker = Linker.nativeLinker();
            var lookup = linker.defaultLookup();
            c = linker.downcallHandle(
                    lookup.findOrThrow("calloc"),
                    FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));
            f = linker.downcallHandle(lookup.findOrThrow("free"), FunctionDescriptor.ofVoid(ValueLayout.ADDRESS));
            if (System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")) {
                m = lookup.find("madvise")
                        .map(a -> linker.downcallHandle(
                                a,
                                FunctionDescriptor.of(
                                        ValueLayout.JAVA_INT,
                                        ValueLayout.ADDRESS,
                                        ValueLayout.JAVA_LONG,
                                        ValueLayout.JAVA_INT)))
                        .orElse(null);
            }
            MemorySegment.NULL.reinterpret(0); // reinterpret is restricted too: fail here, not at the first allocation
        } catch (RuntimeException | LinkageError e) {
            c = null;
            f = null;
        }
        CALLOC = c;
        FREE = f;
        MADVISE = c == null ? null : m;
        MAPPING = MADVISE == null ? null : bindMapping();
    }

    private static MethodHandle[] bindMapping() {
        try {
            Linker linker = Linker.nativeLinker();
            var lookup = linker.defaultLookup();
            ValueLayout i = ValueLayout.JAVA_INT;
            ValueLayout l = ValueLayout.JAVA_LONG;
            ValueLayout a = ValueLayout.ADDRESS;
            return new MethodHandle[] {
                linker.downcallHandle(lookup.findOrThrow("open"), FunctionDescriptor.of(i, a, i)),
                linker.downcallHandle(lookup.findOrThrow("mmap"), FunctionDescriptor.of(a, a, l, i, i, i, l)),
                linker.downcallHandle(lookup.findOrThrow("munmap"), FunctionDescriptor.of(i, a, l)),
                linker.downcallHandle(lookup.findOrThrow("close"), FunctionDescriptor.of(i, i))
            };
        } catch (RuntimeException | LinkageError e) {
            return null;
        }
    }

    /** True if {@link #mapPrivate} can map here (Linux, native access allowed). */
    public static boolean canMapPrivate() {
        return MAPPING != null;
    }

    /**
     * The first {@code bytes} of {@code file} mapped {@code MAP_PRIVATE} with {@code PROT_READ |
     * PROT_WRITE}, opened read-only (Java's own private mapping wants a channel open for writing, which
     * a read-only snapshot file or file system refuses): copy-on-write, so a write gives this process
     * its own copy of the page and never reaches the file. Unmapped when {@code arena} closes.
     */
    public static MemorySegment mapPrivate(java.nio.file.Path file, long bytes, java.lang.foreign.Arena arena)
            throws java.io.IOException {
        try (java.lang.foreign.Arena name = java.lang.foreign.Arena.ofConfined()) {
            int fd = (int) MAPPING[0].invokeExact(name.allocateFrom(file.toString()), O_RDONLY_CLOEXEC);
            if (fd < 0) {
                throw new java.io.IOException("open() failed");
            }
            MemorySegment p;
            try {
                p = (MemorySegment)
                        MAPPING[1].invokeExact(MemorySegment.NULL, bytes, PROT_READ_WRITE, MAP_PRIVATE, fd, 0L);
            } finally {
                int ignored = (int) MAPPING[3].invokeExact(fd); // the mapping keeps the file open
            }
            if (p.address() == -1L) {
                throw new java.io.IOException("mmap() failed");
            }
            MethodHandle munmap = MAPPING[2];
            return p.reinterpret(bytes, arena, s -> {
                try {
                    int ignored = (int) munmap.invokeExact(MemorySegment.ofAddress(s.address()), bytes);
                } catch (Throwable t) {
                    throw new IllegalStateException("munmap() failed", t);
                }
            });
        } catch (java.io.IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("mmap() failed", t);
        }
    }

    /** True if calloc and free are bound (native access is allowed). */
    public static boolean available() {
        return CALLOC != null;
    }

    /** True if {@link #adviseHugePages} can do anything here. */
    public static boolean canAdviseHugePages() {
        return MADVISE != null;
    }

    /** {@code calloc(bytes, 1)}: the address of zeroed memory, or 0 if the C library has none. */
    public static long calloc(long bytes) {
        try {
            return ((MemorySegment) CALLOC.invokeExact(bytes, 1L)).address();
        } catch (Throwable t) {
            throw new IllegalStateException("calloc() failed", t);
        }
    }

    /** {@code free(address)}. */
    public static void free(long address) {
        try {
            FREE.invokeExact(MemorySegment.ofAddress(address));
        } catch (Throwable t) {
            throw new IllegalStateException("free() failed", t);
        }
    }

    /** {@code madvise(address, bytes, MADV_HUGEPAGE)}; a refusal is ignored (it is only a hint). */
    public static void adviseHugePages(long address, long bytes) {
        try {
            int ignored = (int) MADVISE.invokeExact(MemorySegment.ofAddress(address), bytes, MADV_HUGEPAGE);
        } catch (Throwable t) {
            throw new IllegalStateException("madvise() failed", t);
        }
    }

    private static final class Everything {
        static final MemorySegment SEGMENT = MemorySegment.ofAddress(0).reinterpret(Long.MAX_VALUE);
    }

    /**
     * One global-scope segment over the whole address space, so off-heap structures can be read and
     * written at their raw addresses (offset = address) without a segment object per access. Bounds
     * and lifetime are the caller's: the off-heap index reads only memory it allocated and frees
     * nothing a reader may still be on (its reader gate).
     */
    public static MemorySegment everything() {
        return Everything.SEGMENT;
    }

    /**
     * The {@code bytes} at {@code address} as a global-scope segment. The caller guarantees the
     * memory stays allocated for as long as anyone uses the segment.
     */
    public static MemorySegment segment(long address, long bytes) {
        return MemorySegment.ofAddress(address).reinterpret(bytes);
    }
}
