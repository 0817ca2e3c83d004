package io.kvprefix.tokenizer.internal.template;

import java.util.ArrayList;
import java.util.List;

/**
 * Python's {@code str} methods as chat templates call them, on code points (Python's unit), with
 * Python's notion of whitespace ({@code str.isspace}): docs/TOKENIZER.md section 3.2.
 *
 * <p>Thread-safety: stateless.
 */
public final class PyStrings {
    private PyStrings() {}

    /**
     * Python's {@code str.isspace} for one code point: Unicode Zs, bidi classes WS, B and S. Java's
     * {@code Character.isWhitespace} leaves out the no-break spaces (U+00A0, U+2007, U+202F) and
     * NEXT LINE (U+0085), which Python counts.
     */
    public static boolean isSpace(int cp) {
        return Character.isWhitespace(cp) || cp == 0x85 || cp == 0xA0 || cp == 0x2007 || cp == 0x202F;
    }

    /** {@code s.strip(chars)}: {@code chars} null means whitespace. */
    public static String strip(String s, String chars) {
        return rstrip(lstrip(s, chars), chars);
    }

    /** {@code s.lstrip(chars)}. */
    public static String lstrip(String s, String chars) {
        int i = 0;
        while (i < s.length()) {
            int cp = s.codePointAt(i);
            if (!stripped(cp, chars)) {
                break;
            }
            i += Character.charCount(cp);
        }
        return s.substring(i);
    }

    /** {@code s.rstrip(chars)}. */
    public static String rstrip(String s, String chars) {
        int end = s.length();
        while (end > 0) {
            int cp = s.codePointBefore(end);
            if (!stripped(cp, chars)) {
                break;
            }
            end -= Character.charCount(cp);
        }
        return s.substring(0, end);
    }

    private static boolean stripped(int cp, String chars) {
        return chars == null ? isSpace(cp) : chars.indexOf(Character.toString(cp)) >= 0;
    }

    /** {@code s.split(sep, maxsplit)}: a literal separator (never a regex), or runs of whitespace when null. */
    public static List<String> split(String s, String sep, int maxsplit) {
        if (sep == null) {
            return splitWhitespace(s, maxsplit);
        }
        if (sep.isEmpty()) {
            throw new IllegalArgumentException("empty separator");
        }
        List<String> out = new ArrayList<>();
        int from = 0;
        int at;
        while ((maxsplit < 0 || out.size() < maxsplit) && (at = s.indexOf(sep, from)) >= 0) {
            out.add(s.substring(from, at));
            from = at + sep.length();
        }
        out.add(s.substring(from));
        return out;
    }

    private static List<String> splitWhitespace(String s, int maxsplit) {
        List<String> out = new ArrayList<>();
        int i = 0;
        int n = s.length();
        while (true) {
            while (i < n && isSpace(s.codePointAt(i))) {
                i += Character.charCount(s.codePointAt(i));
            }
            if (i >= n) {
                return out;
            }
            if (maxsplit >= 0 && out.size() == maxsplit) {
                out.add(rstrip(s.substring(i), null));
                return out;
            }
            int start = i;
            while (i < n && !isSpace(s.codePointAt(i))) {
                i += Character.charCount(s.codePointAt(i));
            }
            out.add(s.substring(start, i));
        }
    }

    /** {@code s.title()}: a cased character after an uncased one is upper-cased, others lower-cased. */
    public static String title(String s) {
        StringBuilder b = new StringBuilder(s.length());
        boolean previousCased = false;
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            boolean cased = Character.isUpperCase(cp) || Character.isLowerCase(cp) || Character.isTitleCase(cp);
            b.appendCodePoint(previousCased ? Character.toLowerCase(cp) : Character.toTitleCase(cp));
            previousCased = cased;
            i += Character.charCount(cp);
        }
        return b.toString();
    }

    /** {@code s.capitalize()}: the first character title-cased, the rest lower-cased. */
    public static String capitalize(String s) {
        if (s.isEmpty()) {
            return s;
        }
        int first = s.codePointAt(0);
        return new StringBuilder()
                .appendCodePoint(Character.toTitleCase(first))
                .append(s.substring(Character.charCount(first)).toLowerCase(java.util.Locale.ROOT))
                .toString();
    }

    /** The number of code points: Python's {@code len(s)}. */
    public static int length(String s) {
        return s.codePointCount(0, s.length());
    }

    /** {@code s[start:stop:step]} on code points, with Python's clamping; null bounds are omitted ones. */
    public static String slice(String s, Long start, Long stop, Long step) {
        int[] cps = s.codePoints().toArray();
        StringBuilder b = new StringBuilder();
        for (int i : PySlices.indices(cps.length, start, stop, step)) {
            b.appendCodePoint(cps[i]);
        }
        return b.toString();
    }
}
