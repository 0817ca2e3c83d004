package io.kvprefix.cli;

import io.kvprefix.opstream.Implementations;
import io.kvprefix.opstream.Op;
import io.kvprefix.opstream.OpStreamReader;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The option helpers of every command: the checks a command runs on its arguments before it does any
 * work, and the parsers of values given as text. Each throws
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

    // ------------------------------------------------------------------ values given as text

    /** Parses a comma-separated list of unsigned 32-bit tokens; an empty or blank string gives none. */
    static int[] parseTokens(String list, String option) {
        String s = list.strip();
        if (s.isEmpty()) {
            return new int[0];
        }
        String[] parts = s.split(",", -1);
        int[] out = new int[parts.length];
        for (int i = 0; i < parts.length; i++) {
            String p = parts[i].strip();
            long v;
            try {
                v = Long.parseLong(p);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(option + ": token " + (i + 1) + " ('" + p + "') is not an integer");
            }
            if (v < 0 || v > 0xFFFF_FFFFL) {
                throw new IllegalArgumentException(
                        option + ": token " + (i + 1) + " (" + p + ") is outside 0..4294967295");
            }
            out[i] = (int) v;
        }
        return out;
    }

    /**
     * Parses a byte count: a decimal with an optional suffix {@code k}, {@code m}, {@code g} or
     * {@code t} (powers of 1024, either case, an optional trailing {@code b}/{@code B} and
     * {@code i}, as in {@code 64m}, {@code 2GiB}).
     */
    static long parseBytes(String text, String option) {
        String s = text.strip().toLowerCase(java.util.Locale.ROOT);
        if (s.endsWith("ib")) {
            s = s.substring(0, s.length() - 2);
        } else if (s.endsWith("b")) {
            s = s.substring(0, s.length() - 1);
        }
        int shift = 0;
        if (!s.isEmpty()) {
            switch (s.charAt(s.length() - 1)) {
                case 'k' -> shift = 10;
                case 'm' -> shift = 20;
                case 'g' -> shift = 30;
                case 't' -> shift = 40;
                default -> shift = 0;
            }
            if (shift > 0) {
                s = s.substring(0, s.length() - 1);
            }
        }
        long v;
        try {
            v = Long.parseLong(s.strip());
        } catch (NumberFormatException e) {
            v = -1;
        }
        if (v < 0 || v > (Long.MAX_VALUE >> shift)) {
            throw new IllegalArgumentException(option + ": '" + text
                    + "' is not a byte count (a whole number, optionally with k, m, g or t: 64m, 2g)");
        }
        return v << shift;
    }

    /** Parses an unsigned 64-bit decimal, or a negative one taken as its two's-complement bits. */
    static long parseU64(String text, String option) {
        String s = text.strip();
        try {
            if (s.startsWith("-")) {
                return Long.parseLong(s);
            }
            return Long.parseUnsignedLong(s);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    option + ": '" + text
                            + "' is not a 64-bit integer (0..18446744073709551615, or a negative value down to -9223372036854775808)");
        }
    }

    /** Parses a decimal in {@code min .. max}. */
    static long parseLong(String text, String option, long min, long max) {
        try {
            long v = Long.parseLong(text.strip());
            if (v >= min && v <= max) {
                return v;
            }
        } catch (NumberFormatException e) {
            // the message below says what is allowed
        }
        throw new IllegalArgumentException(option + ": '" + text + "' is not an integer in " + min + ".." + max);
    }

    // ------------------------------------------------------------------ shared by several commands

    /** {@code s} seconds as a duration, if it is a positive number of seconds (at most 10^9). */
    static java.time.Duration seconds(String option, double s) {
        if (!(s > 0) || s > 1e9) {
            throw new IllegalArgumentException(option + " must be a positive number of seconds, got " + s);
        }
        return java.time.Duration.ofNanos((long) (s * 1e9));
    }

    /** {@code s} seconds as a duration if given, else null ({@code --duration}: run until stopped). */
    static java.time.Duration secondsOrNull(String option, Double s) {
        return s == null ? null : seconds(option, s);
    }

    /** The {@code --engine} values of {@code listen} and {@code relay}, parsed and checked (each endpoint once). */
    static java.util.List<io.kvprefix.zmq.EngineEndpoint> engines(java.util.List<String> specs) {
        java.util.List<io.kvprefix.zmq.EngineEndpoint> out = new java.util.ArrayList<>();
        java.util.Set<String> endpoints = new java.util.LinkedHashSet<>();
        for (String spec : specs) {
            io.kvprefix.zmq.EngineEndpoint e;
            try {
                e = io.kvprefix.zmq.EngineEndpoint.parse(spec); // the message names the spec and the fault
            } catch (IllegalArgumentException ex) {
                throw new IllegalArgumentException("--engine: " + ex.getMessage(), ex);
            }
            if (!endpoints.add(e.endpoint())) {
                throw new IllegalArgumentException("--engine: " + e.endpoint() + " is given twice");
            }
            out.add(e);
        }
        return out;
    }

    /** The readable file named by {@code name} ({@code --queries}), or null when none is given. */
    static Path inputFileOrNull(String option, String name) {
        return name == null ? null : inputFile(option, path(option, name));
    }

    private static String format(double v) {
        return v == Math.rint(v) && !Double.isInfinite(v) ? String.format(Locale.ROOT, "%.0f", v) : Double.toString(v);
    }
}
