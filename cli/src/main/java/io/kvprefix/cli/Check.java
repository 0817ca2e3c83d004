package io.kvprefix.cli;

import io.kvprefix.bench.Implementations;
import io.kvprefix.opstream.Op;
import io.kvprefix.opstream.OpStreamReader;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The checks a command runs on its arguments before it does any work. Each throws
 * {@link IllegalArgumentException} with one line that names the option (or file) and what is wrong,
 * which {@link Main} prints as {@code kvprefix COMMAND: MESSAGE} with exit status 2.
 *
 * <p>Thread-safety: stateless.
 */
final class Check {
    private Check() {}

    /** {@code v}, if it is at least {@code min}: {@code "--chain must be >= 1, got 0"} otherwise. */
    static int atLeast(String option, int v, int min) {
        if (v < min) {
            throw new IllegalArgumentException(option + " must be >= " + min + ", got " + v);
        }
        return v;
    }

    /** {@code v}, if it is in {@code min..max}. */
    static int inRange(String option, int v, int min, int max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(option + " must be in " + min + ".." + max + ", got " + v);
        }
        return v;
    }

    /** {@code v}, if it is a finite number above 0. */
    static double positive(String option, double v) {
        if (!(v > 0) || Double.isInfinite(v)) {
            throw new IllegalArgumentException(option + " must be a finite number > 0, got " + format(v));
        }
        return v;
    }

    /** {@code v}, if it is a finite number at least 0. */
    static double nonNegative(String option, double v) {
        if (!(v >= 0) || Double.isInfinite(v)) {
            throw new IllegalArgumentException(option + " must be a finite number >= 0, got " + format(v));
        }
        return v;
    }

    /** {@code name}, if it names an index implementation: otherwise the known names. */
    static String implementation(String option, String name) {
        if (!Implementations.isKnown(name)) {
            throw new IllegalArgumentException(option + ": unknown implementation '" + name
                    + "': known implementations are " + String.join(", ", Implementations.names()));
        }
        return name;
    }

    /** {@code names}, if there is at least one and each names an index implementation. */
    static java.util.List<String> implementations(String option, java.util.List<String> names) {
        if (names.isEmpty()) {
            throw new IllegalArgumentException(option + " names no implementation: known implementations are "
                    + String.join(", ", Implementations.names()));
        }
        names.forEach(n -> implementation(option, n));
        return names;
    }

    /** A decimal given as text ({@code --latency-at 0.5}), with the option named if it is none. */
    static double parseDouble(String option, String text) {
        try {
            return Double.parseDouble(text.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + ": '" + text + "' is not a number");
        }
    }

    /** {@code p}, if it is a readable regular file: otherwise what it is instead. */
    static Path inputFile(String option, Path p) {
        String problem = Files.isDirectory(p)
                ? "is a directory, not a file"
                : !Files.exists(p) ? "no such file" : !Files.isReadable(p) ? "permission denied" : null;
        if (problem != null) {
            throw new IllegalArgumentException(option + " '" + p + "': " + problem);
        }
        return p;
    }

    /**
     * {@code p}, if it is a readable file with at least one valid op-stream line (docs/SPEC.md section
     * 5): reads up to the first valid line, so a valid stream costs one line. An empty file, or one
     * whose every line is invalid (a Mooncake trace given by mistake), is refused with the first reason.
     */
    static Path opStream(String option, Path p) throws IOException {
        inputFile(option, p);
        try (InputStream in = Files.newInputStream(p)) {
            OpStreamReader reader = new OpStreamReader(in);
            String first = null;
            for (Op op; (op = reader.next()) != null; ) {
                if (!(op instanceof Op.Invalid i)) {
                    return p;
                }
                first = first == null ? i.reason() : first;
            }
            throw new IllegalArgumentException(option + " '" + p + "': "
                    + (first == null
                            ? "the file is empty, no op-stream lines (docs/SPEC.md section 5)"
                            : (reader.lines() == 1
                                            ? "its one line is not"
                                            : "none of its " + reader.lines() + " lines is")
                                    + " an op-stream line (docs/SPEC.md section 5;"
                                    + " line 1: " + first + ")"
                                    + (option.equals("--ops") ? "; a Mooncake trace goes to --trace" : "")));
        }
    }

    /** The path of the text {@code name}, or a usage error if it is no path. */
    static Path path(String option, String name) {
        try {
            return Path.of(name);
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException(option + " '" + name + "': not a path (" + e.getReason() + ")");
        }
    }

    /** {@code p}, if a file can be written there: its folder exists, and it is not a folder itself. */
    static Path outputFile(String option, Path p) {
        Path dir = p.toAbsolutePath().getParent();
        if (Files.isDirectory(p)) {
            throw new IllegalArgumentException(option + " '" + p + "': is a directory, not a file");
        }
        if (dir != null && !Files.isDirectory(dir)) {
            throw new IllegalArgumentException(option + " '" + p + "': no such directory " + dir);
        }
        if (dir != null && !Files.isWritable(dir) || Files.exists(p) && !Files.isWritable(p)) {
            throw new IllegalArgumentException(option + " '" + p + "': permission denied");
        }
        return p;
    }

    /** {@code p}, if it is a folder or one can be made there (what exists of its path is folders). */
    static Path outputDir(String option, Path p) {
        Path at = p.toAbsolutePath();
        while (at != null && !Files.exists(at)) {
            at = at.getParent();
        }
        if (at != null && !Files.isDirectory(at)) {
            throw new IllegalArgumentException(option + " '" + p + "': "
                    + (at.equals(p.toAbsolutePath()) ? "" : at + " ") + "is a file, not a directory");
        }
        if (at != null && !Files.isWritable(at)) {
            throw new IllegalArgumentException(option + " '" + p + "': permission denied in " + at);
        }
        return p;
    }

    private static String format(double v) {
        return v == Math.rint(v) && !Double.isInfinite(v) ? String.format(Locale.ROOT, "%.0f", v) : Double.toString(v);
    }
}
