package io.kvprefix.opstream.internal;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The hints {@link JsonLexer} adds to an "expected X, found Y" message for the usual habits that are
 * not JSON: single quotes, comments, NaN and Infinity, a leading '+' or '.', a trailing comma.
 *
 * <p>Thread-safety: stateless.
 */
final class JsonHints {
    private JsonHints() {}

    /** The hint for the unexpected byte {@code b[p]} of the line starting at {@code lineStart}, or "". */
    static String hint(byte[] b, int p, int end, int lineStart) {
        int c = b[p] & 0xFF;
        if (c == '\'') {
            return " (single quotes are not JSON)";
        } else if (c == '/' || c == '#') {
            return " (comments are not JSON)";
        } else if (startsWith(b, p, end, "NaN") || startsWith(b, p, end, "Infinity")) {
            return " (NaN and Infinity are not JSON)";
        } else if (c == '+') {
            return " (a leading '+' is not JSON)";
        } else if (c == '.') {
            return " (a number must start with a digit)";
        } else if (c == '}' || c == ']') {
            int q = p - 1;
            while (q >= lineStart && (b[q] == ' ' || b[q] == '\t' || b[q] == '\r')) {
                q--;
            }
            if (q >= lineStart && b[q] == ',') {
                return " (a trailing comma is not JSON)";
            }
        }
        return "";
    }

    /** True if {@code b[p, end)} starts with the ASCII {@code word}. */
    static boolean startsWith(byte[] b, int p, int end, String word) {
        byte[] w = word.getBytes(StandardCharsets.US_ASCII);
        return end - p >= w.length && Arrays.equals(b, p, p + w.length, w, 0, w.length);
    }
}
