package io.kvprefix.cli;

/**
 * Parsing helpers for command-line values, with error messages that name the option.
 *
 * <p>Thread-safety: stateless.
 */
final class Args {
    private Args() {}

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
}
