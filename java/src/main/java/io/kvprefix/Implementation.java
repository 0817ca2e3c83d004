package io.kvprefix;

import io.kvprefix.internal.ffi.NativeLibrary;
import java.util.Locale;

/**
 * Which code path does the hashing and matching: the native library through FFM, the pure-Java
 * path, or whichever is available. Both paths give bit-identical answers; the native one is faster.
 * The default comes from the system property {@value #PROPERTY} (or the environment variable
 * {@code KVPREFIX_IMPL}): {@code auto} (the default), {@code native} or {@code portable}.
 *
 * <p>Thread-safety: an immutable enum; {@link #resolve()} may be called from any thread.
 */
public enum Implementation {
    /**
     * Native if {@code libkvprefix} loads, otherwise portable, announced by one warning line on the
     * {@code io.kvprefix} {@link System.Logger} saying why.
     */
    AUTO,
    /** Native, or an {@link IllegalStateException} naming every place the loader looked. */
    NATIVE,
    /** Pure Java, never touches native code. */
    PORTABLE;

    /** System property that sets the default implementation: {@code auto}, {@code native} or {@code portable}. */
    public static final String PROPERTY = "kvprefix.impl";

    private static final System.Logger LOG = System.getLogger("io.kvprefix");

    private static final class FallbackNotice {
        static {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "kvprefix: native library unavailable, using the portable Java path (" + NativeLibrary.failure()
                            + ")");
        }

        static void announce() {
            // the static initializer logs exactly once per JVM
        }
    }

    /** The default from {@value #PROPERTY} / {@code KVPREFIX_IMPL}, or {@link #AUTO}. */
    public static Implementation fromEnvironment() {
        String v = System.getProperty(PROPERTY);
        if (v == null || v.isBlank()) {
            v = System.getenv("KVPREFIX_IMPL");
        }
        if (v == null || v.isBlank()) {
            return AUTO;
        }
        return parse(v);
    }

    /** Parses {@code auto}, {@code native} or {@code portable} (case-insensitive). */
    public static Implementation parse(String name) {
        return switch (name.trim().toLowerCase(Locale.ROOT)) {
            case "auto" -> AUTO;
            case "native" -> NATIVE;
            case "portable", "java" -> PORTABLE;
            default ->
                throw new IllegalArgumentException(
                        "unknown implementation '" + name + "': expected auto, native or portable");
        };
    }

    /** True if the native library is loaded (and its version matches). */
    public static boolean nativeAvailable() {
        return NativeLibrary.isAvailable();
    }

    /** A one-line description of the native library's state: where it was loaded from, or why it was not. */
    public static String nativeStatus() {
        return NativeLibrary.isAvailable()
                ? "native library loaded from " + NativeLibrary.loadedFrom()
                : NativeLibrary.failure();
    }

    /**
     * The concrete implementation this choice means here: {@link #NATIVE} or {@link #PORTABLE}.
     *
     * @throws IllegalStateException for {@link #NATIVE} when the library cannot be loaded
     */
    public Implementation resolve() {
        return switch (this) {
            case PORTABLE -> PORTABLE;
            case NATIVE -> {
                if (!NativeLibrary.isAvailable()) {
                    throw new IllegalStateException("kvprefix.impl=native, but " + NativeLibrary.failure());
                }
                yield NATIVE;
            }
            case AUTO -> {
                if (NativeLibrary.isAvailable()) {
                    yield NATIVE;
                }
                FallbackNotice.announce();
                yield PORTABLE;
            }
        };
    }
}
