package io.kvprefix.opstream.internal;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The strict JSON tokenizer under the op-stream parser: RFC 8259 checked byte by byte over one line
 * ({@code b[lineStart .. end)}), with nothing allowed that the RFC does not allow. It scans numbers
 * from their digits (never through {@code double} or {@code BigInteger}), validates UTF-8 everywhere
 * (also inside strings it only skips), unescapes strings without allocating when they have no
 * escapes, skips whole values iteratively up to {@link #MAX_NESTING} levels, and explains every
 * malformed byte in a one-line {@link Malformed} message that names its column.
 *
 * <p>It knows JSON, not the op-stream format: {@link LineFields} drives it and reads the results of
 * the last scan from its package-private fields (the number's sign, magnitude and kind, the string's
 * bytes, the key's bytes), which are valid until the next scan.
 *
 * <p>Thread-safety: not thread-safe (per-line scratch state); one lexer per parser.
 */
final class JsonLexer {
    /** How deep arrays and objects may nest inside a skipped value. */
    static final int MAX_NESTING = 512;

    /** What {@link #valueKind()} consumed. */
    static final int V_NUMBER = 0, V_NULL = 1, V_OTHER = 2;

    private static final byte[] TRUE = ascii("true"), FALSE = ascii("false"), NULL = ascii("null");
    /** A string buffer that grew past this is dropped after the line. */
    private static final int SHRINK_ABOVE = 1 << 20;

    // ------------------------------------------------------------------ the line

    byte[] b;
    int lineStart;
    int pos;
    int end;

    // ------------------------------------------------------------------ results of the last scan

    /** The last number scanned: sign, magnitude (unsigned), too big for 64 bits, has no fraction/exponent. */
    boolean numNeg;

    long numMag;
    boolean numBig;
    boolean numInt;
    int numStart;
    /** What the last non-number, non-null value was ("a string", ...). */
    String otherType;

    /** The last string scanned: its raw content b[strStart, strEnd) when it had no escapes, else strBuf[0, strLen). */
    int strStart;

    int strEnd;
    byte[] strBuf = new byte[256];
    int strLen;
    /** The last key read by {@link #key()}: keyArr[keyOff, keyOff + keyLen). */
    byte[] keyArr;

    int keyOff;
    int keyLen;

    private final byte[] nest = new byte[MAX_NESTING];

    /** Starts on the line {@code line[offset .. offset+length)}. */
    void reset(byte[] line, int offset, int length) {
        b = line;
        lineStart = offset;
        pos = offset;
        end = offset + length;
    }

    /** Forgets the line (the caller's bytes are not kept) and drops an oversized string buffer. */
    void release() {
        b = null;
        keyArr = null;
        if (strBuf.length > SHRINK_ABOVE) {
            strBuf = new byte[256];
        }
    }

    // ------------------------------------------------------------------ structure

    /** Reads an object key at pos (which must be a '"') into keyArr/keyOff/keyLen. */
    void key() {
        if (b[pos] != '"') {
            throw keyExpected();
        }
        if (string(true)) {
            keyArr = b;
            keyOff = strStart;
            keyLen = strEnd - strStart;
        } else {
            keyArr = strBuf;
            keyOff = 0;
            keyLen = strLen;
        }
    }

    /** The index of the last key in {@code names}, or -1. */
    int find(byte[][] names) {
        for (int i = 0; i < names.length; i++) {
            byte[] n = names[i];
            if (n.length == keyLen && Arrays.equals(keyArr, keyOff, keyOff + keyLen, n, 0, n.length)) {
                return i;
            }
        }
        return -1;
    }

    /** The ':' after a key, and the whitespace around it; pos ends at the value. */
    void colon() {
        skipWs();
        int c = next("':'");
        if (c != ':') {
            throw unexpected(pos - 1, "':' after a field name");
        }
        skipWs();
        peek("a value");
    }

    private Malformed keyExpected() {
        int c = b[pos];
        if (c == '}') {
            return bad(pos, "expected a field name, found '}' (a trailing comma is not JSON)");
        }
        if (c == '\'') {
            return bad(pos, "field names need double quotes (single quotes are not JSON)");
        }
        if (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$') {
            return bad(pos, "field names must be double-quoted strings (unquoted names are not JSON)");
        }
        return unexpected(pos, "a field name");
    }

    /** After an array element: true if a ',' follows (pos at the next element), false at ']' (consumed). */
    boolean arrayNext() {
        skipWs();
        int c = next("',' or ']'");
        if (c == ',') {
            skipWs();
            peek("an array element");
            return true;
        }
        if (c == ']') {
            return false;
        }
        throw unexpected(pos - 1, "',' or ']' in an array");
    }

    /**
     * Consumes the value at pos: a number is scanned (V_NUMBER), null consumed (V_NULL), anything
     * else checked and skipped with its type in otherType (V_OTHER). Malformed JSON throws.
     */
    int valueKind() {
        int c = b[pos];
        if (c == '-' || c >= '0' && c <= '9') {
            scanNumber();
            return V_NUMBER;
        }
        if (c == 'n') {
            literal(NULL);
            return V_NULL;
        }
        otherType = switch (c) {
            case '"' -> "a string";
            case 't', 'f' -> "a boolean";
            case '[' -> "an array";
            case '{' -> "an object";
            default -> null;
        };
        skipValue(); // throws for anything that is not a JSON value
        return V_OTHER;
    }

    /** Checks and skips the JSON value at pos, iteratively (nesting up to {@link #MAX_NESTING}). */
    void skipValue() {
        int depth = 0;
        while (true) {
            int c = b[pos];
            if (c == '{' || c == '[') {
                if (depth == MAX_NESTING) {
                    throw bad(pos, "arrays and objects nest deeper than " + MAX_NESTING);
                }
                byte close = (byte) (c == '{' ? '}' : ']');
                nest[depth++] = close;
                pos++;
                skipWs();
                if (peek(c == '{' ? "a field name or '}'" : "a value or ']'") == close) {
                    pos++;
                    depth--;
                } else {
                    if (c == '{') {
                        key();
                        colon();
                    }
                    continue; // at the first member's value
                }
            } else if (c == '"') {
                string(false);
            } else if (c == '-' || c >= '0' && c <= '9') {
                scanNumber();
            } else if (c == 't') {
                literal(TRUE);
            } else if (c == 'f') {
                literal(FALSE);
            } else if (c == 'n') {
                literal(NULL);
            } else {
                throw unexpected(pos, "a value");
            }
            depth = nextMember(depth); // a complete value: close containers or move to the next member
            if (depth == 0) {
                return;
            }
        }
    }

    /**
     * After a complete value inside {@code depth} open containers: closes those that end here and moves
     * to the next member's value; the depth left (0: the outermost value is complete).
     */
    private int nextMember(int depth) {
        while (depth > 0) {
            skipWs();
            byte close = nest[depth - 1];
            int d = next(close == '}' ? "',' or '}'" : "',' or ']'");
            if (d == close) {
                depth--;
                continue;
            }
            if (d != ',') {
                throw unexpected(pos - 1, close == '}' ? "',' or '}' in an object" : "',' or ']' in an array");
            }
            skipWs();
            if (close == '}') {
                peek("a field name");
                key();
                colon();
            } else {
                peek("a value");
            }
            return depth;
        }
        return 0;
    }

    // ------------------------------------------------------------------ numbers and literals

    /** Scans a JSON number at pos into numNeg/numMag/numBig/numInt. */
    void scanNumber() {
        numStart = pos;
        boolean neg = false;
        if (b[pos] == '-') {
            neg = true;
            pos++;
            if (pos == end || b[pos] < '0' || b[pos] > '9') {
                if (pos < end && b[pos] == 'I') {
                    throw bad(numStart, "-Infinity is not JSON");
                }
                throw bad(numStart, "'-' must be followed by a digit");
            }
        }
        long mag = 0;
        boolean big = false;
        if (b[pos] == '0') {
            pos++;
            if (pos < end && b[pos] >= '0' && b[pos] <= '9') {
                throw bad(numStart, "numbers with leading zeros are not JSON");
            }
        } else {
            int digits = 0;
            int p = pos;
            while (p < end) {
                int d = b[p] - '0';
                if (d < 0 || d > 9) {
                    break;
                }
                if (digits < 19) { // 19 digits stay below 2^64: exact as an unsigned long
                    mag = mag * 10 + d;
                } else if (digits == 19
                        && (Long.compareUnsigned(mag, 1844674407370955161L) < 0
                                || mag == 1844674407370955161L && d <= 5)) {
                    mag = mag * 10 + d; // at most 18446744073709551615
                } else {
                    big = true;
                }
                digits++;
                p++;
            }
            pos = p;
        }
        boolean integer = !scanFractionAndExponent();
        numNeg = neg;
        numMag = mag;
        numBig = big;
        numInt = integer;
    }

    /** Scans a number's fraction and exponent at pos, if it has them; true if it had either. */
    private boolean scanFractionAndExponent() {
        boolean either = false;
        if (pos < end && b[pos] == '.') {
            pos++;
            if (skipDigits() == 0) {
                throw bad(pos, "a '.' in a number must be followed by a digit");
            }
            either = true;
        }
        if (pos < end && (b[pos] == 'e' || b[pos] == 'E')) {
            pos++;
            if (pos < end && (b[pos] == '+' || b[pos] == '-')) {
                pos++;
            }
            if (skipDigits() == 0) {
                throw bad(pos, "an exponent must have digits");
            }
            either = true;
        }
        return either;
    }

    private int skipDigits() {
        int p = pos;
        while (p < end && b[p] >= '0' && b[p] <= '9') {
            p++;
        }
        int n = p - pos;
        pos = p;
        return n;
    }

    /** The text of the last number scanned, shortened past 48 characters, for messages. */
    String numberText() {
        int n = pos - numStart;
        return n <= 48
                ? new String(b, numStart, n, StandardCharsets.ISO_8859_1)
                : new String(b, numStart, 45, StandardCharsets.ISO_8859_1) + "...";
    }

    private void literal(byte[] word) {
        if (end - pos >= word.length && Arrays.equals(b, pos, pos + word.length, word, 0, word.length)) {
            pos += word.length;
            return;
        }
        throw bad(pos, "invalid literal (JSON has only true, false and null, in lower case)");
    }

    // ------------------------------------------------------------------ strings

    /**
     * Checks the string starting at pos (the opening quote) and moves past its closing quote.
     * Returns true if it had no escapes: its content is then b[strStart, strEnd). Otherwise returns
     * false and, if {@code decode}, the unescaped UTF-8 content is in strBuf[0, strLen).
     */
    boolean string(boolean decode) {
        int open = pos;
        int p = pos + 1;
        while (true) { // fast path: plain ASCII
            if (p >= end) {
                throw bad(open, "unterminated string");
            }
            int c = b[p];
            if (c == '"') {
                strStart = open + 1;
                strEnd = p;
                pos = p + 1;
                return true;
            }
            if (c == '\\' || c < 0x20) { // negative bytes (>= 0x80) are below 0x20 too
                break;
            }
            p++;
        }
        return escapedString(open, p, decode);
    }

    /**
     * The rest of {@link #string} from {@code p}, the first byte the fast path did not take (an escape,
     * a control character or a non-ASCII byte); decoding into strBuf, whose length so far is strLen.
     */
    private boolean escapedString(int open, int p, boolean decode) {
        if (decode) {
            strLen = p - (open + 1);
            ensureStrBuf(strLen + 16);
            System.arraycopy(b, open + 1, strBuf, 0, strLen);
        }
        boolean escaped = false;
        while (true) {
            if (p >= end) {
                throw bad(open, "unterminated string");
            }
            int c = b[p] & 0xFF;
            if (decode) {
                ensureStrBuf(strLen + 4);
            }
            if (c == '"') {
                pos = p + 1;
                if (!escaped) {
                    strStart = open + 1;
                    strEnd = p;
                    return true;
                }
                return false;
            }
            if (c == '\\') {
                escaped = true;
                p = escape(open, p, decode);
                continue;
            }
            if (c < 0x20) {
                throw bad(p, "control character " + hexByte(c) + " in a string (it must be escaped)");
            }
            if (c < 0x80) {
                if (decode) {
                    strBuf[strLen++] = (byte) c;
                }
                p++;
                continue;
            }
            int len = Utf8.sequenceLength(b, p, end);
            if (len < 0) {
                throw bad(p, "invalid UTF-8");
            }
            if (decode) {
                System.arraycopy(b, p, strBuf, strLen, len);
                strLen += len;
            }
            p += len;
        }
    }

    /** Reads the escape at {@code p} (a backslash) of the string opened at {@code open}; the position after it. */
    private int escape(int open, int p, boolean decode) {
        if (p + 1 >= end) {
            throw bad(open, "unterminated string");
        }
        int e = b[p + 1];
        int out = switch (e) {
            case '"' -> '"';
            case '\\' -> '\\';
            case '/' -> '/';
            case 'b' -> '\b';
            case 'f' -> '\f';
            case 'n' -> '\n';
            case 'r' -> '\r';
            case 't' -> '\t';
            case 'u' -> -1;
            default ->
                throw bad(p, "invalid escape in a string (JSON allows \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
        };
        if (out >= 0) {
            if (decode) {
                strBuf[strLen++] = (byte) out;
            }
            return p + 2;
        }
        int cp = hex4(p + 2);
        int at = p;
        p += 6;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            int lo = p + 1 < end && b[p] == '\\' && b[p + 1] == 'u' ? hex4(p + 2) : -1;
            if (lo < 0xDC00 || lo > 0xDFFF) {
                throw bad(at, "unpaired UTF-16 surrogate escape in a string");
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            p += 6;
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            throw bad(at, "unpaired UTF-16 surrogate escape in a string");
        }
        if (decode) {
            strLen = Utf8.append(strBuf, strLen, cp);
        }
        return p;
    }

    private int hex4(int p) {
        if (p + 4 > end) {
            throw bad(p - 2, "truncated \\u escape in a string");
        }
        int v = 0;
        for (int i = 0; i < 4; i++) {
            int c = b[p + i];
            int d = c >= '0' && c <= '9'
                    ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (d < 0) {
                throw bad(p - 2, "a \\u escape needs 4 hex digits");
            }
            v = v << 4 | d;
        }
        return v;
    }

    private void ensureStrBuf(int n) {
        if (n > strBuf.length) {
            strBuf = Arrays.copyOf(strBuf, Math.max(n, strBuf.length * 2));
        }
    }

    // ------------------------------------------------------------------ low level

    void skipWs() {
        int p = pos;
        while (p < end) {
            int c = b[p];
            if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
                break;
            }
            p++;
        }
        pos = p;
    }

    /** The byte at pos (not consumed); throws if the line ends here. */
    int peek(String expected) {
        if (pos >= end) {
            throw bad(pos, "the line ends where " + expected + " was expected (truncated?)");
        }
        return b[pos];
    }

    /** The byte at pos, consumed; throws if the line ends here. */
    int next(String expected) {
        int c = peek(expected);
        pos++;
        return c;
    }

    /** Why a line whose first non-blank byte (at pos) is not '{' is not a JSON object. */
    String notAnObject() {
        int c = b[pos];
        String what = switch (c) {
            case '[' -> "an array";
            case '"' -> "a string";
            case 't' -> startsWith(pos, "true") ? "a boolean" : null;
            case 'f' -> startsWith(pos, "false") ? "a boolean" : null;
            case 'n' -> startsWith(pos, "null") ? "null" : null;
            default ->
                c == '-' && pos + 1 < end && b[pos + 1] >= '0' && b[pos + 1] <= '9' || c >= '0' && c <= '9'
                        ? "a number"
                        : null;
        };
        if (what != null) {
            return "the line must be a JSON object, but it starts with " + what;
        }
        return unexpected(pos, "a JSON object '{'").getMessage();
    }

    /** An error for the unexpected byte at p, with a hint for the usual non-JSON habits. */
    Malformed unexpected(int p, String expected) {
        int c = b[p] & 0xFF;
        if (c >= 0x80) {
            int len = Utf8.sequenceLength(b, p, end);
            if (len < 0) {
                return bad(p, "invalid UTF-8");
            }
            int cp = new String(b, p, len, StandardCharsets.UTF_8).codePointAt(0);
            return bad(p, "expected " + expected + ", found U+" + String.format("%04X", cp));
        }
        String hint = JsonHints.hint(b, p, end, lineStart);
        String found = c >= 0x20 && c < 0x7F ? "'" + (char) c + "'" : hexByte(c);
        return bad(p, "expected " + expected + ", found " + found + hint);
    }

    private boolean startsWith(int p, String word) {
        return JsonHints.startsWith(b, p, end, word);
    }

    private static String hexByte(int c) {
        return String.format("byte 0x%02X", c);
    }

    /** A malformed line, the problem at {@code b[p]}. */
    Malformed bad(int p, String message) {
        return new Malformed("column " + (p - lineStart + 1) + ": " + message);
    }

    static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * A line that is not one strict JSON object; carries only its message (no stack trace: it is
     * control flow, not a bug). Thread-safety: immutable.
     */
    static final class Malformed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Malformed(String message) {
            super(message, null, false, false);
        }
    }
}
