package io.kvprefix.internal.ffi;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Finds and loads {@code libkvprefix.so} once per JVM.
 *
 * <p>Where it looks, in order: the path in the system property {@value #PATH_PROPERTY} (or the
 * environment variable {@value #PATH_ENV}) if one is given, and then nowhere else; otherwise the
 * library packaged in the jar under {@code native/<os>-<arch>/}, loaded in place when the class
 * path is a directory and extracted to a temporary file otherwise. After loading, the library's
 * {@code kvp_version()} must match the API version this code was written against.
 *
 * <p>Thread-safety: the load happens once, in a class initializer; every method is safe to call
 * from any thread.
 */
@SuppressWarnings(
        "restricted") // this package is where kvprefix makes its restricted FFM calls (checked by jnativescan)
public final class NativeLibrary {
    /** System property naming an explicit {@code libkvprefix.so} to load. */
    public static final String PATH_PROPERTY = "kvprefix.library.path";
    /** Environment variable naming an explicit {@code libkvprefix.so} to load. */
    public static final String PATH_ENV = "KVPREFIX_LIBRARY_PATH";
    /** The C API version this Java code is written against (see include/kvprefix.h). */
    public static final int EXPECTED_MAJOR = 2;

    public static final int EXPECTED_MINOR = 1;

    private static final String LIBRARY_FILE = "libkvprefix.so";

    private NativeLibrary() {}

    /** What the one load attempt found. */
    record LoadResult(SymbolLookup lookup, String loadedFrom, List<String> attempts, String failure) {}

    private static final class Holder {
        static final LoadResult RESULT = load();
    }

    /** True if the library is loaded and its version matches. */
    public static boolean isAvailable() {
        return Holder.RESULT.lookup() != null;
    }

    /** Where the library was loaded from, or null. */
    public static String loadedFrom() {
        return Holder.RESULT.loadedFrom();
    }

    /** Why the library is not available (every place tried and what went wrong), or null if it is. */
    public static String failure() {
        return Holder.RESULT.failure();
    }

    /** The symbol lookup of the loaded library. */
    public static SymbolLookup lookup() {
        LoadResult r = Holder.RESULT;
        if (r.lookup() == null) {
            throw new UnsatisfiedLinkError(r.failure());
        }
        return r.lookup();
    }

    /** The folder name of this platform inside the jar, such as {@code linux-x86_64}. */
    public static String platform() {
        String os = System.getProperty("os.name", "unknown").toLowerCase(Locale.ROOT);
        if (os.startsWith("linux")) {
            os = "linux";
        } else if (os.startsWith("mac") || os.startsWith("darwin")) {
            os = "darwin";
        } else if (os.startsWith("windows")) {
            os = "windows";
        }
        String arch = System.getProperty("os.arch", "unknown").toLowerCase(Locale.ROOT);
        arch = switch (arch) {
            case "amd64", "x86_64", "x64" -> "x86_64";
            case "aarch64", "arm64" -> "aarch64";
            default -> arch;
        };
        return os + "-" + arch;
    }

    private static LoadResult load() {
        List<String> attempts = new ArrayList<>();
        String explicit = System.getProperty(PATH_PROPERTY);
        String explicitSource = "-D" + PATH_PROPERTY;
        if (explicit == null || explicit.isBlank()) {
            explicit = System.getenv(PATH_ENV);
            explicitSource = "$" + PATH_ENV;
        }
        if (explicit != null && !explicit.isBlank()) {
            Path p = Path.of(explicit).toAbsolutePath();
            return tryLoad(p, explicitSource + "=" + p, attempts);
        }
        String resource = "/native/" + platform() + "/" + LIBRARY_FILE;
        URL url = NativeLibrary.class.getResource(resource);
        if (url == null) {
            attempts.add("class path resource " + resource + ": not packaged for this platform");
            return failed(attempts);
        }
        if ("file".equals(url.getProtocol())) {
            try {
                return tryLoad(Path.of(url.toURI()), "class path directory " + url, attempts);
            } catch (URISyntaxException | IllegalArgumentException e) {
                attempts.add("class path resource " + url + ": " + e.getMessage());
                return failed(attempts);
            }
        }
        Path extracted;
        try {
            extracted = extract(url);
        } catch (IOException | RuntimeException e) {
            attempts.add("class path resource " + url + ": could not extract to a temporary file: " + e);
            return failed(attempts);
        }
        LoadResult r = tryLoad(extracted, "jar resource " + url + " (extracted to " + extracted + ")", attempts);
        try {
            // Linux keeps the mapping alive; removing the file now leaves nothing behind in /tmp.
            Files.deleteIfExists(extracted);
            Files.deleteIfExists(extracted.getParent());
        } catch (IOException ignored) {
            extracted.toFile().deleteOnExit();
        }
        return r;
    }

    private static Path extract(URL url) throws IOException {
        Path dir = Files.createTempDirectory("kvprefix-");
        Path target = dir.resolve(LIBRARY_FILE);
        try (InputStream in = url.openStream()) {
            Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
        }
        return target;
    }

    private static LoadResult tryLoad(Path path, String where, List<String> attempts) {
        if (!Files.isRegularFile(path)) {
            attempts.add(where + ": no such file");
            return failed(attempts);
        }
        SymbolLookup lookup;
        try {
            lookup = SymbolLookup.libraryLookup(path, Arena.global());
        } catch (IllegalArgumentException | IllegalCallerException | UnsupportedOperationException e) {
            attempts.add(where + ": " + e.getMessage());
            return failed(attempts);
        }
        int version;
        try {
            MethodHandle h = Linker.nativeLinker()
                    .downcallHandle(lookup.findOrThrow("kvp_version"), FunctionDescriptor.of(ValueLayout.JAVA_INT));
            version = (int) h.invokeExact();
        } catch (IllegalCallerException e) {
            attempts.add(
                    where + ": native access is not enabled for this module; start the JVM with "
                            + "--enable-native-access=ALL-UNNAMED (class path) or --enable-native-access=io.kvprefix (module path)");
            return failed(attempts);
        } catch (Throwable t) {
            attempts.add(where + ": kvp_version() failed: " + t);
            return failed(attempts);
        }
        int major = version >>> 16, minor = version & 0xFFFF;
        if (major != EXPECTED_MAJOR || minor < EXPECTED_MINOR) {
            attempts.add(where + ": library API version " + major + "." + minor + ", this code needs " + EXPECTED_MAJOR
                    + "." + EXPECTED_MINOR + " or a newer minor");
            return failed(attempts);
        }
        return new LoadResult(lookup, where, List.copyOf(attempts), null);
    }

    private static LoadResult failed(List<String> attempts) {
        return new LoadResult(
                null,
                null,
                List.copyOf(attempts),
                "libkvprefix could not be loaded; looked in: " + String.join("; ", attempts));
    }
}
